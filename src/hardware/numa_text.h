// How the node inventory's outputs write a device's NUMA node.
#pragma once

#include <optional>
#include <string>

namespace topoguard::hardware {

// The node's number, or "unknown" when sysfs did not say.
inline std::string numa_text(const std::optional<int>& numa_node) {
  return numa_node ? std::to_string(*numa_node) : std::string("unknown");
}

}  // namespace topoguard::hardware
