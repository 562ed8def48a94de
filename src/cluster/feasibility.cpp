#include "topoguard/cluster/feasibility.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "allocation_search.h"
#include "consumable_capacity.h"
#include "derived_attributes.h"
#include "selector_match.h"
#include "topoguard/cel/device_reads.h"
#include "topoguard/cluster/feasibility_cache.h"
#include "topoguard/common/counted_noun.h"
#include "topoguard/k8s/kinds.h"

namespace topoguard::cluster {

namespace {

// Why a device whose selectors match is still not one a request can get.
enum class Block : std::uint8_t {
  kNone,
  kTaint,     // a NoSchedule/NoExecute taint the request does not tolerate
  kHeld,      // allocated to another claim, not shareable
  kTooSmall,  // its capacity cannot hold the request (or the request names one it lacks)
  kUnknown,   // not judged exactly (capacity arithmetic, a pool whose counters do not resolve)
};

// One request choice with its selectors compiled and its match against every device.
struct ChoiceMatch {
  std::string label;
  const k8s::DeviceChoice* choice = nullptr;
  std::vector<Match> matches;  // per device of the state
  // Per device, for the allocations considered (see ClaimChecker::prepare).
  std::vector<Block> blocks;
  std::unordered_map<std::size_t, std::vector<search::Use>> uses;  // shareable devices
  // Per derived attribute of the choice, by device: its outcome, evaluated when a node first
  // needs it (derived values do not depend on allocations, so both passes share them).
  std::vector<std::unordered_map<std::size_t, derived::Outcome>> derived;
};

// What the derived attributes of a claim come to on one node.
struct DerivedOnNode {
  std::size_t evaluations = 0;  // charged to the node's step budget
  bool fails = false;           // an expression fails on a device a request may get
  bool unknown = false;         // a candidate's value is not known exactly
};

// The allocator's toleration test (resourceclaim.ToleratesTaint), as for core taints: an empty
// effect or key matches any; Exists matches any value, Equal (the default) the same value.
bool tolerates(const k8s::DeviceToleration& toleration, const DeviceTaint& taint) {
  if (!toleration.effect.empty() && toleration.effect != taint.effect) {
    return false;
  }
  if (!toleration.key.empty() && toleration.key != taint.key) {
    return false;
  }
  if (toleration.op == "Exists") {
    return true;
  }
  return toleration.op == "Equal" && toleration.value == taint.value;
}

// kTaint when a taint of the device keeps it from the choice, kUnknown when only taints that
// may not apply do, else kNone.
Block taint_block(const Device& device, const k8s::DeviceChoice& choice) {
  Block block = Block::kNone;
  for (const DeviceTaint& taint : device.taints()) {
    if (taint.prevents_allocation() &&
        std::none_of(choice.tolerations.begin(), choice.tolerations.end(),
                     [&](const k8s::DeviceToleration& t) { return tolerates(t, taint); })) {
      if (!taint.uncertain) {
        return Block::kTaint;
      }
      block = Block::kUnknown;
    }
  }
  return block;
}

std::string in_quotes(const std::string& text) { return "\"" + text + "\""; }

// The answer of a check that stopped when `budget` ran out.
ClaimFeasibility budget_exhausted_result(const StepBudget* budget) {
  ClaimFeasibility out;
  out.budget_exhausted = true;
  out.notes.push_back("the feasibility budget ran out after " + std::to_string(budget->spent()) +
                      " steps: the answer is unknown");
  return out;
}

// The nodes a check evaluates: every node on its own, or one node per group of nodes the claim
// cannot tell apart (node_groups()), whose answer stands for the group's.
struct Plan {
  std::vector<std::vector<std::size_t>> groups;  // node indexes, ascending; empty: node by node
  std::vector<std::size_t> group_of;             // per node index (with groups)
  std::vector<std::size_t> devices;              // the devices evaluated (with groups), ascending
  bool budget_exhausted = false;  // telling nodes apart would take more than the budget's steps
  // Attributes the selectors only compare with string literals tell devices (and nodes) apart by
  // the literals their values equal, not by the values (SelectorReads::by_literal).
  bool by_literal = false;
  // The selectors read per-node attributes (not only by literal): every device is judged, and
  // each group is split by what the claim's choices match on its nodes, position by position
  // (ClaimChecker::split_by_matches); `devices` is then every device.
  bool by_matches = false;
};

// Collects what selectors read, program by program, into SelectorReads.
class ReadsCollector {
 public:
  void add(const std::vector<cel::Program>& programs) {
    for (const cel::Program& program : programs) {
      add(program);
    }
  }

  void add(const cel::Program& program) {
    const cel::DeviceReads reads = cel::device_reads(program.root());
    for (const std::string& name : reads.attributes) {
      reads_.attributes.insert(name);
      const auto compared = reads.compared_to_literals.find(name);
      if (compared == reads.compared_to_literals.end()) {
        otherwise_.insert(name);
      } else {
        literals_[name].insert(compared->second.begin(), compared->second.end());
      }
    }
    reads_.domains.insert(reads.domains.begin(), reads.domains.end());
    reads_.all = reads_.all || reads.any_attribute;
  }

  // With `by_literal`, the attributes every selector only compares with string literals, and
  // none reads through its domain or as a whole, are in SelectorReads::by_literal.
  [[nodiscard]] SelectorReads reads(bool by_literal) const {
    SelectorReads out = reads_;
    if (!by_literal || out.all) {
      return out;
    }
    for (const auto& [name, literals] : literals_) {
      if (otherwise_.count(name) == 0 &&
          out.domains.count(std::string_view(name).substr(0, name.find('/'))) == 0) {
        out.by_literal.emplace(name, std::vector<std::string>(literals.begin(), literals.end()));
      }
    }
    return out;
  }

 private:
  SelectorReads reads_;
  AttributeNames otherwise_;  // read some other way by some selector
  std::map<std::string, std::set<std::string>, std::less<>> literals_;
};

// Whether selectors reading `reads` may read attribute `qualified`.
bool covers(const SelectorReads& reads, const std::string& qualified) {
  return reads.all || reads.attributes.count(qualified) != 0 ||
         reads.domains.count(std::string_view(qualified).substr(0, qualified.find('/'))) != 0;
}

// The longest literal of `reads.by_literal`: comparing a value with a literal costs CEL units
// for each ten bytes of the shorter of the two.
std::size_t longest_literal(const SelectorReads& reads) {
  std::size_t longest = 0;
  for (const auto& [name, literals] : reads.by_literal) {
    for (const std::string& literal : literals) {
      longest = std::max(longest, literal.size());
    }
  }
  return longest;
}

class ClaimChecker {
 public:
  ClaimChecker(const k8s::ClaimSpec& spec, const ClusterState& state,
               const FeasibilityOptions& options, Plan plan)
      : spec_(spec),
        state_(state),
        options_(options),
        plan_(std::move(plan)) {
    if (plan_.groups.empty()) {
      evaluated_nodes_.resize(state.nodes().size());
      std::iota(evaluated_nodes_.begin(), evaluated_nodes_.end(), std::size_t{0});
      devices_.resize(state.devices().size());
      std::iota(devices_.begin(), devices_.end(), std::size_t{0});
    } else {
      for (const auto& group : plan_.groups) {
        evaluated_nodes_.push_back(group.front());
      }
      devices_ = plan_.devices;
    }
  }

