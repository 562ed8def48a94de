#include "allocation_search.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

namespace topoguard::cluster::search {

namespace {

struct TypedValue {
  AttributeValue::Type type;
  AttributeValue::Scalar value;

  friend bool operator==(const TypedValue&, const TypedValue&) = default;
};

// What one request takes under one scenario, once its choice is fixed.
struct Take {
  bool all = false;  // every device of `devices` is taken
  std::size_t need = 0;
  const std::vector<std::size_t>* primary = nullptr;    // candidates
  const std::vector<std::size_t>* secondary = nullptr;  // more candidates (may-match), or null
  bool impossible = false;  // the scenario already rules this choice out

  template <typename Fn>
  void for_each(Fn&& fn) const {
    for (std::size_t index : *primary) {
      fn(index);
    }
    if (secondary != nullptr) {
      for (std::size_t index : *secondary) {
        fn(index);
      }
    }
  }
  [[nodiscard]] std::size_t size() const {
    return primary->size() + (secondary != nullptr ? secondary->size() : 0);
  }
};

Take take_of(const Choice& choice, Scenario scenario) {
  Take take;
  take.primary = &choice.definite;
  if (!choice.all) {
    take.need = choice.count;
    if (scenario == Scenario::kOptimistic) {
      take.secondary = &choice.maybe;
    }
    return take;
  }
  if (scenario == Scenario::kPessimistic) {
    // Every device it might take must be acceptable, and it must surely take at least one.
    take.all = true;
    take.secondary = &choice.maybe;
    take.impossible = choice.definite.empty() || choice.blocked || choice.maybe_blocked;
    return take;
  }
  if (choice.blocked) {
    take.impossible = true;  // it surely takes a device it cannot have
    return take;
  }
  if (!choice.definite.empty()) {
    take.all = true;  // the fewest devices it can take: the sure ones
    return take;
  }
  // No sure device: at best it takes a single may-match device; with none it is not satisfied.
  take.primary = &choice.maybe;
  take.need = 1;
  take.impossible = choice.maybe.empty();
  return take;
}

class Searcher {
 public:
  Searcher(const DeviceList& devices, const std::vector<Request>& requests,
           const std::vector<Constraint>& constraints, Scenario scenario, std::size_t max_steps,
           const Sharing& sharing)
      : devices_(devices),
        requests_(requests),
        constraints_(constraints),
        scenario_(scenario),
        max_steps_(max_steps),
        sharing_(sharing) {}

  SearchResult run() {
    chosen_.assign(requests_.size(), 0);
    if (requests_.empty()) {
      result_.outcome = Outcome::kFound;
      return std::move(result_);
    }
    if (!sharing_.ignore && order_dependent()) {
      return run_literal();
    }
    // Choices in firstAvailable order, the last request varying fastest, as the allocator
    // backtracks.
    while (true) {
      if (try_choices()) {
        result_.outcome = Outcome::kFound;
        result_.choices = chosen_;
        return std::move(result_);
      }
      if (bound_hit_) {
        result_.outcome = Outcome::kBoundHit;
        return std::move(result_);
      }
      std::size_t r = requests_.size();
      while (r > 0) {
        --r;
        if (++chosen_[r] < requests_[r].choices.size()) {
          break;
        }
        chosen_[r] = 0;
        if (r == 0) {
          result_.outcome = Outcome::kNotFound;
          return std::move(result_);
        }
      }
    }
  }

 private:
  struct Active {
    const Constraint* constraint;
    std::vector<std::size_t> requests;
    std::vector<TypedValue> values;
  };

  // What a constraint on `attribute` compares for `device` taken by request `r`'s chosen choice.
  const AttributeValue* value(std::size_t r, std::size_t device,
                              const std::string& attribute) const {
    return value_of(devices_[device], device, requests_[r].choices[chosen_[r]], attribute);
  }

  bool step() {
    if (++result_.steps > max_steps_) {
      bound_hit_ = true;
      return false;
    }
    return true;
  }

