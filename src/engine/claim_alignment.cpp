#include "claim_alignment.h"

#include <algorithm>
#include <functional>
#include <string_view>
#include <utility>

#include "messages.h"

namespace topoguard::engine {

namespace {

using k8s::ClaimSpec;
using k8s::DeviceChoice;
using k8s::DeviceConstraint;
using k8s::DeviceRequest;

// A multi-device choice: every device of it would have to share the constraint's attribute.
bool is_multi_device_choice(const DeviceChoice& choice) {
  return choice.allocation_mode == k8s::AllocationMode::kAll || choice.count > 1;
}

// At most this many multi-device choices are named in a finding's message; the rest are counted.
constexpr std::size_t kListedOffenders = 10;

constexpr std::size_t kWholeRequest = static_cast<std::size_t>(-1);

// What a constraint entry names: a request by its name, or one subrequest ("req/sub") of a
// firstAvailable request.
struct NameTarget {
  std::size_t request;
  std::size_t choice;  // kWholeRequest for the request itself
};

// The names constraint entries can use, sorted once and looked up by binary search, so that
// matching C constraints of E entries against R requests costs (E + R) log R instead of C * E * R.
// Request names are unique in a claim and subrequest names in a request (read_claim_spec checks),
// so an entry names at most one target per '/' it holds.
class NameIndex {
 public:
  // `spec` must outlive the index: request names are looked at where they are.
  explicit NameIndex(const ClaimSpec& spec) {
    std::size_t subrequests = 0;
    for (const DeviceRequest& request : spec.requests) {
      subrequests += request.first_available ? request.choices.size() : 0;
    }
    // Reserved once and never grown, so the keys' views of these strings stay valid.
    subrequest_names_.reserve(subrequests);
    keys_.reserve(spec.requests.size() + subrequests);
    for (std::size_t r = 0; r < spec.requests.size(); ++r) {
      const DeviceRequest& request = spec.requests[r];
      keys_.emplace_back(request.name, NameTarget{r, kWholeRequest});
      if (!request.first_available) {
        continue;
      }
      for (std::size_t i = 0; i < request.choices.size(); ++i) {
        const std::string& name =
            subrequest_names_.emplace_back(request.name + "/" + request.choices[i].subrequest);
        keys_.emplace_back(name, NameTarget{r, i});
      }
    }
    std::sort(keys_.begin(), keys_.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
  }

  // The keys view subrequest_names_: a copy would view the original's.
  NameIndex(const NameIndex&) = delete;
  NameIndex& operator=(const NameIndex&) = delete;

  template <typename Visit>
  void for_each_target(std::string_view entry, Visit visit) const {
    auto it = std::lower_bound(keys_.begin(), keys_.end(), entry,
                               [](const auto& key, std::string_view name) { return key.first < name; });
    for (; it != keys_.end() && it->first == entry; ++it) {
      visit(it->second);
    }
  }

 private:
  std::vector<std::string> subrequest_names_;  // "req/sub"
  std::vector<std::pair<std::string_view, NameTarget>> keys_;
};

// A constraint's entries without repeats (a repeated entry names nothing more).
std::vector<std::string_view> distinct_entries(const DeviceConstraint& constraint) {
  std::vector<std::string_view> entries(constraint.requests.begin(), constraint.requests.end());
  std::sort(entries.begin(), entries.end());
  entries.erase(std::unique(entries.begin(), entries.end()), entries.end());
  return entries;
}

// The members of `object` (an empty object), with room for `size`. The fixes are built member
// by member with their values moved in: nlohmann's initializer lists copy every value through
// temporaries, and an ordered_json object that grows copies the members it has.
Json::object_t::Container& reserved_members(Json& object, std::size_t size) {
  auto& members = static_cast<Json::object_t::Container&>(object.get_ref<Json::object_t&>());
  members.reserve(size);
  return members;
}


class ClaimAnalyzer {
 public:
  ClaimAnalyzer(const ClaimSpec& spec, const DeviceRoles& roles, const policy::Policy& policy)
      : spec_(spec), roles_(roles), policy_(policy), names_(spec) {
    // Classify every choice and scan its selectors once; the checks below ask many times.
    facts_.reserve(spec.requests.size());
    gpus_.reserve(spec.requests.size());
    nics_.reserve(spec.requests.size());
    for (const DeviceRequest& request : spec.requests) {
      RequestFacts facts;
      for (std::size_t i = 0; i < request.choices.size(); ++i) {
        const DeviceChoice& choice = request.choices[i];
        const Roles choice_roles = roles.of_choice(choice);
        facts.choice_roles.push_back(choice_roles);
        facts.roles.gpu = facts.roles.gpu || choice_roles.gpu;
        facts.roles.nic = facts.roles.nic || choice_roles.nic;
        facts.gpu_choices += choice_roles.gpu ? 1 : 0;
        facts.nic_choices += choice_roles.nic ? 1 : 0;
        if (choice_roles.any() && roles.selects_numa_node(choice)) {
          facts.gpu_numa_pinned = facts.gpu_numa_pinned || choice_roles.gpu;
          facts.nic_numa_pinned = facts.nic_numa_pinned || choice_roles.nic;
        }
        if (is_multi_device_choice(choice)) {
          facts.multi_device_choices.push_back(i);
        }
      }
      if (facts.roles.gpu) {
        gpus_.push_back(&request);
      }
      if (facts.roles.nic) {
        nics_.push_back(&request);
      }
      multi_device_choices_ += facts.multi_device_choices.size();
      facts_.push_back(std::move(facts));
    }
    tally_.resize(spec.requests.size());
    classify_constraints();
    find_ties();
  }

