// A count with its noun for messages: "1 node", "3 nodes".
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace topoguard {

// The noun takes an "s" unless the count is one (the nouns topoguard counts all do).
[[nodiscard]] inline std::string counted_noun(std::size_t count, std::string_view noun) {
  return std::to_string(count) + " " + std::string(noun) + (count == 1 ? "" : "s");
}

}  // namespace topoguard