  bool try_choices() {
    if (!step()) {
      return false;
    }
    takes_.clear();
    for (std::size_t r = 0; r < requests_.size(); ++r) {
      if (requests_[r].choices.empty()) {
        return false;  // a request with nothing to choose from is never satisfied
      }
      takes_.push_back(take_of(requests_[r].choices[chosen_[r]], scenario_));
      const Take& take = takes_.back();
      if (take.impossible || take.size() < take.need || (take.all && take.size() == 0)) {
        return false;
      }
    }
    active_.clear();
    for (const Constraint& constraint : constraints_) {
      Active active{&constraint, {}, {}};
      for (std::size_t r = 0; r < requests_.size(); ++r) {
        if (constraint.covers_choice(r, chosen_[r])) {
          active.requests.push_back(r);
        }
      }
      if (active.requests.empty() || constraint.distinct) {
        continue;  // distinctAttribute is decided by run_literal(), or ignored (Sharing::ignore)
      }
      // The common value must be one of the values of the smallest covered request.
      const std::size_t smallest = *std::min_element(
          active.requests.begin(), active.requests.end(),
          [&](std::size_t a, std::size_t b) { return takes_[a].size() < takes_[b].size(); });
      takes_[smallest].for_each([&](std::size_t index) {
        const AttributeValue* published = value(smallest, index, constraint.attribute);
        if (published == nullptr) {
          return;
        }
        for (const AttributeValue::Scalar& element : published->values) {
          TypedValue typed{published->type, element};
          if (std::find(active.values.begin(), active.values.end(), typed) ==
              active.values.end()) {
            active.values.push_back(std::move(typed));
          }
        }
      });
      if (active.values.empty()) {
        return false;  // no candidate publishes the attribute
      }
      active_.push_back(std::move(active));
    }
    coupled_ = std::any_of(takes_.begin(), takes_.end(), [&](const Take& take) {
      bool any = false;
      take.for_each([&](std::size_t index) { any = any || interacts(index); });
      return any;
    });
    picked_.assign(active_.size(), 0);
    while (true) {
      if (!step()) {
        return false;
      }
      if (try_values()) {
        return true;
      }
      std::size_t c = active_.size();
      while (true) {
        if (c == 0) {
          return false;
        }
        --c;
        if (++picked_[c] < active_[c].values.size()) {
          break;
        }
        picked_[c] = 0;
      }
    }
  }

  bool eligible(std::size_t request, std::size_t device) const {
    for (std::size_t c = 0; c < active_.size(); ++c) {
      const Active& active = active_[c];
      if (std::find(active.requests.begin(), active.requests.end(), request) ==
          active.requests.end()) {
        continue;
      }
      const TypedValue& wanted = active.values[picked_[c]];
      const AttributeValue* published = value(request, device, active.constraint->attribute);
      if (published == nullptr || published->type != wanted.type ||
          !published->contains(wanted.value)) {
        return false;
      }
    }
    return true;
  }

  // Whether `device` may be shared between requests or takes counters.
  bool interacts(std::size_t device) const {
    return sharing_.multiple.count(device) != 0 || sharing_.counters.count(device) != 0;
  }

  bool try_values() {
    if (coupled_) {
      return assign_in_order();
    }
    reserved_.clear();
    for (std::size_t r = 0; r < takes_.size(); ++r) {
      const Take& take = takes_[r];
      if (!take.all) {
        continue;
      }
      bool ok = true;
      take.for_each([&](std::size_t index) {
        // All takes every device; one the constraint rejects, or one another All request also
        // takes, makes the allocation fail.
        ok = ok && eligible(r, index) && reserved_.insert(index).second;
      });
      if (!ok) {
        return false;
      }
    }
    // Counted requests: slots to fill with distinct eligible devices not taken by All.
    slots_.clear();
    adjacency_.assign(takes_.size(), {});
    for (std::size_t r = 0; r < takes_.size(); ++r) {
      const Take& take = takes_[r];
      if (take.all) {
        continue;
      }
      take.for_each([&](std::size_t index) {
        if (reserved_.count(index) == 0 && eligible(r, index)) {
          adjacency_[r].push_back(index);
        }
      });
      if (adjacency_[r].size() < take.need) {
        return false;
      }
      slots_.insert(slots_.end(), take.need, r);
    }
    owner_.clear();
    for (std::size_t slot = 0; slot < slots_.size(); ++slot) {
      visited_.clear();
      if (!augment(slot)) {
        return false;
      }
    }
    result_.devices.assign(takes_.size(), {});
    for (std::size_t r = 0; r < takes_.size(); ++r) {
      if (takes_[r].all) {
        takes_[r].for_each([&](std::size_t index) { result_.devices[r].push_back(index); });
      }
    }
    for (const auto& [device, slot] : owner_) {
      result_.devices[slots_[slot]].push_back(device);
    }
    for (std::vector<std::size_t>& taken : result_.devices) {
      std::sort(taken.begin(), taken.end());
    }
    return true;
  }

