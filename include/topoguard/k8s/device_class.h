// A DeviceClass (resource.k8s.io v1beta1, v1beta2, v1: the same spec), read in one place for the
// cluster state and the engine's inventory, its selectors compiled once when it is read: checks
// and rules evaluate them without compiling.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "topoguard/cel/cel.h"
#include "topoguard/common/json.h"
#include "topoguard/common/result.h"

namespace topoguard::k8s {

struct DeviceClass {
  std::string name;
  std::vector<std::string> selectors;  // CEL expressions, all must match
  // Per selector, its index in spec.selectors (an entry without `cel` is not a selector here).
  std::vector<std::size_t> selector_positions;
  std::vector<cel::Program> programs;  // the selectors that compile, in order
  // Per selector that does not compile, its syntax error at /spec/selectors/<i>/cel/expression.
  std::vector<Error> selector_errors;
  std::string extended_resource_name;

  // Whether every selector compiles; if not, what the class matches is unknown.
  [[nodiscard]] bool selectors_readable() const { return selector_errors.empty(); }
};

// Reads metadata.name and spec (selectors' CEL expressions, compiled, and extendedResourceName);
// an error names the field the spec cannot be read at. A selector that does not compile is not
// such an error: it is kept in selector_errors.
[[nodiscard]] Result<DeviceClass> read_device_class(const Json& object);

}  // namespace topoguard::k8s