  ClaimVerdict run() {
    ClaimVerdict verdict;
    verdict.roles = Roles{!gpus_.empty(), !nics_.empty()};
    if (!gpus_.empty() && !nics_.empty()) {
      check_alignment(verdict);
    }
    check_multi_device(verdict);
    check_derived_attributes(verdict);
    for (std::size_t c = 0; c < spec_.constraints.size(); ++c) {
      if (ties_[c] == Tie::kAlignment) {
        verdict.alignment_constraints.push_back(c);
      }
    }
    return verdict;
  }

 private:
  struct RequestFacts {
    Roles roles;
    std::vector<Roles> choice_roles;  // parallel to DeviceRequest::choices
    std::size_t gpu_choices = 0;      // choices with the GPU role
    std::size_t nic_choices = 0;
    bool gpu_numa_pinned = false;     // a GPU choice's selectors read a NUMA attribute
    bool nic_numa_pinned = false;
    std::vector<std::size_t> multi_device_choices;  // indexes into DeviceRequest::choices
  };

  // How one constraint's entries name one request (scratch, reset after each constraint).
  struct Tally {
    bool touched = false;
    bool whole = false;         // named by its own name
    std::size_t gpu_named = 0;  // its GPU subrequests named
    std::size_t nic_named = 0;
  };

  // Requests with the GPU (NIC) role that a constraint binds by that role, in document order.
  struct Covered {
    std::vector<std::size_t> gpus;
    std::vector<std::size_t> nics;
  };

  // Requests a tie was found for, by the kind of constraint that ties them. `all`: an
  // empty-list constraint of that kind binds every request.
  struct Ties {
    bool all = false;
    std::vector<bool> gpu;  // by request index
    std::vector<bool> nic;

    [[nodiscard]] bool of_gpu(std::size_t request) const { return all || gpu[request]; }
    [[nodiscard]] bool of_nic(std::size_t request) const { return all || nic[request]; }
  };

  std::size_t index_of(const DeviceRequest& request) const {
    return static_cast<std::size_t>(&request - spec_.requests.data());
  }

  const RequestFacts& facts(const DeviceRequest& request) const { return facts_[index_of(request)]; }