  // The allocator's way, for devices that interact: requests in order, each request's devices
  // in increasing order of its candidates, every device checked against what is taken so far.
  bool assign_in_order() {
    candidates_.assign(takes_.size(), {});
    for (std::size_t r = 0; r < takes_.size(); ++r) {
      bool rejected = false;
      takes_[r].for_each([&](std::size_t index) {
        if (eligible(r, index)) {
          candidates_[r].push_back(index);
        } else {
          rejected = rejected || takes_[r].all;  // All takes a device the constraint rejects
        }
      });
      if (rejected) {
        return false;
      }
      if (candidates_[r].size() < (takes_[r].all ? 1 : takes_[r].need)) {
        return false;
      }
    }
    taken_.clear();
    taken_count_.clear();
    used_.assign(sharing_.available.size(), cel::Quantity::from_integer(0));
    if (!assign(0, 0, 0)) {
      return false;
    }
    result_.devices.assign(takes_.size(), {});
    for (const auto& [request, device] : taken_) {
      result_.devices[request].push_back(device);
    }
    for (std::vector<std::size_t>& taken : result_.devices) {
      std::sort(taken.begin(), taken.end());
    }
    return true;
  }

  // Fills device `slot` of request `r`, trying its candidates from position `from`.
  bool assign(std::size_t r, std::size_t slot, std::size_t from) {
    if (r == takes_.size()) {
      return true;
    }
    const Take& take = takes_[r];
    const std::size_t need = take.all ? candidates_[r].size() : take.need;
    if (slot == need) {
      return assign(r + 1, 0, 0);
    }
    if (!step()) {
      return false;
    }
    const std::vector<std::size_t>& candidates = candidates_[r];
    // All takes exactly its devices, in order; a count picks any later candidate.
    const std::size_t last = take.all ? slot + 1 : candidates.size();
    for (std::size_t position = take.all ? slot : from; position < last; ++position) {
      const std::size_t device = candidates[position];
      if (!take_device(r, device)) {
        continue;
      }
      if (assign(r, slot + 1, position + 1)) {
        return true;
      }
      release_device(r, device);
      if (bound_hit_) {
        return false;
      }
    }
    return false;
  }

  const std::vector<Use>* uses_of(std::size_t r, std::size_t device) const {
    const auto& uses = requests_[r].choices[chosen_[r]].uses;
    auto it = uses.find(device);
    return it == uses.end() ? nullptr : &it->second;
  }

  const std::vector<Use>* counters_of(std::size_t device) const {
    auto it = sharing_.counters.find(device);
    return it == sharing_.counters.end() ? nullptr : &it->second;
  }

  bool fits(const std::vector<Use>* uses) const {
    return uses == nullptr ||
           std::all_of(uses->begin(), uses->end(), [&](const Use& use) {
             return used_[use.resource].plus(use.amount).compare(
                        sharing_.available[use.resource]) <= 0;
           });
  }

  // The bookkeeping of a device taken by request r, once its constraints have accepted it.
  void record_take(std::size_t r, std::size_t device, const std::vector<Use>* uses,
                   const std::vector<Use>* counters) {
    apply(uses, true);
    apply(counters, true);
    ++taken_count_[device];
    taken_.emplace_back(r, device);
  }

  void apply(const std::vector<Use>* uses, bool add) {
    for (std::size_t i = 0; uses != nullptr && i < uses->size(); ++i) {
      const Use& use = (*uses)[i];
      used_[use.resource] = add ? used_[use.resource].plus(use.amount)
                                : used_[use.resource].minus(use.amount);
    }
  }

  bool take_device(std::size_t r, std::size_t device) {
    const std::size_t count = taken_count_[device];
    if (count > 0 && sharing_.multiple.count(device) == 0) {
      return false;  // a device that does not allow multiple allocations serves one request
    }
    // Ignoring interactions, a shareable device is still shared, but without limits.
    const std::vector<Use>* uses = sharing_.ignore ? nullptr : uses_of(r, device);
    const std::vector<Use>* counters =
        count == 0 && !sharing_.ignore ? counters_of(device) : nullptr;
    if (!fits(uses) || !fits(counters)) {
      return false;
    }
    record_take(r, device, uses, counters);
    return true;
  }

