// The CEL that decides, for one policy, what the engine's claim analysis decides
// (engine/claim_alignment.cpp): request roles from class names, ties by alignment and NUMA
// constraints with `requests`/subrequest coverage, NUMA pins, multi-device constraints, and
// derived attributes (which can make or break a tie, or override an alignment attribute).
// Variables in evaluation order, then one boolean per rule (true: the engine reports it).
//
// What the text of a selector or derived attribute cannot settle is computed both ways, as what
// surely holds and what may hold: a rule fires only when it fires either way, so the compiled
// policy never reports what the engine does not.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "topoguard/native/native_policy.h"
#include "topoguard/policy/policy.h"

namespace topoguard::native {

// Limits past which the compiled CEL decides nothing (the webhook does): they keep every
// expression's cost bound well under the API server's per-call limit.
inline constexpr int kMaxSelectorsExamined = 4;          // per request or subrequest
inline constexpr int kMaxSelectorLength = 256;           // characters
inline constexpr int kMaxPinSelectorLength = 64;         // a selector read as a NUMA pin
inline constexpr int kMaxDerivingRequests = 4;           // requests with derived attributes
inline constexpr int kMaxDerivedExamined = 4;            // per request or subrequest
inline constexpr int kMaxDerivedExpressionLength = 128;  // characters
// A claim with derived attributes is read exactly up to this many requests and constraints.
inline constexpr int kMaxDerivingClaimRequests = 8;

// One rule: a boolean that is true when the engine reports it, and a string message.
struct RuleCel {
  std::string reported;
  std::string message;
};

struct ClaimCel {
  std::vector<std::pair<std::string, std::string>> variables;  // name, expression
  RuleCel missing;                                             // missing-pcie-alignment
  RuleCel numa_only;                                           // numa-only-alignment
  RuleCel multi_device;                                        // multi-device-alignment
  RuleCel overridden;                                          // overridden-alignment-attribute
  // Fix conditions: the engine's verdict is surely / maybe numa-only (NUMA pins it cannot
  // read exactly), and the fix pairs exist.
  std::string only_numa_sure;
  std::string only_numa_maybe;
  std::string fixable;
  std::string fix_patch;           // JSONPatch list (without a condition)
  std::vector<std::string> notes;  // what this policy's CEL cannot see
};

[[nodiscard]] ClaimCel claim_cel(const policy::Policy& policy,
                                 const std::vector<DeviceClassRoles>& device_classes);

// A CEL string literal for `text`.
[[nodiscard]] std::string cel_quote(std::string_view text);

}  // namespace topoguard::native