  // Whether `constraint` binds the devices of a request by a role: an absent or empty list binds
  // every request, "req" all of its subrequests, "req/sub" only that subrequest, so a request is
  // bound through subrequest entries only when all of its subrequests of that role are named.
  // Costs the constraint's entries (and the names they hit), not the claim's requests.
  Covered covered_by(const DeviceConstraint& constraint) {
    std::vector<std::size_t> touched;
    for (const std::string_view entry : distinct_entries(constraint)) {
      names_.for_each_target(entry, [&](const NameTarget& target) {
        Tally& tally = tally_[target.request];
        if (!tally.touched) {
          tally.touched = true;
          touched.push_back(target.request);
        }
        if (target.choice == kWholeRequest) {
          tally.whole = true;
          return;
        }
        const Roles& roles = facts_[target.request].choice_roles[target.choice];
        tally.gpu_named += roles.gpu ? 1 : 0;
        tally.nic_named += roles.nic ? 1 : 0;
      });
    }
    std::sort(touched.begin(), touched.end());
    Covered covered;
    for (const std::size_t request : touched) {
      Tally& tally = tally_[request];
      const RequestFacts& request_facts = facts_[request];
      if (request_facts.roles.gpu &&
          (tally.whole || (request_facts.gpu_choices > 0 &&
                           tally.gpu_named == request_facts.gpu_choices))) {
        covered.gpus.push_back(request);
      }
      if (request_facts.roles.nic &&
          (tally.whole || (request_facts.nic_choices > 0 &&
                           tally.nic_named == request_facts.nic_choices))) {
        covered.nics.push_back(request);
      }
      tally = Tally{};
    }
    return covered;
  }

  // What a constraint's matchAttribute ties devices by, once derived attributes are read.
  enum class Tie { kNone, kNuma, kAlignment };

  // Every (request, choice) a constraint binds: each choice of a request it names, the named
  // subrequests, or every choice of the claim when its list is empty. Document order.
  std::vector<NameTarget> covered_choices(const DeviceConstraint& constraint) const {
    std::vector<NameTarget> covered;
    const auto add_request = [&](std::size_t request) {
      for (std::size_t i = 0; i < spec_.requests[request].choices.size(); ++i) {
        covered.push_back({request, i});
      }
    };
    if (constraint.requests.empty()) {
      for (std::size_t request = 0; request < spec_.requests.size(); ++request) {
        add_request(request);
      }
      return covered;
    }
    for (const std::string_view entry : distinct_entries(constraint)) {
      names_.for_each_target(entry, [&](const NameTarget& target) {
        if (target.choice == kWholeRequest) {
          add_request(target.request);
        } else {
          covered.push_back(target);
        }
      });
    }
    const auto by_document_order = [](const NameTarget& a, const NameTarget& b) {
      return std::pair(a.request, a.choice) < std::pair(b.request, b.choice);
    };
    const auto same = [](const NameTarget& a, const NameTarget& b) {
      return a.request == b.request && a.choice == b.choice;
    };
    std::sort(covered.begin(), covered.end(), by_document_order);
    covered.erase(std::unique(covered.begin(), covered.end(), same), covered.end());
    return covered;
  }

  static const k8s::DerivedAttribute* derived_named(const DeviceChoice& choice,
                                                    std::string_view name) {
    const auto found =
        std::find_if(choice.derived_attributes.begin(), choice.derived_attributes.end(),
                     [name](const k8s::DerivedAttribute& derived) { return derived.name == name; });
    return found == choice.derived_attributes.end() ? nullptr : &*found;
  }

  // A derived attribute named like an alignment or NUMA attribute that is not exactly a read of
  // that attribute: a constraint on the name compares the expression's value instead.
  bool overrides_topology(const k8s::DerivedAttribute& derived) const {
    return (policy_.is_alignment_attribute(derived.name) ||
            roles_.is_numa_attribute(derived.name)) &&
           cel::attribute_read(derived.program) != derived.name;
  }