  // The selectors' cost came near CEL's per-call limit on a device told apart by literal
  // (Plan::by_literal), so devices that differ only in such a value may not all be judged alike:
  // the answer of run() is void, and the claim must be checked with by_literal off.
  [[nodiscard]] bool literal_guard_failed() const { return literal_guard_failed_; }

  ClaimFeasibility run() {
    std::size_t choice_count = 0;
    for (const k8s::DeviceRequest& request : spec_.requests) {
      choice_count += request.choices.size();
    }
    if (!charge(choice_count * devices_.size())) {
      return stopped();
    }
    match_choices();
    if (literal_guard_failed_) {
      return {};
    }
    if (plan_.by_matches) {
      split_by_matches();
    }
    build_constraints();
    if (state_.nodes().empty()) {
      notes_.insert("the cluster state holds no ResourceSlice for any node");
    }
    if (!state_.selector_devices().empty()) {
      notes_.insert("devices of slices with a node selector are not assigned to nodes");
    }
    const bool others_hold = options_.with_allocations && std::any_of(
        state_.allocations().begin(), state_.allocations().end(), [&](const Allocation& a) {
          return a.claim != options_.own_claim && state_.device_index(a.device).has_value();
        });
    evaluate(others_hold);
    if (stopped_) {
      return stopped();
    }
    if (others_hold && out_.verdict == Verdict::kUnsatisfiable && !out_.allocation_error) {
      // Would the same hardware hold it once the other claims are gone?
      ClaimFeasibility now = std::move(out_);
      out_ = ClaimFeasibility{};
      std::set<std::string> notes_now = notes_;
      evaluate(false);
      if (stopped_) {
        return stopped();
      }
      now.only_now = out_.verdict == Verdict::kSatisfiable;
      if (out_.verdict == Verdict::kUnknown) {
        now.verdict = Verdict::kUnknown;  // not now; never, or not now, is not known
      }
      out_ = std::move(now);
      notes_ = std::move(notes_now);
    }
    out_.notes.assign(notes_.begin(), notes_.end());
    record_publications();
    out_.node_groups = std::move(plan_.groups);
    return std::move(out_);
  }

 private:
  // Takes `steps` from the caller's budget, if any; false (the check stops) when it has too few.
  bool charge(std::size_t steps) {
    if (options_.budget == nullptr || options_.budget->take(steps)) {
      return true;
    }
    stopped_ = true;
    return false;
  }

  // Steps a node's search may take: its own bound, and what the budget has left.
  [[nodiscard]] std::size_t search_steps_allowed(std::size_t node_bound) const {
    return options_.budget == nullptr ? node_bound
                                      : std::min(node_bound, options_.budget->left());
  }

  // The answer of a check whose budget ran out: unknown, whatever the nodes seen so far said
  // (a later node could still fail the allocation with an error).
  ClaimFeasibility stopped() const {
    return budget_exhausted_result(options_.budget);
  }

  // Every node, with the allocations of other claims (`with_allocations`) or without them.
  void evaluate(bool with_allocations) {
    prepare(with_allocations);
    bool any_unknown = false;
    bool may_fail = false;
    for (std::size_t n : evaluated_nodes_) {
      if (stopped_) {
        return;
      }
      bool could_abort = false;
      NodeFeasibility result = check_node(state_.nodes()[n], could_abort);
      // An unknown node may be one where the allocator stops with an error.
      may_fail = may_fail || (could_abort && result.verdict == Verdict::kUnknown);
      if (result.verdict == Verdict::kSatisfiable) {
        out_.verdict = Verdict::kSatisfiable;
      }
      any_unknown = any_unknown || result.verdict == Verdict::kUnknown;
      out_.nodes.push_back(std::move(result));
    }
    if (out_.allocation_error) {
      // The scheduler's filter fails with the error, which fails the Pod's scheduling, however
      // other nodes would answer.
      out_.verdict = Verdict::kUnsatisfiable;
      return;
    }
    if (out_.verdict == Verdict::kSatisfiable && may_fail) {
      out_.verdict = Verdict::kUnknown;  // that error would fail the Pod on every node
      return;
    }
    if (out_.verdict != Verdict::kSatisfiable) {
      const bool certain = !any_unknown && !state_.nodes().empty() &&
                           state_.selector_devices().empty() && !state_.incomplete();
      out_.verdict = certain ? Verdict::kUnsatisfiable : Verdict::kUnknown;
    }
  }

  // What other claims hold (when `with_allocations`), the resources shareable devices and counter
  // sets offer, and per choice and matching device whether the request can get it and what it
  // uses of shared capacity.
  void prepare(bool with_allocations) {
    const auto& devices = state_.devices();
    std::unordered_set<std::size_t> held;
    std::unordered_set<std::size_t> in_use;
    std::map<std::size_t, std::map<std::string, cel::Quantity, std::less<>>> aggregated;
    static const std::vector<Allocation> kNoAllocations;
    for (const Allocation& allocation : with_allocations ? state_.allocations() : kNoAllocations) {
      const auto index = state_.device_index(allocation.device);
      if (allocation.claim == options_.own_claim || !index) {
        continue;
      }
      in_use.insert(*index);
      if (!allocation.shared) {
        held.insert(*index);
        continue;
      }
      auto& sum = aggregated[*index];
      for (const auto& [name, text] : allocation.consumed) {
        const cel::Quantity amount = *cel::Quantity::parse(text);
        auto it = sum.find(name);
        if (it == sum.end()) {
          sum.emplace(name, amount);
        } else {
          it->second = it->second.plus(amount);
        }
      }
    }
    sharing_ = search::Sharing{};
    std::map<std::pair<std::size_t, std::string>, std::size_t> capacity_resource;
    for (std::size_t d : devices_) {
      if (!devices[d].allow_multiple_allocations) {
        continue;
      }
      sharing_.multiple.insert(d);
      for (const auto& [name, text] : devices[d].capacity) {
        cel::Quantity left = *cel::Quantity::parse(text);
        if (auto it = aggregated[d].find(name); it != aggregated[d].end()) {
          left = left.minus(it->second);
        }
        capacity_resource.emplace(std::pair(d, name), sharing_.available.size());
        sharing_.available.push_back(left);
      }
    }
    // A resource per counter of a counter set, made when a device first consumes it.
    std::map<std::pair<std::string, std::string>, std::size_t, std::less<>> counter_resource;
    const auto counter = [&](const std::string& set,
                             const std::string& name) -> std::optional<std::size_t> {
      if (auto it = counter_resource.find(std::pair(set, name)); it != counter_resource.end()) {
        return it->second;
      }
      const auto counters = state_.counter_sets().find(set);
      if (counters == state_.counter_sets().end()) {
        return std::nullopt;
      }
      const auto total = counters->second.find(name);
      if (total == counters->second.end()) {
        return std::nullopt;
      }
      counter_resource.emplace(std::pair(set, name), sharing_.available.size());
      sharing_.available.push_back(*cel::Quantity::parse(total->second));
      return sharing_.available.size() - 1;
    };
    std::unordered_set<std::size_t> unresolved;  // counters that name no counter of the pool
    for (std::size_t d : devices_) {
      std::vector<search::Use> uses;
      for (const CounterConsumption& consumption : devices[d].consumes_counters()) {
        const std::string set = devices[d].driver.get() + "/" + devices[d].pool.get() + "/" +
                                consumption.counter_set;
        for (const auto& [name, text] : consumption.counters) {
          const std::optional<std::size_t> resource = counter(set, name);
          if (!resource) {
            unresolved.insert(d);
            continue;
          }
          uses.push_back(search::Use{*resource, *cel::Quantity::parse(text)});
        }
      }
      if (uses.empty() || unresolved.count(d) != 0) {
        continue;
      }
      if (in_use.count(d) != 0) {
        // Devices other claims hold keep their counters taken; a shareable one paid them.
        for (const search::Use& use : uses) {
          sharing_.available[use.resource] = sharing_.available[use.resource].minus(use.amount);
        }
        if (devices[d].allow_multiple_allocations) {
          continue;
        }
      }
      sharing_.counters.emplace(d, std::move(uses));
    }
    if (!unresolved.empty()) {
      notes_.insert("a device consumes counters its pool's sharedCounters do not define (the "
                    "scheduler treats the pool as invalid)");
    }
    for (auto& choices : choices_) {
      for (ChoiceMatch& match : choices) {
        match.blocks.assign(devices.size(), Block::kNone);
        match.uses.clear();
        for (std::size_t d : devices_) {
          if (match.matches[d] == Match::kNo) {
            continue;
          }
          const k8s::DeviceChoice& choice = *match.choice;
          if (const Block taint = taint_block(devices[d], choice); taint != Block::kNone) {
            match.blocks[d] = taint;
            if (taint == Block::kUnknown) {
              notes_.insert("a DeviceTaintRule selects devices by DeviceClass or CEL selectors, "
                            "which are not evaluated: the devices it names may match");
            }
            continue;
          }
          if (held.count(d) != 0 && !choice.admin_access) {
            match.blocks[d] = Block::kHeld;
            continue;
          }
          if (unresolved.count(d) != 0) {
            match.blocks[d] = Block::kUnknown;
            continue;
          }
          const capacity::Demand demand =
              capacity::demand(devices[d], choice.capacity_requests, aggregated[d]);
          if (demand.fit == capacity::Fit::kNo) {
            match.blocks[d] = Block::kTooSmall;
            continue;
          }
          if (demand.fit == capacity::Fit::kUnknown) {
            notes_.insert("request " + in_quotes(match.label) + ": " + demand.why);
            match.blocks[d] = Block::kUnknown;
            continue;
          }
          if (!devices[d].allow_multiple_allocations) {
            continue;
          }
          std::vector<search::Use> uses;
          for (const auto& [name, amount] : demand.consumed) {
            uses.push_back(search::Use{capacity_resource.at(std::pair(d, name)), amount});
          }
          match.uses.emplace(d, std::move(uses));
        }
      }
    }
  }

