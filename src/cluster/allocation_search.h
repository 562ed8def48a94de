// The allocator's search on one node over already-classified candidates: pick one choice per
// request (firstAvailable order), a value per active matchAttribute constraint, and distinct
// devices for every request. A value per constraint is enough: all devices under a constraint
// must share one element of the attribute (a scalar is a one-element set), so trying each
// published value and matching devices to requests (augmenting paths) decides existence exactly,
// like the allocator's backtracking, in steps bounded by choices x values instead of device
// combinations.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "topoguard/cluster/cluster_state.h"

namespace topoguard::cluster::search {

struct Choice {
  std::string label;  // "gpu" or "gpu/sub"
  bool all = false;   // allocationMode All
  std::size_t count = 1;
  std::vector<std::size_t> definite;  // device indexes whose selectors are all true
  std::vector<std::size_t> maybe;     // device indexes that may match
};

struct Request {
  std::vector<Choice> choices;  // one, or the firstAvailable subrequests in order
};

struct Constraint {
  std::string attribute;
  // (request index, choice index); a choice index of kAnyChoice covers every choice.
  std::vector<std::pair<std::size_t, std::size_t>> covers;
  static constexpr std::size_t kAnyChoice = static_cast<std::size_t>(-1);

  [[nodiscard]] bool covers_choice(std::size_t request, std::size_t choice) const;
};

// Which devices count as candidates. kOptimistic: may-match devices match, and an All request
// takes the fewest devices it could (so "not found" is certain); kPessimistic: may-match devices
// do not serve counted requests, and All requests must accept every device they might take (so
// "found" is certain).
enum class Scenario { kOptimistic, kPessimistic };

enum class Outcome { kFound, kNotFound, kBoundHit };

struct SearchResult {
  Outcome outcome = Outcome::kNotFound;
  std::vector<std::size_t> choices;               // per request, when found
  std::vector<std::vector<std::size_t>> devices;  // per request, when found
  std::size_t steps = 0;
};

[[nodiscard]] SearchResult search(const std::vector<Device>& devices,
                                  const std::vector<Request>& requests,
                                  const std::vector<Constraint>& constraints, Scenario scenario,
                                  std::size_t max_steps);

// The element `device` publishes for `attribute` that equals `value` (same type), for callers
// counting devices per value.
[[nodiscard]] bool has_value(const Device& device, const std::string& attribute,
                             AttributeValue::Type type, const AttributeValue::Scalar& value);

}  // namespace topoguard::cluster::search