  // A matchAttribute on an alignment (NUMA) attribute ties by it unless a request it covers
  // overrides that attribute. One on another name ties only when every choice it covers derives
  // that name as exactly a read of an alignment attribute (alignment) or of alignment and NUMA
  // attributes (NUMA); anything else is no tie. Decided from the syntax tree, never by text.
  Tie classify(const DeviceConstraint& constraint) {
    const std::string& attribute = constraint.match_attribute;
    if (attribute.empty()) {
      return Tie::kNone;
    }
    const bool alignment_name = policy_.is_alignment_attribute(attribute);
    const bool numa_name = roles_.is_numa_attribute(attribute);
    const std::vector<NameTarget> covered = covered_choices(constraint);
    bool every_derives = !covered.empty();
    bool forged = false;
    bool alignment_reads = true;
    bool topology_reads = true;
    for (const NameTarget& target : covered) {
      const DeviceChoice& choice = spec_.requests[target.request].choices[target.choice];
      covered_[target.request][target.choice] = true;
      const k8s::DerivedAttribute* derived = derived_named(choice, attribute);
      if (derived == nullptr) {
        every_derives = false;
        continue;
      }
      forged = forged || overrides_topology(*derived);
      const std::string& read = cel::attribute_read(derived->program);
      const bool reads_alignment = !read.empty() && policy_.is_alignment_attribute(read);
      alignment_reads = alignment_reads && reads_alignment;
      topology_reads =
          topology_reads && (reads_alignment || (!read.empty() && roles_.is_numa_attribute(read)));
    }
    if (alignment_name || numa_name) {
      return forged ? Tie::kNone : alignment_name ? Tie::kAlignment : Tie::kNuma;
    }
    if (!every_derives) {
      return Tie::kNone;
    }
    return alignment_reads ? Tie::kAlignment : topology_reads ? Tie::kNuma : Tie::kNone;
  }

  // Classifies every constraint, and notes which choices some constraint binds.
  void classify_constraints() {
    covered_.resize(spec_.requests.size());
    for (std::size_t r = 0; r < spec_.requests.size(); ++r) {
      covered_[r].assign(spec_.requests[r].choices.size(), false);
    }
    ties_.reserve(spec_.constraints.size());
    for (const DeviceConstraint& constraint : spec_.constraints) {
      if (constraint.match_attribute.empty()) {
        // A distinctAttribute constraint binds its choices too.
        for (const NameTarget& target : covered_choices(constraint)) {
          covered_[target.request][target.choice] = true;
        }
      }
      ties_.push_back(classify(constraint));
    }
  }

  Tie tie_of(const DeviceConstraint& constraint) const {
    return ties_[static_cast<std::size_t>(&constraint - spec_.constraints.data())];
  }

  bool is_alignment_constraint(const DeviceConstraint& constraint) const {
    return tie_of(constraint) == Tie::kAlignment;
  }

  bool is_numa_constraint(const DeviceConstraint& constraint) const {
    return tie_of(constraint) == Tie::kNuma;
  }

  // A derived attribute overriding an alignment or NUMA attribute on a choice that a constraint
  // binds: one finding each, at the derived attribute. No fix: only the author knows what the
  // expression was for.
  void check_derived_attributes(ClaimVerdict& verdict) const {
    for (std::size_t r = 0; r < spec_.requests.size(); ++r) {
      const DeviceRequest& request = spec_.requests[r];
      for (std::size_t i = 0; i < request.choices.size(); ++i) {
        if (!covered_[r][i]) {
          continue;
        }
        for (const k8s::DerivedAttribute& derived : request.choices[i].derived_attributes) {
          if (overrides_topology(derived)) {
            verdict.findings.push_back(
                ClaimFinding{policy::RuleId::kOverriddenAlignmentAttribute, derived.pointer,
                             messages::overridden_attribute(request, request.choices[i], derived,
                                                            cel::attribute_read(derived.program)),
                             {}});
          }
        }
      }
    }
  }

  // Whether some choice overrides the policy's alignment attribute: a constraint the fix added
  // on it would compare the derived values, so no fix is offered.
  bool alignment_attribute_overridden() const {
    return std::any_of(spec_.requests.begin(), spec_.requests.end(), [this](const auto& request) {
      return std::any_of(request.choices.begin(), request.choices.end(),
                         [this](const auto& choice) {
                           const k8s::DerivedAttribute* derived =
                               derived_named(choice, policy_.alignment_attribute);
                           return derived != nullptr && overrides_topology(*derived);
                         });
    });
  }