  void match_choices() {
    const std::size_t device_count = state_.devices().size();
    for (const k8s::DeviceRequest& request : spec_.requests) {
      std::vector<ChoiceMatch> choices;
      for (const k8s::DeviceChoice& choice : request.choices) {
        ChoiceMatch match;
        match.label = choice.subrequest.empty() ? request.name
                                                : request.name + "/" + choice.subrequest;
        match.choice = &choice;
        match.matches.assign(device_count, Match::kUnknown);
        match.derived.resize(choice.derived_attributes.size());
        const DeviceClass* device_class = state_.device_class(choice.device_class_name);
        if (device_class == nullptr) {
          notes_.insert("DeviceClass " + in_quotes(choice.device_class_name) + " of request " +
                        in_quotes(match.label) +
                        " is not in the cluster state: any device may match");
          choices.push_back(std::move(match));
          continue;
        }
        if (!device_class->selectors_readable()) {
          notes_.insert("a selector of DeviceClass " + in_quotes(choice.device_class_name) +
                        " does not parse: any device may match request " +
                        in_quotes(match.label));
          choices.push_back(std::move(match));
          continue;
        }
        const SelectorSet class_selectors(device_class->programs);
        const SelectorSet own(choice.selector_programs);
        ReadsCollector collector;
        collector.add(device_class->programs);
        collector.add(choice.selector_programs);
        const SelectorReads reads = collector.reads(plan_.by_literal);
        // A device that differs from another only in a value compared with a literal costs up to
        // longest / 10 units more per comparison, and a selector makes at most `cost`
        // comparisons: far below the limit, both have the same answer.
        const std::uint64_t cost_factor = 1 + longest_literal(reads) / 10;
        // Selectors are evaluated once per distinct device (what they can see of it).
        std::unordered_map<std::string, Match> by_look;
        for (std::size_t d : devices_) {
          const auto [it, fresh] = by_look.try_emplace(look_key(state_.devices()[d], reads));
          if (fresh) {
            std::uint64_t cost = 0;
            it->second = match_device(class_selectors, own, d, match.label, &cost);
            literal_guard_failed_ =
                literal_guard_failed_ || (!reads.by_literal.empty() &&
                                          (cost + 1) * cost_factor >= cel::kPerCallCostLimit);
          }
          match.matches[d] = it->second;
        }
        choices.push_back(std::move(match));
      }
      choices_.push_back(std::move(choices));
    }
  }

  // Nodes of one group (one shape, alike in the per-node values read by value) that the claim's
  // choices match alike, device position by device position, stay together: selectors are the
  // only readers of the per-node values left out, so such nodes are the same to the rest of the
  // check. The groups stay in the order of their first nodes.
  void split_by_matches() {
    std::vector<std::vector<std::size_t>> split;
    for (const std::vector<std::size_t>& group : plan_.groups) {
      std::unordered_map<std::string, std::size_t> by_key;  // -> index in split
      for (std::size_t n : group) {
        std::string key;
        for (const std::vector<ChoiceMatch>& choices : choices_) {
          for (const ChoiceMatch& match : choices) {
            for (std::size_t d : state_.nodes()[n].devices) {
              key.push_back(static_cast<char>(match.matches[d]));
            }
          }
        }
        const auto [it, fresh] = by_key.try_emplace(std::move(key), split.size());
        if (fresh) {
          split.emplace_back();
        }
        split[it->second].push_back(n);
      }
    }
    std::sort(split.begin(), split.end(),
              [](const auto& a, const auto& b) { return a.front() < b.front(); });
    evaluated_nodes_.clear();
    for (std::size_t g = 0; g < split.size(); ++g) {
      evaluated_nodes_.push_back(split[g].front());
      for (std::size_t n : split[g]) {
        plan_.group_of[n] = g;
      }
    }
    plan_.groups = std::move(split);
  }

  // `cost` receives the largest cost of one selector's evaluation.
  Match match_device(const SelectorSet& class_selectors, const SelectorSet& own, std::size_t d,
                     const std::string& label, std::uint64_t* cost) {
    const PublishedDevice device(state_.devices()[d]);
    std::string why;
    Match match = class_selectors.match(device, &why, cost);
    if (match != Match::kNo) {
      const Match request_match = own.match(device, &why, cost);
      match = request_match == Match::kNo ? Match::kNo
              : request_match == Match::kUnknown ? Match::kUnknown
                                                 : match;
    }
    if (match == Match::kUnknown) {
      notes_.insert("request " + in_quotes(label) + " may match " +
                    in_quotes(state_.devices()[d].driver) + " devices: " + why);
    }
    return match;
  }