  void release_device(std::size_t r, std::size_t device) {
    taken_.pop_back();
    const std::size_t count = --taken_count_[device];
    apply(sharing_.ignore ? nullptr : uses_of(r, device), false);
    apply(count == 0 && !sharing_.ignore ? counters_of(device) : nullptr, false);
  }

  // Whether only the allocator's own search gives its answer: a distinctAttribute (its pairwise
  // comparison of every device held, restated in add(), has no value to fix beforehand as a
  // matchAttribute has); a constraint over an allocationMode All request (whether the allocator
  // aborts, when All must take a device the constraint refuses, depends on what it tried
  // before); a constraint over a derived attribute that fails on a candidate (whether the
  // allocator reaches that device, and aborts, depends on the same); or a
  // matchAttributeConstraint over lists, whose common elements narrow with every device (no
  // single value to fix beforehand either).
  bool order_dependent() const {
    for (const Constraint& constraint : constraints_) {
      if (constraint.covers.empty()) {
        continue;
      }
      if (constraint.distinct) {
        return true;
      }
      for (std::size_t r = 0; r < requests_.size(); ++r) {
        for (std::size_t c = 0; c < requests_[r].choices.size(); ++c) {
          if (!constraint.covers_choice(r, c)) {
            continue;
          }
          const Choice& choice = requests_[r].choices[c];
          if (choice.all || choice.derived_errors.contains(constraint.attribute)) {
            return true;
          }
          for (const auto* list : {&choice.definite, &choice.maybe}) {
            for (std::size_t index : *list) {
              const AttributeValue* published =
                  value_of(devices_[index], index, choice, constraint.attribute);
              if (published != nullptr && published->values.size() > 1) {
                return true;
              }
            }
          }
        }
      }
    }
    return false;
  }

  // The allocator's search, restated from allocateOne() and allocateDevice()
  // (structured/internal/experimental/allocator_experimental.go): requests in order; a request
  // tries its choices in firstAvailable order and, for each, fills its devices from the
  // candidates in the allocator's order, each later device of a request after the previous one;
  // allocationMode All takes its devices in that order and fails when one cannot be had. Taking
  // a device checks what it shares (capacity, counters), then runs every constraint in claim
  // order; when one refuses, those before it take the device back, and a refusal of a device All
  // must take is an allocation error. A device is taken back (every constraint's remove) when
  // what follows it fails.
  SearchResult run_literal() {
    result_.order_uncertain =
        std::any_of(requests_.begin(), requests_.end(), [](const Request& request) {
          return std::any_of(request.choices.begin(), request.choices.end(),
                             [](const Choice& choice) { return !choice.maybe.empty(); });
        });
    takes_.assign(requests_.size(), Take{});
    candidates_.assign(requests_.size(), {});
    states_.assign(constraints_.size(), ConstraintState{});
    taken_.clear();
    taken_count_.clear();
    used_.assign(sharing_.available.size(), cel::Quantity::from_integer(0));
    if (literal_request(0)) {
      result_.outcome = Outcome::kFound;
      result_.choices = chosen_;
      result_.devices.assign(requests_.size(), {});
      for (const auto& [request, device] : taken_) {
        result_.devices[request].push_back(device);
      }
      for (std::vector<std::size_t>& taken : result_.devices) {
        std::sort(taken.begin(), taken.end());
      }
    } else {
      result_.outcome = bound_hit_ ? Outcome::kBoundHit : Outcome::kNotFound;
    }
    return std::move(result_);
  }

  bool literal_request(std::size_t r) {
    if (r == requests_.size()) {
      return true;
    }
    for (std::size_t c = 0; c < requests_[r].choices.size(); ++c) {
      if (!step()) {
        return false;
      }
      chosen_[r] = c;
      const Choice& choice = requests_[r].choices[c];
      takes_[r] = take_of(choice, scenario_);
      const Take& take = takes_[r];
      // Too few candidates for a count: the allocator still tries them, and aborts if a
      // constraint compares one whose derived attribute fails.
      const bool short_of_devices = take.size() < take.need && choice.derived_errors.empty();
      if (take.impossible || short_of_devices || (take.all && take.size() == 0)) {
        continue;
      }
      std::vector<std::size_t>& candidates = candidates_[r];
      candidates.clear();
      take.for_each([&](std::size_t index) { candidates.push_back(index); });
      std::sort(candidates.begin(), candidates.end(),
                [&](std::size_t a, std::size_t b) { return allocator_order(a, b); });
      if (literal_device(r, 0, 0)) {
        return true;
      }
      if (bound_hit_ || aborted_) {
        return false;
      }
    }
    return false;
  }

