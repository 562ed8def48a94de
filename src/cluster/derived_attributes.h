// The value of a derived attribute (KEP-6080, DRADerivedAttributes, alpha in 1.37) for one
// device: the request's CEL expression evaluated with the `device` its selectors see, turned into
// the attribute value the allocator's constraints compare. Per the API documentation of
// DeviceDerivedAttribute, the value must be a string, int, bool or semver, or a list of one of
// them; any other type is an error, and an error aborts the allocation (unlike a selector that is
// false). Pure.
#pragma once

#include <string>

#include "topoguard/cel/cel.h"
#include "topoguard/cluster/cluster_state.h"

namespace topoguard::cluster::derived {

enum class State {
  kValue,    // `value` holds it
  kError,    // a CEL runtime error or a value of another type: the allocation fails
  kUnknown,  // not evaluated exactly (something unimplemented, a cost or memory limit)
};

struct Outcome {
  State state = State::kUnknown;
  AttributeValue value;
  std::string message;            // for kError and kUnknown
  bool budget_exhausted = false;  // kUnknown because `budget` ran out
};

// Evaluates `program` for `device`, charging `budget`.
[[nodiscard]] Outcome evaluate(const cel::Program& program, const cel::DeviceView& device,
                               cel::CostBudget& budget);

}  // namespace topoguard::cluster::derived