  void build_constraints() {
    std::map<std::string, std::size_t, std::less<>> request_index;
    for (std::size_t r = 0; r < spec_.requests.size(); ++r) {
      request_index.emplace(spec_.requests[r].name, r);
    }
    for (const k8s::DeviceConstraint& constraint : spec_.constraints) {
      if (constraint.match_attribute.empty() == constraint.distinct_attribute.empty()) {
        continue;  // neither (or both, which the API server rejects)
      }
      search::Constraint out;
      out.distinct = !constraint.distinct_attribute.empty();
      out.attribute = out.distinct ? constraint.distinct_attribute : constraint.match_attribute;
      out.pointer = constraint.pointer;
      if (constraint.requests.empty()) {
        for (std::size_t r = 0; r < spec_.requests.size(); ++r) {
          out.covers.emplace_back(r, search::Constraint::kAnyChoice);
        }
      }
      for (const std::string& reference : constraint.requests) {
        // "req" covers every subrequest; "req/sub" only that one.
        const std::size_t slash = reference.find('/');
        auto it = request_index.find(std::string_view(reference).substr(0, slash));
        if (it == request_index.end()) {
          continue;
        }
        if (slash == std::string::npos) {
          out.covers.emplace_back(it->second, search::Constraint::kAnyChoice);
          continue;
        }
        const auto& choices = spec_.requests[it->second].choices;
        for (std::size_t c = 0; c < choices.size(); ++c) {
          if (choices[c].subrequest == reference.substr(slash + 1)) {
            out.covers.emplace_back(it->second, c);
          }
        }
      }
      constraints_.push_back(std::move(out));
    }
  }

  // The derived attributes of the claim on `node`: each evaluated, with the `device` its
  // selectors see, for every device of the node a choice that defines it may get (selectors not
  // false, not held, no untolerated taint, capacity not too small). The allocator evaluates one
  // only where a constraint on its name compares the device, after those checks, and aborts on
  // an error there; the search (search::Choice::derived_errors) decides whether it gets there.
  DerivedOnNode derive_on(const Node& node) {
    DerivedOnNode out;
    for (std::size_t r = 0; r < choices_.size(); ++r) {
      for (ChoiceMatch& match : choices_[r]) {
        const auto& attributes = match.choice->derived_attributes;
        for (std::size_t d : node.devices) {
          if (match.matches[d] == Match::kNo ||
              (match.blocks[d] != Block::kNone && match.blocks[d] != Block::kUnknown)) {
            continue;
          }
          for (std::size_t i = 0; i < attributes.size(); ++i) {
            ++out.evaluations;
            auto [it, fresh] = match.derived[i].try_emplace(d);
            if (fresh) {
              it->second =
                  derived::evaluate(attributes[i].program, PublishedDevice(state_.devices()[d]),
                                    derived_budget_);
            }
            const derived::Outcome& outcome = it->second;
            out.fails = out.fails || outcome.state == derived::State::kError;
            if (outcome.state == derived::State::kUnknown) {
              out.unknown = true;
              notes_.insert("derived attribute " + in_quotes(attributes[i].name) + " of request " +
                            in_quotes(match.label) +
                            " is not evaluated exactly: " + outcome.message);
              if (outcome.budget_exhausted) {
                notes_.insert("the CEL cost budget of the claim's derived attributes ran out");
              }
            }
          }
        }
      }
    }
    return out;
  }

  bool all_under_constraint() const {
    return std::any_of(constraints_.begin(), constraints_.end(), [&](const auto& constraint) {
      return std::any_of(constraint.covers.begin(), constraint.covers.end(), [&](const auto& cover) {
        const auto& choices = choices_[cover.first];
        return std::any_of(choices.begin(), choices.end(), [&](const ChoiceMatch& match) {
          return match.choice->allocation_mode == k8s::AllocationMode::kAll;
        });
      });
    });
  }

  // The error the allocator stops with where the search reached a device whose derived
  // attribute fails.
  AllocationError derived_error(const Node& node, const std::vector<search::Request>& requests,
                                const search::SearchResult::Abort& abort) const {
    const ChoiceMatch& match = choices_[abort.request][abort.choice];
    const auto& attributes = match.choice->derived_attributes;
    const std::string& name = constraints_[abort.constraint].attribute;
    // The first of two derived attributes of one name counts (candidates_on).
    const auto attribute = std::find_if(attributes.begin(), attributes.end(),
                                        [&](const auto& a) { return a.name == name; });
    const derived::Outcome& outcome =
        match.derived[static_cast<std::size_t>(attribute - attributes.begin())].at(abort.device);
    return AllocationError{requests[abort.request].choices[abort.choice].label,
                           name,
                           state_.devices()[abort.device].id(),
                           node.name,
                           outcome.message,
                           attribute->pointer};
  }

  std::vector<search::Request> candidates_on(const Node& node) const {
    std::vector<search::Request> requests;
    for (std::size_t r = 0; r < choices_.size(); ++r) {
      search::Request request;
      for (const ChoiceMatch& match : choices_[r]) {
        search::Choice choice;
        choice.label = match.label;
        choice.all = match.choice->allocation_mode == k8s::AllocationMode::kAll;
        choice.count = static_cast<std::size_t>(std::max<std::int64_t>(match.choice->count, 0));
        const auto& attributes = match.choice->derived_attributes;
        for (const k8s::DerivedAttribute& attribute : attributes) {
          choice.derived.try_emplace(attribute.name);  // the driver's value no longer counts
        }
        for (std::size_t d : node.devices) {
          if (match.matches[d] == Match::kNo) {
            continue;
          }
          const Block block = match.blocks[d];
          if (block == Block::kTaint || block == Block::kHeld) {
            // All takes every matching device, so it fails on one it cannot have; a count
            // just skips it.
            (match.matches[d] == Match::kYes ? choice.blocked : choice.maybe_blocked) |= choice.all;
            continue;
          }
          if (block == Block::kTooSmall) {
            continue;  // the allocator leaves it out of All's devices too
          }
          bool derived_known = true;
          std::set<std::string_view> named;  // the first of two derived attributes of one name
          for (std::size_t i = 0; i < attributes.size(); ++i) {
            if (!named.insert(attributes[i].name).second) {
              continue;
            }
            const derived::Outcome& outcome = match.derived[i].at(d);
            if (outcome.state == derived::State::kValue) {
              choice.derived[attributes[i].name].try_emplace(d, outcome.value);
            } else if (outcome.state == derived::State::kError) {
              choice.derived_errors[attributes[i].name].insert(d);
            } else {
              derived_known = false;  // the device may still be taken, with some value
            }
          }
          (match.matches[d] == Match::kYes && block == Block::kNone && derived_known
               ? choice.definite
               : choice.maybe)
              .push_back(d);
          if (auto it = match.uses.find(d); it != match.uses.end()) {
            choice.uses.emplace(d, it->second);
          }
        }
        request.choices.push_back(std::move(choice));
      }
      requests.push_back(std::move(request));
    }
    return requests;
  }