  // A GPU and a NIC request are tied when one constraint binds both; so every GPU a constraint
  // binds is tied as soon as it binds some NIC, and the reverse. One pass over the constraints.
  void find_ties() {
    const std::size_t count = spec_.requests.size();
    aligned_.gpu.assign(count, false);
    aligned_.nic.assign(count, false);
    numa_.gpu.assign(count, false);
    numa_.nic.assign(count, false);
    for (const DeviceConstraint& constraint : spec_.constraints) {
      const bool alignment = is_alignment_constraint(constraint);
      const bool numa = is_numa_constraint(constraint);
      if (numa && !first_numa_constraint_) {
        first_numa_constraint_ = &constraint;
      }
      if (!alignment && !numa) {
        continue;
      }
      if (constraint.requests.empty()) {
        aligned_.all = aligned_.all || alignment;
        numa_.all = numa_.all || numa;
        continue;
      }
      const Covered covered = covered_by(constraint);
      if (covered.gpus.empty() || covered.nics.empty()) {
        continue;
      }
      for (Ties* ties : {alignment ? &aligned_ : nullptr, numa ? &numa_ : nullptr}) {
        if (ties == nullptr) {
          continue;
        }
        for (const std::size_t gpu : covered.gpus) {
          ties->gpu[gpu] = true;
        }
        for (const std::size_t nic : covered.nics) {
          ties->nic[nic] = true;
        }
      }
    }
  }

  bool pinned_to_numa(const DeviceRequest& request, Role role) const {
    return role == Role::kGpu ? facts(request).gpu_numa_pinned : facts(request).nic_numa_pinned;
  }

  static bool any_pinned(const std::vector<const DeviceRequest*>& requests,
                         const std::function<bool(const DeviceRequest&)>& pinned) {
    return std::any_of(requests.begin(), requests.end(),
                       [&pinned](const DeviceRequest* request) { return pinned(*request); });
  }

  void check_alignment(ClaimVerdict& verdict) const {
    std::vector<const DeviceRequest*> untied_gpus;
    std::vector<const DeviceRequest*> untied_nics;
    for (const DeviceRequest* gpu : gpus_) {
      if (!aligned_.of_gpu(index_of(*gpu))) {
        untied_gpus.push_back(gpu);
      }
    }
    for (const DeviceRequest* nic : nics_) {
      if (!aligned_.of_nic(index_of(*nic))) {
        untied_nics.push_back(nic);
      }
    }
    if (untied_gpus.empty() && untied_nics.empty()) {
      return;
    }
    // Only NUMA relates an untied request to the other role: a NUMA constraint ties it to one of
    // them, or a selector pins it or one of them to a NUMA node, which says the author meant
    // them to be close.
    const bool some_gpu_pinned = any_pinned(
        gpus_, [this](const DeviceRequest& gpu) { return pinned_to_numa(gpu, Role::kGpu); });
    const bool some_nic_pinned = any_pinned(
        nics_, [this](const DeviceRequest& nic) { return pinned_to_numa(nic, Role::kNic); });
    const bool only_numa =
        std::all_of(untied_gpus.begin(), untied_gpus.end(),
                    [&](const DeviceRequest* gpu) {
                      return some_nic_pinned || pinned_to_numa(*gpu, Role::kGpu) ||
                             numa_.of_gpu(index_of(*gpu));
                    }) &&
        std::all_of(untied_nics.begin(), untied_nics.end(), [&](const DeviceRequest* nic) {
          return some_gpu_pinned || pinned_to_numa(*nic, Role::kNic) ||
                 numa_.of_nic(index_of(*nic));
        });

    ClaimFinding finding;
    finding.rule = only_numa ? policy::RuleId::kNumaOnlyAlignment
                             : policy::RuleId::kMissingPcieAlignment;
    finding.pointer = only_numa ? numa_pointer(untied_gpus, untied_nics) : spec_.devices_pointer;
    const std::vector<std::pair<std::string, std::string>> pairs =
        fix_pairs(untied_gpus, untied_nics);
    const std::string& attribute = policy_.alignment_attribute;
    if (!pairs.empty()) {
      finding.message = only_numa ? messages::numa_only(pairs, attribute)
                                  : messages::missing(pairs, attribute);
      if (!alignment_attribute_overridden()) {
        finding.fix = fix_operations(pairs);
      }
    } else if (has_multi_device_request(untied_gpus, untied_nics)) {
      finding.message = messages::multi_device_pairing(untied_gpus, untied_nics, only_numa,
                                                       attribute);
    } else {
      finding.message = only_numa ? messages::numa_only_ambiguous(untied_gpus, untied_nics,
                                                                  gpus_, nics_, attribute)
                                  : messages::missing_ambiguous(untied_gpus, untied_nics, gpus_,
                                                                nics_, attribute);
    }
    if (alignment_attribute_overridden()) {
      finding.message += messages::overridden_note(attribute);
    }
    verdict.misalignment = finding.rule;
    verdict.findings.push_back(std::move(finding));
  }