  // Pools by driver and pool name, slices by name, devices as the slice lists them
  // (pools_experimental.go: sortPoolsByID, sortSlicesByName).
  bool allocator_order(std::size_t a, std::size_t b) const {
    const Device& left = devices_[a];
    const Device& right = devices_[b];
    return std::tie(left.driver, left.pool, left.slice, a) <
           std::tie(right.driver, right.pool, right.slice, b);
  }

  // Fills device `slot` of request `r` (its chosen choice) from candidate position `from` on.
  bool literal_device(std::size_t r, std::size_t slot, std::size_t from) {
    const Take& take = takes_[r];
    const std::vector<std::size_t>& candidates = candidates_[r];
    const std::size_t need = take.all ? candidates.size() : take.need;
    if (slot == need) {
      return literal_request(r + 1);
    }
    if (!step()) {
      return false;
    }
    // All takes exactly its devices, in order; a count tries every later candidate.
    const std::size_t first = take.all ? slot : from;
    const std::size_t last = take.all ? slot + 1 : candidates.size();
    for (std::size_t position = first; position < last; ++position) {
      const std::size_t device = candidates[position];
      if (!take_literal(r, device, take.all)) {
        if (aborted_) {
          return false;
        }
        continue;
      }
      if (literal_device(r, slot + 1, position + 1)) {
        return true;
      }
      release_literal(r, device);
      if (bound_hit_ || aborted_) {
        return false;
      }
    }
    return false;
  }

  // allocateDevice(): sharing first, then the constraints in claim order. `must` (All): a
  // constraint's refusal aborts the allocation; a derived attribute failing where a constraint
  // compares it aborts it always.
  bool take_literal(std::size_t r, std::size_t device, bool must) {
    if (taken_count_[device] > 0 && sharing_.multiple.count(device) == 0) {
      return false;
    }
    const std::vector<Use>* uses = uses_of(r, device);
    const std::vector<Use>* counters = taken_count_[device] == 0 ? counters_of(device) : nullptr;
    if (!fits(uses) || !fits(counters)) {
      return false;
    }
    for (std::size_t k = 0; k < constraints_.size(); ++k) {
      const bool derived_error = fails_derived(k, r, device);
      if (derived_error || !add(k, r, device)) {
        for (std::size_t e = 0; e < k; ++e) {
          remove(e, r);
        }
        if ((must || derived_error) && !aborted_) {
          aborted_ = true;
          result_.aborted = SearchResult::Abort{r, chosen_[r], device, k, derived_error};
        }
        return false;
      }
    }
    record_take(r, device, uses, counters);
    return true;
  }

  void release_literal(std::size_t r, std::size_t device) {
    for (std::size_t k = 0; k < constraints_.size(); ++k) {
      remove(k, r);
    }
    release_device(r, device);
  }

  // Whether constraint `k` compares `device` for request `r` through a derived attribute that
  // fails on it: lookupAttribute's error, before add() looks at any value.
  bool fails_derived(std::size_t k, std::size_t r, std::size_t device) const {
    const Constraint& constraint = constraints_[k];
    if (!constraint.covers_choice(r, chosen_[r])) {
      return false;
    }
    const auto& errors = requests_[r].choices[chosen_[r]].derived_errors;
    const auto failing = errors.find(constraint.attribute);
    return failing != errors.end() && failing->second.contains(device);
  }

  // constraint.go's add(): a device without the value is refused; the first device of a
  // constraint is always accepted. matchAttribute keeps, per device added, the elements every
  // device so far shares (v0.37.2's intersectionStack);
  // distinctAttribute (v0.37.2) keeps the value of every device it holds and refuses a device
  // whose value shares an element with any of them (pairwise distinct).
  bool add(std::size_t k, std::size_t r, std::size_t device) {
    const Constraint& constraint = constraints_[k];
    if (!constraint.covers_choice(r, chosen_[r])) {
      return true;
    }
    const AttributeValue* published = value(r, device, constraint.attribute);
    if (published == nullptr) {
      return false;
    }
    ConstraintState& state = states_[k];
    if (constraint.distinct) {
      if (state.devices > 0) {
        if (published->values.empty()) {
          return false;  // attributeAsSet: no type, so no set to compare
        }
        for (const AttributeValue* kept : state.held) {
          if (!kept->values.empty() && published->shares_element(*kept)) {
            return false;
          }
        }
      }
      state.held.push_back(published);
      ++state.devices;
      return true;
    }
    if (published->values.empty()) {
      return false;
    }
    if (state.devices == 0) {
      state.common.assign(1, *published);
    } else {
      if (!state.common.back().shares_element(*published)) {
        return false;
      }
      AttributeValue narrowed = state.common.back();
      std::erase_if(narrowed.values, [&](const AttributeValue::Scalar& element) {
        return !published->contains(element);
      });
      state.common.push_back(std::move(narrowed));
    }
    ++state.devices;
    return true;
  }