  // `could_abort`: set when the allocator could stop with an error on the node: a derived
  // attribute fails on a device some request may get there, or an allocationMode All request is
  // under a constraint.
  NodeFeasibility check_node(const Node& node, bool& could_abort) {
    NodeFeasibility result;
    result.node = node.name;
    const DerivedOnNode derived = derive_on(node);
    could_abort = derived.fails || all_under_constraint();
    if (!charge(derived.evaluations + 1)) {
      return result;
    }
    if (derived.evaluations >= options_.max_steps_per_node) {
      result.reason = "search bound of " + std::to_string(options_.max_steps_per_node) +
                      " steps reached by the derived attributes' evaluations";
      notes_.insert("the search bound was reached on some nodes");
      return result;
    }
    const std::size_t node_bound = options_.max_steps_per_node - derived.evaluations;
    std::size_t max_steps = search_steps_allowed(node_bound);
    const std::vector<search::Request> requests = candidates_on(node);
    const auto& devices = state_.devices();
    const search::SearchResult optimistic = search::search(
        devices, requests, constraints_, search::Scenario::kOptimistic, max_steps, sharing_);
    if (!charge_search(optimistic, max_steps, node_bound)) {
      return result;
    }
    describe_requests(node, requests, result);
    if (optimistic.aborted && !optimistic.order_uncertain && optimistic.aborted->derived_error) {
      AllocationError error = derived_error(node, requests, *optimistic.aborted);
      result.verdict = Verdict::kUnsatisfiable;
      result.shortfall = Shortfall::kAllocationError;
      result.reason = "derived attribute " + in_quotes(error.attribute) + " of request " +
                      in_quotes(error.request) + " fails on " + error.device + ": " +
                      error.message;
      if (!out_.allocation_error) {
        out_.allocation_error = std::move(error);
      }
      return result;
    }
    if (optimistic.aborted && !optimistic.order_uncertain) {
      const search::SearchResult::Abort& abort = *optimistic.aborted;
      const search::Constraint& constraint = constraints_[abort.constraint];
      AllocationError error{requests[abort.request].choices[abort.choice].label,
                            constraint.attribute,
                            devices[abort.device].id(),
                            node.name,
                            "the constraint refuses it",
                            constraint.pointer,
                            AllocationError::Cause::kAllModeConstraint};
      result.verdict = Verdict::kUnsatisfiable;
      result.shortfall = Shortfall::kAllocationError;
      // (The device is named at the claim, from the first such node: a node's reason is shared
      // by the nodes of its shape.)
      result.reason = "request " + in_quotes(error.request) +
                      " (allocationMode All) must take a device the " + error.attribute +
                      " constraint refuses: the allocator fails with an error";
      if (!out_.allocation_error) {
        out_.allocation_error = std::move(error);
      }
      return result;
    }
    if (optimistic.outcome == search::Outcome::kBoundHit) {
      result.reason = "search bound of " + std::to_string(options_.max_steps_per_node) +
                      " steps reached";
      notes_.insert("the search bound was reached on some nodes");
      return result;
    }
    if (optimistic.outcome == search::Outcome::kNotFound) {
      if (derived.unknown || optimistic.order_uncertain) {
        // A device whose derived value is unknown, or which may match, might be the one that
        // makes the claim fit (with a value, or in the allocator's order).
        result.reason = derived.unknown
                            ? "no assignment found, but some derived values are not known"
                            : "no assignment found, but devices that may match would change "
                              "the order the allocator tries devices in";
        return result;
      }
      diagnose(requests, result);
      if (node.incomplete || state_.incomplete()) {
        result.verdict = Verdict::kUnknown;
        result.reason += " (but the node's slices are incomplete)";
      } else {
        result.verdict = Verdict::kUnsatisfiable;
      }
      return result;
    }
    const bool any_maybe = std::any_of(requests.begin(), requests.end(), [](const auto& request) {
      return std::any_of(request.choices.begin(), request.choices.end(),
                         [](const search::Choice& choice) { return !choice.maybe.empty(); });
    });
    max_steps = search_steps_allowed(node_bound);
    const search::SearchResult sure =
        any_maybe ? search::search(devices, requests, constraints_, search::Scenario::kPessimistic,
                                   max_steps, sharing_)
                  : optimistic;
    if (any_maybe && !charge_search(sure, max_steps, node_bound)) {
      return result;
    }
    if (sure.outcome != search::Outcome::kFound || sure.order_uncertain) {
      result.reason = sure.outcome == search::Outcome::kBoundHit
                          ? "search bound reached"
                          : "satisfiable only if devices topoguard cannot judge exactly match";
      return result;
    }
    result.verdict = Verdict::kSatisfiable;
    for (std::size_t r = 0; r < requests.size(); ++r) {
      std::vector<std::string> ids;
      for (std::size_t d : sure.devices[r]) {
        ids.push_back(devices[d].id());
      }
      result.assignment.emplace_back(requests[r].choices[sure.choices[r]].label, std::move(ids));
    }
    return result;
  }

  // Charges a search's steps; false (the check stops) when the budget, not the node's own bound,
  // ended it.
  bool charge_search(const search::SearchResult& result, std::size_t allowed,
                     std::size_t node_bound) {
    if (result.outcome == search::Outcome::kBoundHit && allowed < node_bound) {
      options_.budget->stop();
      stopped_ = true;
      return false;
    }
    return charge(result.steps);
  }

  struct NodePublication {
    std::map<std::string, bool> published;  // driver -> some device publishes the attribute
    std::vector<std::pair<std::string, std::string>> nonstandard;  // driver, value
  };

  // How the devices `match` may get on `node` publish `attribute`.
  NodePublication publication_on(const Node& node, const ChoiceMatch& match,
                                 const std::string& attribute) const {
    NodePublication out;
    for (std::size_t d : node.devices) {
      if (match.matches[d] == Match::kNo) {
        continue;
      }
      const Device& device = state_.devices()[d];
      const AttributeValue* value = device.attribute(attribute);
      out.published[device.driver] = out.published[device.driver] || value != nullptr;
      if (value != nullptr && !is_standard_value(attribute, *value)) {
        out.nonstandard.emplace_back(device.driver, value->to_string());
      }
    }
    return out;
  }

  // For each constrained choice whose DeviceClass is known: per driver of the devices it may
  // get, the nodes where none publishes the attribute and the values in another format.
  void record_publications() {
    for (const search::Constraint& constraint : constraints_) {
      for (std::size_t r = 0; r < choices_.size(); ++r) {
        for (std::size_t c = 0; c < choices_[r].size(); ++c) {
          const ChoiceMatch& match = choices_[r][c];
          const auto& derived = match.choice->derived_attributes;
          if (constraint.distinct || !constraint.covers_choice(r, c) ||
              state_.device_class(match.choice->device_class_name) == nullptr ||
              std::any_of(derived.begin(), derived.end(), [&](const k8s::DerivedAttribute& a) {
                return a.name == constraint.attribute;  // the driver's attribute is not read
              })) {
            continue;
          }
          // Per evaluated node: which drivers publish, the values in another format (each
          // first seen on the first node of its group, and groups are in the order of their
          // first nodes, so taking them group by group keeps node order).
          std::map<std::string, AttributePublication> by_driver;
          std::vector<std::vector<std::pair<AttributePublication*, bool>>> evaluated;
          for (std::size_t n : evaluated_nodes_) {
            const NodePublication on_node =
                publication_on(state_.nodes()[n], match, constraint.attribute);
            for (const auto& [driver, value] : on_node.nonstandard) {
              auto& values = by_driver[driver].nonstandard_values;
              if (std::find(values.begin(), values.end(), value) == values.end()) {
                values.push_back(value);
              }
            }
            auto& published = evaluated.emplace_back();
            for (const auto& [driver, any] : on_node.published) {
              published.emplace_back(&by_driver[driver], any);
            }
          }
          for (std::size_t n = 0; n < state_.nodes().size(); ++n) {
            for (const auto& [publication, any] :
                 evaluated[plan_.groups.empty() ? n : plan_.group_of[n]]) {
              ++publication->node_count;
              if (!any) {
                publication->nodes_without.push_back(state_.nodes()[n].name);
              }
            }
          }
          for (auto& [driver, publication] : by_driver) {
            publication.request = match.label;
            publication.attribute = constraint.attribute;
            publication.driver = driver;
            out_.publications.push_back(std::move(publication));
          }
        }
      }
    }
  }