  std::string numa_pointer(const std::vector<const DeviceRequest*>& untied_gpus,
                           const std::vector<const DeviceRequest*>& untied_nics) const {
    if (first_numa_constraint_ != nullptr) {
      return first_numa_constraint_->pointer;
    }
    for (const DeviceRequest* gpu : untied_gpus) {
      if (pinned_to_numa(*gpu, Role::kGpu)) {
        return gpu->pointer;
      }
    }
    for (const DeviceRequest* nic : untied_nics) {
      if (pinned_to_numa(*nic, Role::kNic)) {
        return nic->pointer;
      }
    }
    return spec_.devices_pointer;
  }

  // The untied GPU and NIC requests pair unambiguously when there are as many of each (and as
  // many GPU as NIC requests in all): in document order. No fix when a request is both, or when
  // a pair holds several devices: one constraint over them would need every device on one root.
  std::vector<std::pair<std::string, std::string>> fix_pairs(
      const std::vector<const DeviceRequest*>& untied_gpus,
      const std::vector<const DeviceRequest*>& untied_nics) const {
    std::vector<std::pair<std::string, std::string>> pairs;
    if (gpus_.size() != nics_.size() || untied_gpus.size() != untied_nics.size() ||
        has_multi_device_request(untied_gpus, untied_nics)) {
      return pairs;
    }
    for (const DeviceRequest* gpu : gpus_) {
      if (facts(*gpu).roles.nic) {
        return pairs;
      }
    }
    for (std::size_t i = 0; i < untied_gpus.size(); ++i) {
      pairs.emplace_back(untied_gpus[i]->name, untied_nics[i]->name);
    }
    return pairs;
  }

  bool has_multi_device_request(const std::vector<const DeviceRequest*>& gpus,
                                const std::vector<const DeviceRequest*>& nics) const {
    auto multi = [this](const DeviceRequest* request) {
      return !facts(*request).multi_device_choices.empty();
    };
    return std::any_of(gpus.begin(), gpus.end(), multi) ||
           std::any_of(nics.begin(), nics.end(), multi);
  }

  // One constraint per pair, naming both requests (never an empty list, which would also bind
  // devices that lack the attribute). `add` the whole array when it is absent, else append. None
  // when the claim would then hold more constraints than the API server accepts.
  JsonPatch fix_operations(const std::vector<std::pair<std::string, std::string>>& pairs) const {
    if (spec_.constraints.size() + pairs.size() > k8s::kMaxConstraints) {
      return {};
    }
    Json constraints = Json::array();
    for (const auto& [gpu, nic] : pairs) {
      Json requests = Json::array();
      requests.push_back(gpu);
      requests.push_back(nic);
      Json constraint = Json::object();
      auto& members = reserved_members(constraint, 2);
      members.emplace_back("requests", std::move(requests));
      members.emplace_back("matchAttribute", policy_.alignment_attribute);
      constraints.push_back(std::move(constraint));
    }
    JsonPatch operations;
    if (!spec_.has_constraints_array) {
      operations.push_back({PatchOp::kAdd, spec_.constraints_pointer, std::move(constraints)});
      return operations;
    }
    for (Json& constraint : constraints) {
      operations.push_back({PatchOp::kAdd, spec_.constraints_pointer + "/-", std::move(constraint)});
    }
    return operations;
  }