  // constraint.go's remove(): the device taken back is the last one added (devices are taken
  // back in reverse order): distinctAttribute drops its value, matchAttribute the intersection it
  // narrowed to.
  void remove(std::size_t k, std::size_t r) {
    const Constraint& constraint = constraints_[k];
    if (!constraint.covers_choice(r, chosen_[r])) {
      return;
    }
    ConstraintState& state = states_[k];
    if (constraint.distinct) {
      state.held.pop_back();
    } else {
      state.common.pop_back();
    }
    --state.devices;
  }

  // Kuhn's augmenting path: give `slot` a device, moving earlier slots to others if needed.
  bool augment(std::size_t slot) {
    for (std::size_t device : adjacency_[slots_[slot]]) {
      if (!visited_.insert(device).second) {
        continue;
      }
      auto it = owner_.find(device);
      if (it == owner_.end() || augment(it->second)) {
        owner_[device] = slot;
        return true;
      }
    }
    return false;
  }

  const DeviceList& devices_;
  const std::vector<Request>& requests_;
  const std::vector<Constraint>& constraints_;
  Scenario scenario_;
  std::size_t max_steps_;
  const Sharing& sharing_;
  bool bound_hit_ = false;
  bool aborted_ = false;  // run_literal(): All could not take a device (an allocation error)
  bool coupled_ = false;
  SearchResult result_;

  std::vector<std::size_t> chosen_;
  std::vector<Take> takes_;
  std::vector<Active> active_;
  // assign_in_order(): per request its eligible candidates; the devices taken, in order, with
  // their request; how often each device is taken; what is used of each shared resource.
  std::vector<std::vector<std::size_t>> candidates_;
  std::vector<std::pair<std::size_t, std::size_t>> taken_;
  std::unordered_map<std::size_t, std::size_t> taken_count_;
  std::vector<cel::Quantity> used_;
  std::vector<std::size_t> picked_;
  // run_literal(): each constraint's bookkeeping, as constraint.go keeps it.
  struct ConstraintState {
    std::size_t devices = 0;
    std::vector<AttributeValue> common;       // matchAttribute: shared elements, per device
    std::vector<const AttributeValue*> held;  // distinctAttribute: every device's, in order
  };
  std::vector<ConstraintState> states_;
  std::unordered_set<std::size_t> reserved_;
  std::vector<std::size_t> slots_;
  std::vector<std::vector<std::size_t>> adjacency_;
  std::unordered_map<std::size_t, std::size_t> owner_;  // device -> slot
  std::unordered_set<std::size_t> visited_;
};

}  // namespace

bool Constraint::covers_choice(std::size_t request, std::size_t choice) const {
  return std::any_of(covers.begin(), covers.end(), [&](const auto& cover) {
    return cover.first == request && (cover.second == kAnyChoice || cover.second == choice);
  });
}

const AttributeValue* value_of(const Device& device, std::size_t index, const Choice& choice,
                               const std::string& attribute) {
  const auto derived = choice.derived.find(attribute);
  if (derived == choice.derived.end()) {
    return device.attribute(attribute);
  }
  const auto found = derived->second.find(index);
  return found == derived->second.end() ? nullptr : &found->second;
}

bool has_value(const Device& device, std::size_t index, const Choice& choice,
               const std::string& attribute, AttributeValue::Type type,
               const AttributeValue::Scalar& value) {
  const AttributeValue* published = value_of(device, index, choice, attribute);
  return published != nullptr && published->type == type && published->contains(value);
}

SearchResult search(const DeviceList& devices, const std::vector<Request>& requests,
                    const std::vector<Constraint>& constraints, Scenario scenario,
                    std::size_t max_steps, const Sharing& sharing) {
  return Searcher(devices, requests, constraints, scenario, max_steps, sharing).run();
}

}  // namespace topoguard::cluster::search