  // Qualified attributes of every constraint that covers choice `c` of request `r`.
  std::vector<const std::string*> constrained(std::size_t r, std::size_t c) const {
    std::vector<const std::string*> out;
    for (const search::Constraint& constraint : constraints_) {
      if (constraint.covers_choice(r, c)) {
        out.push_back(&constraint.attribute);
      }
    }
    return out;
  }

  bool publishes_all(const search::Choice& choice, std::size_t device,
                     const std::vector<const std::string*>& attributes) const {
    return std::all_of(attributes.begin(), attributes.end(), [&](const std::string* attribute) {
      return search::value_of(state_.devices()[device], device, choice, *attribute) != nullptr;
    });
  }

  void describe_requests(const Node& node, const std::vector<search::Request>& requests,
                         NodeFeasibility& result) const {
    for (std::size_t r = 0; r < requests.size(); ++r) {
      if (requests[r].choices.empty()) {
        continue;
      }
      const search::Choice& choice = requests[r].choices[0];
      RequestOnNode summary;
      summary.request = choice.label;
      summary.needed = choice.all ? 1 : choice.count;
      summary.matching = choice.definite.size();
      summary.maybe = choice.maybe.size();
      const ChoiceMatch& match = choices_[r][0];
      for (std::size_t d : node.devices) {
        if (match.matches[d] != Match::kNo) {
          summary.tainted += match.blocks[d] == Block::kTaint ? 1 : 0;
          summary.held += match.blocks[d] == Block::kHeld ? 1 : 0;
          summary.too_small += match.blocks[d] == Block::kTooSmall ? 1 : 0;
        }
      }
      const auto attributes = constrained(r, 0);
      for (const auto* list : {&choice.definite, &choice.maybe}) {
        summary.with_attribute +=
            static_cast<std::size_t>(std::count_if(list->begin(), list->end(), [&](std::size_t d) {
              return publishes_all(choice, d, attributes);
            }));
      }
      result.requests.push_back(std::move(summary));
    }
  }

  // Why the node cannot hold the claim, judged on each request's first choice.
  void diagnose(const std::vector<search::Request>& requests, NodeFeasibility& result) const {
    std::size_t needed_total = 0;
    for (const RequestOnNode& request : result.requests) {
      needed_total += request.needed;
    }
    const auto coverage = [&](auto&& available) {
      std::size_t covered = 0;
      for (const RequestOnNode& request : result.requests) {
        covered += std::min(request.needed, available(request));
      }
      return needed_total == 0 ? 1.0
                               : static_cast<double>(covered) / static_cast<double>(needed_total);
    };
    for (std::size_t r = 0; r < result.requests.size(); ++r) {
      const RequestOnNode& request = result.requests[r];
      const bool all = requests[r].choices.at(0).all;
      const std::size_t usable = request.matching + request.maybe;
      const std::size_t excluded = request.tainted + request.held + request.too_small;
      // All fails on a device it cannot have (a count just skips it).
      if (usable >= request.needed && !(all && request.tainted + request.held != 0)) {
        continue;
      }
      result.shortfall = Shortfall::kNotEnoughDevices;
      result.closeness = coverage([](const RequestOnNode& q) { return q.matching + q.maybe; });
      result.reason = "request " + in_quotes(request.request) + " needs " +
                      counted_noun(request.needed, "device") + ", " + std::to_string(usable) +
                      " match";
      if (excluded == 0) {
        return;
      }
      std::string why;
      for (const auto& [count, text] :
           {std::pair{request.tainted, "with a taint it does not tolerate"},
            std::pair{request.held, "held by other claims"},
            std::pair{request.too_small, "whose capacity cannot hold its capacity request"}}) {
        if (count != 0) {
          why += (why.empty() ? "" : ", ") + std::to_string(count) + " " + text;
        }
      }
      result.reason = "request " + in_quotes(request.request) +
                      (all ? " (allocationMode All) takes every device its selectors pick, " +
                                 std::to_string(usable + excluded) + ", and cannot have some ("
                           : " needs " + counted_noun(request.needed, "device") + ", " +
                                 std::to_string(usable) + " usable of the " +
                                 std::to_string(usable + excluded) + " its selectors pick (") +
                      why + ")";
      return;
    }
    for (std::size_t r = 0; r < result.requests.size(); ++r) {
      const RequestOnNode& request = result.requests[r];
      if (request.with_attribute < request.needed) {
        const auto attributes = constrained(r, 0);
        result.shortfall = Shortfall::kAttributeMissing;
        const std::size_t matching = request.matching + request.maybe;
        result.reason = "request " + in_quotes(request.request) + " needs " +
                        counted_noun(request.needed, "device") + " with " +
                        (attributes.empty() ? std::string("the attribute") : *attributes.front()) +
                        "; of its " + counted_noun(matching, "matching device") + ", " +
                        (request.with_attribute == 0 ? std::string("none")
                                                     : std::to_string(request.with_attribute)) +
                        (request.with_attribute > 1 ? " publish it" : " publishes it");
        result.closeness = coverage([](const RequestOnNode& q) { return q.with_attribute; });
        return;
      }
    }
    for (std::size_t r = 0; r < requests.size(); ++r) {
      const search::Choice& choice = requests[r].choices.at(0);
      if (choice.all &&
          result.requests[r].with_attribute < choice.definite.size() + choice.maybe.size()) {
        result.shortfall = Shortfall::kAllModeRejected;
        result.reason = "request " + in_quotes(choice.label) +
                        " (allocationMode All) takes every matching device, and some lack the "
                        "constrained attribute";
        result.closeness = coverage([](const RequestOnNode& q) { return q.with_attribute; });
        return;
      }
    }
    const bool any_distinct = std::any_of(constraints_.begin(), constraints_.end(),
                                          [](const auto& c) { return c.distinct; });
    search::Sharing ignoring = sharing_;
    ignoring.ignore = true;
    const bool interactions_decide =
        (any_distinct || !sharing_.multiple.empty() || !sharing_.counters.empty()) &&
        search::search(state_.devices(), requests, constraints_, search::Scenario::kOptimistic,
                       options_.max_steps_per_node, ignoring)
            .outcome == search::Outcome::kFound;
    if (interactions_decide) {
      result.shortfall = Shortfall::kConflict;
      result.reason = "enough devices share the constrained values, but no combination of them "
                      "satisfies " + interactions(requests);
      result.closeness = 1.0;
      return;
    }
    result.shortfall = Shortfall::kNoSharedValue;
    describe_best_value(requests, result);
  }