  // The multi-device choices an alignment constraint binds (each choice it names, or every choice
  // of a request it names): the first kListedOffenders in document order, and how many in all.
  std::pair<std::vector<NameTarget>, std::size_t> multi_device_offenders(
      const DeviceConstraint& constraint) const {
    std::vector<NameTarget> listed;
    std::size_t total = 0;
    const auto add_request = [&](std::size_t request) {
      const auto& choices = facts_[request].multi_device_choices;
      total += choices.size();
      for (std::size_t i = 0; i < choices.size() && i < kListedOffenders; ++i) {
        listed.push_back({request, choices[i]});
      }
    };
    if (constraint.requests.empty()) {
      for (std::size_t request = 0; request < facts_.size() && listed.size() < kListedOffenders;
           ++request) {
        add_request(request);
      }
      total = multi_device_choices_;
    } else {
      std::vector<std::size_t> whole;
      std::vector<NameTarget> named;
      for (const std::string_view entry : distinct_entries(constraint)) {
        names_.for_each_target(entry, [&](const NameTarget& target) {
          if (target.choice == kWholeRequest) {
            whole.push_back(target.request);
          } else if (is_multi_device_choice(spec_.requests[target.request].choices[target.choice])) {
            named.push_back(target);
          }
        });
      }
      std::sort(whole.begin(), whole.end());
      for (const std::size_t request : whole) {
        add_request(request);
      }
      for (const NameTarget& target : named) {
        // A subrequest of a request named whole is already counted.
        if (!std::binary_search(whole.begin(), whole.end(), target.request)) {
          ++total;
          listed.push_back(target);
        }
      }
    }
    const auto by_document_order = [](const NameTarget& a, const NameTarget& b) {
      return std::pair(a.request, a.choice) < std::pair(b.request, b.choice);
    };
    std::sort(listed.begin(), listed.end(), by_document_order);
    if (listed.size() > kListedOffenders) {
      listed.resize(kListedOffenders);
    }
    return {std::move(listed), total};
  }

  void check_multi_device(ClaimVerdict& verdict) const {
    for (const DeviceConstraint& constraint : spec_.constraints) {
      if (!is_alignment_constraint(constraint)) {
        continue;
      }
      const auto [listed, total] = multi_device_offenders(constraint);
      if (total == 0) {
        continue;
      }
      std::vector<std::string> offenders;
      offenders.reserve(listed.size());
      for (const NameTarget& target : listed) {
        const DeviceRequest& request = spec_.requests[target.request];
        offenders.push_back(messages::describe_choice(request, request.choices[target.choice]));
      }
      verdict.findings.push_back(ClaimFinding{policy::RuleId::kMultiDeviceAlignment,
                                              constraint.pointer,
                                              messages::multi_device(offenders, total, constraint),
                                              {}});
    }
  }

  const ClaimSpec& spec_;
  const DeviceRoles& roles_;
  const policy::Policy& policy_;
  NameIndex names_;
  std::vector<RequestFacts> facts_;  // parallel to spec_.requests
  std::vector<Tally> tally_;         // parallel to spec_.requests; all zero between uses
  std::vector<const DeviceRequest*> gpus_;
  std::vector<const DeviceRequest*> nics_;
  std::vector<Tie> ties_;                   // parallel to spec_.constraints
  std::vector<std::vector<bool>> covered_;  // [request][choice]: some constraint binds it
  Ties aligned_;  // by constraints on an alignment attribute
  Ties numa_;     // by constraints on a NUMA attribute
  const DeviceConstraint* first_numa_constraint_ = nullptr;
  std::size_t multi_device_choices_ = 0;
};

}  // namespace

ClaimVerdict analyze_claim(const ClaimSpec& spec, const DeviceRoles& roles,
                           const policy::Policy& policy) {
  return ClaimAnalyzer(spec, roles, policy).run();
}

}  // namespace topoguard::engine
