// The allocator's search on one node over already-classified candidates: pick one choice per
// request (firstAvailable order), a value per active matchAttribute constraint, and distinct
// devices for every request. A value per constraint is enough: all devices under a constraint
// must share one element of the attribute (a scalar is a one-element set), so trying each
// published value and matching devices to requests (augmenting paths) decides existence exactly,
// like the allocator's backtracking, in steps bounded by choices x values instead of device
// combinations.
// Devices that interact make the matching inexact: a device that allows multiple allocations (its
// capacity is shared) or one that consumes shared counters. When one of those is in play, the
// devices of a value are assigned by backtracking over them in order (a request's devices in
// increasing order, a shareable device reused across requests while its capacity lasts), with the
// same step budget.
// With a distinctAttribute constraint, an allocationMode All request under a constraint, a
// matchAttribute over list values with more than one element, or a derived attribute that fails on
// a candidate a constraint compares (where the allocator's answer depends on the order it tries
// devices in), the search is the allocator's own: its order and its constraint bookkeeping
// (constraint.go), with no value picked beforehand (see Searcher::run_literal).
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "topoguard/cel/value.h"
#include "topoguard/cluster/cluster_state.h"

namespace topoguard::cluster::search {

// An amount taken from one shared resource (a capacity of a shareable device, or a counter of a
// counter set): indexes into Sharing::available.
struct Use {
  std::size_t resource = 0;
  cel::Quantity amount = cel::Quantity::from_integer(0);
};

struct Choice {
  std::string label;  // "gpu" or "gpu/sub"
  bool all = false;   // allocationMode All
  std::size_t count = 1;
  std::vector<std::size_t> definite;  // device indexes whose selectors are all true
  std::vector<std::size_t> maybe;     // device indexes that may match
  // allocationMode All: a device it would take is tainted or held, so it cannot be satisfied
  // (`definite`), or might not be (`maybe`).
  bool blocked = false;
  bool maybe_blocked = false;
  // What taking a shareable device for this choice uses of its capacities, by device index.
  std::unordered_map<std::size_t, std::vector<Use>> uses = {};
  // Derived attributes (KEP-6080): by name, the value per candidate device. A constraint on that
  // name compares these values for this choice's devices, in place of the devices' own
  // attributes; a candidate missing from the map has no value for it.
  std::map<std::string, std::unordered_map<std::size_t, AttributeValue>, std::less<>> derived = {};
  // By name, the candidates whose derived value is an error: the allocator evaluates it when a
  // constraint on that name first compares the device for this choice, and the error aborts the
  // allocation there (lookupAttribute); a device the search never compares fails nothing.
  std::map<std::string, std::unordered_set<std::size_t>, std::less<>> derived_errors = {};
};

struct Request {
  std::vector<Choice> choices;  // one, or the firstAvailable subrequests in order
};

struct Constraint {
  std::string attribute;
  // (request index, choice index); a choice index of kAnyChoice covers every choice.
  std::vector<std::pair<std::size_t, std::size_t>> covers;
  // distinctAttribute: a device's value must be disjoint from the value of every device the
  // constraint holds (Searcher::run_literal), instead of all values sharing one element
  // (matchAttribute).
  bool distinct = false;
  std::string pointer = {};  // where the claim has it (/.../devices/constraints/<i>)
  static constexpr std::size_t kAnyChoice = static_cast<std::size_t>(-1);

  [[nodiscard]] bool covers_choice(std::size_t request, std::size_t choice) const;
};

// Which devices count as candidates. kOptimistic: may-match devices match, and an All request
// takes the fewest devices it could (so "not found" is certain); kPessimistic: may-match devices
// do not serve counted requests, and All requests must accept every device they might take (so
// "found" is certain).
enum class Scenario { kOptimistic, kPessimistic };

// What devices share beyond the claim: the resources' remaining amounts, the devices that allow
// multiple allocations, and the counters each device takes the first time it is allocated
// (nothing for a shareable device that already holds an allocation: it paid them).
struct Sharing {
  std::vector<cel::Quantity> available;
  std::unordered_set<std::size_t> multiple;
  std::unordered_map<std::size_t, std::vector<Use>> counters;
  // Assign devices as if none interacted (for diagnosis: does sharing decide the answer?):
  // no distinctAttribute, capacity or counters; shareable devices are shared without limit.
  bool ignore = false;
};

enum class Outcome { kFound, kNotFound, kBoundHit };

struct SearchResult {
  Outcome outcome = Outcome::kNotFound;
  // The allocator's search (run_literal) over devices that may match: which of them really are
  // candidates changes the order it tries devices in, and with it the answer, so neither kFound
  // (pessimistic) nor kNotFound (optimistic) is certain.
  bool order_uncertain = false;
  // The allocator's search (run_literal) reached a device an allocationMode All request must
  // take and a constraint (by index) refused it, or a constraint compared a device whose derived
  // attribute fails (`derived_error`): the allocator's Allocate fails with an error.
  struct Abort {
    std::size_t request = 0;
    std::size_t choice = 0;
    std::size_t device = 0;
    std::size_t constraint = 0;
    bool derived_error = false;
  };
  std::optional<Abort> aborted;
  std::vector<std::size_t> choices;               // per request, when found
  std::vector<std::vector<std::size_t>> devices;  // per request, when found
  std::size_t steps = 0;
};

[[nodiscard]] SearchResult search(const DeviceList& devices,
                                  const std::vector<Request>& requests,
                                  const std::vector<Constraint>& constraints, Scenario scenario,
                                  std::size_t max_steps, const Sharing& sharing = {});

// What a constraint on `attribute` compares for device `index` (`device`) taken for `choice`:
// the choice's derived attribute of that name when it has one (nullptr when it has no value for
// the device), else the device's own attribute.
[[nodiscard]] const AttributeValue* value_of(const Device& device, std::size_t index,
                                             const Choice& choice, const std::string& attribute);

// Whether that value holds an element equal to `value` (same type), for callers counting
// devices per value.
[[nodiscard]] bool has_value(const Device& device, std::size_t index, const Choice& choice,
                             const std::string& attribute, AttributeValue::Type type,
                             const AttributeValue::Scalar& value);

}  // namespace topoguard::cluster::search