  // What makes the candidates of `requests` interact: distinctAttribute constraints, capacity of
  // shareable devices, shared counters.
  std::string interactions(const std::vector<search::Request>& requests) const {
    std::vector<std::string> parts;
    for (const search::Constraint& constraint : constraints_) {
      if (constraint.distinct) {
        parts.push_back("distinctAttribute " + constraint.attribute);
      }
    }
    bool shared_capacity = false;
    bool counters = false;
    for (const search::Request& request : requests) {
      for (const search::Choice& choice : request.choices) {
        shared_capacity = shared_capacity || !choice.uses.empty();
        for (const auto* list : {&choice.definite, &choice.maybe}) {
          counters = counters || std::any_of(list->begin(), list->end(), [&](std::size_t d) {
                       return sharing_.counters.count(d) != 0;
                     });
        }
      }
    }
    if (shared_capacity) {
      parts.push_back("the capacity of devices shared between allocations");
    }
    if (counters) {
      parts.push_back("the shared counters of partitionable devices");
    }
    std::string text;
    for (std::size_t i = 0; i < parts.size(); ++i) {
      text += (i == 0 ? "" : i + 1 == parts.size() ? " and " : ", ") + parts[i];
    }
    return text.empty() ? std::string("the requests' competition for the same devices") : text;
  }

  // For the first constraint: the value that serves most of the needed devices, and what each
  // request lacks there.
  void describe_best_value(const std::vector<search::Request>& requests,
                           NodeFeasibility& result) const {
    const auto match_constraint = std::find_if(constraints_.begin(), constraints_.end(),
                                               [](const auto& c) { return !c.distinct; });
    if (match_constraint == constraints_.end()) {
      result.reason = "the requests compete for the same devices";
      return;
    }
    const search::Constraint& constraint = *match_constraint;
    std::vector<std::pair<AttributeValue::Type, AttributeValue::Scalar>> values;
    for (const auto& request : requests) {
      const search::Choice& choice = request.choices.at(0);
      for (const auto* list : {&choice.definite, &choice.maybe}) {
        for (std::size_t d : *list) {
          if (const AttributeValue* value =
                  search::value_of(state_.devices()[d], d, choice, constraint.attribute)) {
            for (const auto& element : value->values) {
              if (std::find(values.begin(), values.end(), std::pair(value->type, element)) ==
                  values.end()) {
                values.emplace_back(value->type, element);
              }
            }
          }
        }
      }
    }
    double best = -1;
    std::string best_text;
    for (const auto& [type, value] : values) {
      std::size_t needed = 0;
      std::size_t covered = 0;
      std::string text;
      for (std::size_t r = 0; r < requests.size(); ++r) {
        if (!constraint.covers_choice(r, 0)) {
          continue;
        }
        const search::Choice& choice = requests[r].choices[0];
        std::size_t available = 0;
        for (const auto* list : {&choice.definite, &choice.maybe}) {
          available += static_cast<std::size_t>(std::count_if(list->begin(), list->end(),
              // Named captures: clang (the fuzz build) cannot capture structured bindings.
              [&, &wanted_type = type, &wanted = value](std::size_t d) {
            return search::has_value(state_.devices()[d], d, choice, constraint.attribute,
                                     wanted_type, wanted);
          }));
        }
        const std::size_t need = result.requests[r].needed;
        needed += need;
        covered += std::min(need, available);
        text += (text.empty() ? "" : ", ") + in_quotes(choice.label) + " " +
                std::to_string(available) + " of " + std::to_string(need);
      }
      const double score =
          needed == 0 ? 1.0 : static_cast<double>(covered) / static_cast<double>(needed);
      if (score > best) {
        best = score;
        best_text = scalar_to_string(value) + " has " + text;
      }
    }
    result.closeness = std::max(best, 0.0);
    result.reason = "no " + constraint.attribute + " value is shared by enough devices (best: " +
                    best_text + ")";
  }

