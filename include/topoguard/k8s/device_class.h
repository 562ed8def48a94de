// A DeviceClass (resource.k8s.io v1beta1, v1beta2, v1: the same spec), read in one place for the
// cluster state and the engine's inventory.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "topoguard/common/json.h"
#include "topoguard/common/result.h"

namespace topoguard::k8s {

struct DeviceClass {
  std::string name;
  std::vector<std::string> selectors;  // CEL expressions, all must match
  // Per selector, its index in spec.selectors (an entry without `cel` is not a selector here).
  std::vector<std::size_t> selector_positions;
  std::string extended_resource_name;
};

// Reads metadata.name and spec (selectors' CEL expressions, extendedResourceName); an error
// names the offending field. Expressions are not compiled here.
[[nodiscard]] Result<DeviceClass> read_device_class(const Json& object);

}  // namespace topoguard::k8s