  const k8s::ClaimSpec& spec_;
  const ClusterState& state_;
  const FeasibilityOptions& options_;
  Plan plan_;
  std::vector<std::size_t> evaluated_nodes_;  // every node, or the first of each group
  std::vector<std::size_t> devices_;          // the devices their answers read, ascending
  std::vector<std::vector<ChoiceMatch>> choices_;  // per request
  std::vector<search::Constraint> constraints_;
  cel::CostBudget derived_budget_{cel::kRequestCostBudget};  // all derived attribute evaluations
  search::Sharing sharing_;             // for the allocations being considered
  bool stopped_ = false;                // FeasibilityOptions::budget ran out
  bool literal_guard_failed_ = false;
  std::set<std::string> notes_;
  ClaimFeasibility out_;
};

bool is_hex(std::string_view text) {
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

int shortfall_rank(Shortfall shortfall) {
  switch (shortfall) {
    case Shortfall::kConflict:
      return 0;
    case Shortfall::kNoSharedValue:
      return 1;
    case Shortfall::kAttributeMissing:
      return 2;
    case Shortfall::kAllModeRejected:
      return 3;
    case Shortfall::kNotEnoughDevices:
      return 4;
    case Shortfall::kAllocationError:
      return 5;
    case Shortfall::kNone:
      break;
  }
  return 6;
}

// The groups of nodes `spec` cannot tell apart: nodes of one shape, told apart by the values of
// the per-node attributes its constraints read, a node holding an allocated device on its own.
// Per-node attributes only selectors (the claim's, its DeviceClasses') read tell nodes apart by
// what the selectors match on them (Plan::by_matches), except that one the selectors only
// compare with string literals (`by_literal`), when no other is read so, tells apart only the
// nodes where it equals one of them, found in the shapes' index of values. No groups (node by node) for a claim with derived
// attributes (their errors name devices), or when an allocated device consumes shared counters
// (the counters left then depend on the pool, which shapes do not compare).
Plan plan_groups(const k8s::ClaimSpec& spec, const ClusterState& state,
                 const FeasibilityOptions& options, const NodeShapes& shapes, bool by_literal) {
  const std::size_t node_count = state.nodes().size();
  if (shapes.shape_of().size() != node_count) {
    return {};
  }
  ReadsCollector collector;
  for (const k8s::DeviceRequest& request : spec.requests) {
    for (const k8s::DeviceChoice& choice : request.choices) {
      if (!choice.derived_attributes.empty()) {
        return {};
      }
      if (const DeviceClass* device_class = state.device_class(choice.device_class_name)) {
        // A class whose selectors do not all parse may match any device, whatever they read.
        collector.add(device_class->programs);
      }
      collector.add(choice.selector_programs);
    }
  }
  const SelectorReads reads = collector.reads(by_literal);
  AttributeNames constrained;  // qualified, or short (the allocator's lookup)
  for (const k8s::DeviceConstraint& constraint : spec.constraints) {
    constrained.insert(constraint.match_attribute);
    constrained.insert(constraint.distinct_attribute);
  }
  std::vector<bool> alone(node_count, false);
  for (const Allocation& allocation : state.allocations()) {
    const auto index = state.device_index(allocation.device);
    if (!options.with_allocations || allocation.claim == options.own_claim || !index) {
      continue;
    }
    const Device& device = state.devices()[*index];
    if (!device.consumes_counters().empty()) {
      return {};
    }
    if (device.scope == NodeScope::kNode) {
      if (const auto node = find_node(state, device.node.get())) {
        alone[*node] = true;
      }
    }
  }
  AttributeNames told_apart;   // by their values
  AttributeNames by_literals;  // only where a value equals a literal
  bool selectors_read = false;  // some other attribute only selectors read
  for (const std::string& name : shapes.per_node_attributes()) {
    const std::size_t slash = name.find('/');
    const bool in_constraint =
        constrained.count(name) != 0 ||
        (slash != std::string::npos && constrained.count(name.substr(slash + 1)) != 0);
    if (in_constraint) {
      told_apart.insert(name);
    } else if (reads.by_literal.count(name) != 0) {
      by_literals.insert(name);
    } else if (covers(reads, name)) {
      selectors_read = true;
    }
  }
  Plan plan;
  if (selectors_read) {
    // Told apart by what the selectors match (their reads by literal too).
    plan.by_matches = true;
    by_literals.clear();
  } else if (!told_apart.empty()) {
    told_apart.insert(by_literals.begin(), by_literals.end());
    by_literals.clear();
  }
  // Telling nodes apart reads every device of theirs: a step each; a look-up of a literal too.
  std::size_t steps = 0;
  std::vector<bool> literal_equal(node_count, false);  // a device's value equals a literal
  if (!told_apart.empty()) {
    for (const Node& node : state.nodes()) {
      steps += node.devices.size();
    }
  }
  // Without a cache to keep them, the values are indexed for this check alone.
  std::optional<NodeValues> own_values;
  const NodeValues* values = nullptr;
  if (!by_literals.empty()) {
    values = options.cache != nullptr
                 ? &options.cache->node_values(state, shapes)
                 : &own_values.emplace(state, shapes.per_node_attributes());
  }
  for (const std::string& name : by_literals) {
    const std::vector<std::string>& literals = reads.by_literal.at(name);
    for (const std::string& literal : literals) {
      if (options.budget != nullptr && ++steps > options.budget->left()) {
        break;  // the charge below fails
      }
      for (std::size_t n : values->nodes_with_value(name, literal)) {
        steps += literal_equal[n] ? 0 : state.nodes()[n].devices.size();
        literal_equal[n] = true;
      }
    }
  }
  if (steps != 0 && options.budget != nullptr && !options.budget->take(steps)) {
    plan.budget_exhausted = true;
    return plan;
  }
  const AttributeNames& projected = told_apart.empty() ? by_literals : told_apart;
  for (const std::vector<std::size_t>& shape : shapes.shapes()) {
    std::map<std::string, std::size_t> by_projection;  // -> index in plan.groups
    std::optional<std::size_t> whole;                  // the group, when nothing tells apart
    for (std::size_t n : shape) {
      if (alone[n]) {
        plan.groups.push_back({n});
        continue;
      }
      if (told_apart.empty() && !literal_equal[n]) {
        if (!whole) {
          whole = plan.groups.size();
          plan.groups.emplace_back();
        }
        plan.groups[*whole].push_back(n);
        continue;
      }
      std::string projection = projection_key(state, state.nodes()[n], projected);
      const auto [it, fresh] = by_projection.try_emplace(std::move(projection), plan.groups.size());
      if (fresh) {
        plan.groups.emplace_back();
      }
      plan.groups[it->second].push_back(n);
    }
  }
  std::sort(plan.groups.begin(), plan.groups.end(),
            [](const auto& a, const auto& b) { return a.front() < b.front(); });
  plan.group_of.resize(node_count);
  for (std::size_t g = 0; g < plan.groups.size(); ++g) {
    for (std::size_t n : plan.groups[g]) {
      plan.group_of[n] = g;
    }
    const Node& node = state.nodes()[plan.groups[g].front()];
    plan.devices.insert(plan.devices.end(), node.devices.begin(), node.devices.end());
  }
  if (plan.by_matches) {
    plan.devices.resize(state.devices().size());
    std::iota(plan.devices.begin(), plan.devices.end(), std::size_t{0});
    return plan;
  }
  plan.devices.insert(plan.devices.end(), state.selector_devices().begin(),
                      state.selector_devices().end());
  std::sort(plan.devices.begin(), plan.devices.end());
  plan.devices.erase(std::unique(plan.devices.begin(), plan.devices.end()), plan.devices.end());
  return plan;
}

}  // namespace

std::string_view verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::kSatisfiable:
      return "satisfiable";
    case Verdict::kUnsatisfiable:
      return "unsatisfiable";
    case Verdict::kUnknown:
      break;
  }
  return "unknown";
}

bool is_standard_value(std::string_view attribute, const AttributeValue& value) {
  if (attribute != k8s::kPcieRootAttribute) {
    return true;
  }
  return value.type == AttributeValue::Type::kString &&
         std::all_of(value.values.begin(), value.values.end(), [](const auto& element) {
           const std::string_view text = std::get<std::string>(element);
           return text.size() == 10 && text.substr(0, 3) == "pci" && text[7] == ':' &&
                  is_hex(text.substr(3, 4)) && is_hex(text.substr(8, 2));
         });
}

bool StepBudget::take(std::size_t steps) {
  if (steps > left_) {
    exhausted_ = true;
    return false;
  }
  left_ -= steps;
  spent_ += steps;
  return true;
}

const NodeFeasibility* ClaimFeasibility::closest() const {
  const NodeFeasibility* best = nullptr;
  for (const NodeFeasibility& node : nodes) {
    if (node.verdict != Verdict::kUnsatisfiable) {
      continue;
    }
    if (best == nullptr || shortfall_rank(node.shortfall) < shortfall_rank(best->shortfall) ||
        (shortfall_rank(node.shortfall) == shortfall_rank(best->shortfall) &&
         node.closeness > best->closeness)) {
      best = &node;
    }
  }
  return best;
}

ClaimFeasibility check_feasibility(const k8s::ClaimSpec& spec, const ClusterState& state,
                                   const FeasibilityOptions& options) {
  // Telling devices apart by literal first; in the rare case where that may not be exact, by
  // value.
  for (const bool by_literal : {true, false}) {
    Plan plan;
    if (options.shapes != nullptr) {
      plan = plan_groups(spec, state, options, *options.shapes, by_literal);
      if (plan.budget_exhausted) {
        return budget_exhausted_result(options.budget);
      }
    }
    plan.by_literal = by_literal;
    ClaimChecker checker(spec, state, options, std::move(plan));
    ClaimFeasibility result = checker.run();
    if (!checker.literal_guard_failed()) {
      return result;
    }
  }
  return {};  // not reached: without by_literal the guard does not apply
}

std::vector<NodeFeasibility> per_node(const ClaimFeasibility& result, const ClusterState& state) {
  if (result.node_groups.empty()) {
    return result.nodes;
  }
  std::vector<NodeFeasibility> out(state.nodes().size());
  for (std::size_t g = 0; g < result.node_groups.size(); ++g) {
    const NodeFeasibility& first = result.nodes[g];
    const std::vector<std::size_t>& group = result.node_groups[g];
    const Node& own = state.nodes()[group.front()];
    std::map<std::string, std::size_t, std::less<>> position;  // device id -> position on `own`
    for (std::size_t p = 0; p < own.devices.size(); ++p) {
      position.emplace(state.devices()[own.devices[p]].id(), p);
    }
    for (std::size_t n : group) {
      const Node& node = state.nodes()[n];
      NodeFeasibility& copy = out[n] = first;
      copy.node = node.name;
      for (auto& [request, ids] : copy.assignment) {
        for (std::string& id : ids) {
          id = state.devices()[node.devices[position.at(id)]].id();
        }
      }
    }
  }
  return out;
}

}  // namespace topoguard::cluster
