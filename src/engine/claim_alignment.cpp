#include "claim_alignment.h"

#include <algorithm>

#include "messages.h"

namespace topoguard::engine {

namespace {

using k8s::ClaimSpec;
using k8s::DeviceChoice;
using k8s::DeviceConstraint;
using k8s::DeviceRequest;

bool names(const DeviceConstraint& constraint, const std::string& entry) {
  return std::find(constraint.requests.begin(), constraint.requests.end(), entry) !=
         constraint.requests.end();
}

// Whether `constraint` binds the `role` devices of `request`: an absent or empty list covers
// every request, "req" covers all of its subrequests, "req/sub" only that subrequest, so a
// request is covered through subrequest entries only when all of its `role` subrequests are.
bool covers(const DeviceConstraint& constraint, const DeviceRequest& request, Role role,
            const std::vector<Roles>& choice_roles) {
  if (constraint.requests.empty() || names(constraint, request.name)) {
    return true;
  }
  if (!request.first_available) {
    return false;
  }
  bool any = false;
  for (std::size_t i = 0; i < request.choices.size(); ++i) {
    if (!DeviceRoles::has(choice_roles[i], role)) {
      continue;
    }
    any = true;
    if (!names(constraint, request.name + "/" + request.choices[i].subrequest)) {
      return false;
    }
  }
  return any;
}

// Whether `constraint` binds this particular choice (for counting devices under it).
bool covers_choice(const DeviceConstraint& constraint, const DeviceRequest& request,
                   const DeviceChoice& choice) {
  return constraint.requests.empty() || names(constraint, request.name) ||
         (request.first_available && names(constraint, request.name + "/" + choice.subrequest));
}

// The members of `object` (an empty object), with room for `size`. The fixes are built member
// by member with their values moved in: nlohmann's initializer lists copy every value through
// temporaries, and an ordered_json object that grows copies the members it has.
Json::object_t::Container& reserved_members(Json& object, std::size_t size) {
  auto& members = static_cast<Json::object_t::Container&>(object.get_ref<Json::object_t&>());
  members.reserve(size);
  return members;
}

// {"op": "add", "path": path, "value": value}
Json add_operation(std::string path, Json value) {
  Json operation = Json::object();
  auto& members = reserved_members(operation, 3);
  members.emplace_back("op", "add");
  members.emplace_back("path", std::move(path));
  members.emplace_back("value", std::move(value));
  return operation;
}

class ClaimAnalyzer {
 public:
  ClaimAnalyzer(const ClaimSpec& spec, const DeviceRoles& roles, const policy::Policy& policy)
      : spec_(spec), policy_(policy) {
    // Classify every choice and scan its selectors once; the checks below ask many times.
    facts_.reserve(spec.requests.size());
    for (const DeviceRequest& request : spec.requests) {
      RequestFacts facts;
      for (const DeviceChoice& choice : request.choices) {
        const Roles choice_roles = roles.of_choice(choice);
        facts.choice_roles.push_back(choice_roles);
        facts.roles.gpu = facts.roles.gpu || choice_roles.gpu;
        facts.roles.nic = facts.roles.nic || choice_roles.nic;
        if (choice_roles.any() && selects_numa_node(choice)) {
          facts.gpu_numa_pinned = facts.gpu_numa_pinned || choice_roles.gpu;
          facts.nic_numa_pinned = facts.nic_numa_pinned || choice_roles.nic;
        }
      }
      if (facts.roles.gpu) {
        gpus_.push_back(&request);
      }
      if (facts.roles.nic) {
        nics_.push_back(&request);
      }
      facts_.push_back(std::move(facts));
    }
  }

  ClaimVerdict run() {
    ClaimVerdict verdict;
    verdict.roles = Roles{!gpus_.empty(), !nics_.empty()};
    if (!gpus_.empty() && !nics_.empty()) {
      check_alignment(verdict);
    }
    check_multi_device(verdict);
    return verdict;
  }

 private:
  struct RequestFacts {
    Roles roles;
    std::vector<Roles> choice_roles;  // parallel to DeviceRequest::choices
    bool gpu_numa_pinned = false;     // a GPU choice's selectors read a NUMA attribute
    bool nic_numa_pinned = false;
  };

  const RequestFacts& facts(const DeviceRequest& request) const {
    return facts_[static_cast<std::size_t>(&request - spec_.requests.data())];
  }

  bool selects_numa_node(const DeviceChoice& choice) const {
    for (const cel::Program& selector : choice.selector_programs) {
      for (const std::string& attribute : cel::attributes_read(selector)) {
        if (policy_.numa_attributes.matches_any(attribute)) {
          return true;
        }
      }
    }
    return false;
  }

  bool tied_by(const DeviceRequest& gpu, const DeviceRequest& nic, bool numa) const {
    return std::any_of(spec_.constraints.begin(), spec_.constraints.end(),
                       [&](const DeviceConstraint& constraint) {
                         const bool kind_matches =
                             numa ? policy_.numa_attributes.matches_any(constraint.match_attribute)
                                  : policy_.is_alignment_attribute(constraint.match_attribute);
                         return !constraint.match_attribute.empty() && kind_matches &&
                                covers(constraint, gpu, Role::kGpu, facts(gpu).choice_roles) &&
                                covers(constraint, nic, Role::kNic, facts(nic).choice_roles);
                       });
  }

  bool pinned_to_numa(const DeviceRequest& request, Role role) const {
    return role == Role::kGpu ? facts(request).gpu_numa_pinned : facts(request).nic_numa_pinned;
  }

  // Only NUMA relates the two: a NUMA constraint ties them, or a selector pins one of them to a
  // NUMA node, which says the author meant them to be close.
  bool numa_related(const DeviceRequest& gpu, const DeviceRequest& nic) const {
    return tied_by(gpu, nic, /*numa=*/true) || pinned_to_numa(gpu, Role::kGpu) ||
           pinned_to_numa(nic, Role::kNic);
  }

  void check_alignment(ClaimVerdict& verdict) const {
    std::vector<const DeviceRequest*> untied_gpus;
    std::vector<const DeviceRequest*> untied_nics;
    for (const DeviceRequest* gpu : gpus_) {
      if (std::none_of(nics_.begin(), nics_.end(),
                       [&](const DeviceRequest* nic) { return tied_by(*gpu, *nic, false); })) {
        untied_gpus.push_back(gpu);
      }
    }
    for (const DeviceRequest* nic : nics_) {
      if (std::none_of(gpus_.begin(), gpus_.end(),
                       [&](const DeviceRequest* gpu) { return tied_by(*gpu, *nic, false); })) {
        untied_nics.push_back(nic);
      }
    }
    if (untied_gpus.empty() && untied_nics.empty()) {
      return;
    }
    const bool only_numa =
        std::all_of(untied_gpus.begin(), untied_gpus.end(),
                    [&](const DeviceRequest* gpu) {
                      return std::any_of(nics_.begin(), nics_.end(), [&](const DeviceRequest* nic) {
                        return numa_related(*gpu, *nic);
                      });
                    }) &&
        std::all_of(untied_nics.begin(), untied_nics.end(), [&](const DeviceRequest* nic) {
          return std::any_of(gpus_.begin(), gpus_.end(),
                             [&](const DeviceRequest* gpu) { return numa_related(*gpu, *nic); });
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
      finding.fix = fix_operations(pairs);
    } else if (has_multi_device_request(untied_gpus, untied_nics)) {
      finding.message = messages::multi_device_pairing(untied_gpus, untied_nics, only_numa,
                                                       attribute);
    } else {
      finding.message = only_numa ? messages::numa_only_ambiguous(untied_gpus, untied_nics,
                                                                  gpus_, nics_, attribute)
                                  : messages::missing_ambiguous(untied_gpus, untied_nics, gpus_,
                                                                nics_, attribute);
    }
    verdict.misalignment = finding.rule;
    verdict.findings.push_back(std::move(finding));
  }

  std::string numa_pointer(const std::vector<const DeviceRequest*>& untied_gpus,
                           const std::vector<const DeviceRequest*>& untied_nics) const {
    for (const DeviceConstraint& constraint : spec_.constraints) {
      if (policy_.numa_attributes.matches_any(constraint.match_attribute)) {
        return constraint.pointer;
      }
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
      if (std::find(nics_.begin(), nics_.end(), gpu) != nics_.end()) {
        return pairs;
      }
    }
    for (std::size_t i = 0; i < untied_gpus.size(); ++i) {
      pairs.emplace_back(untied_gpus[i]->name, untied_nics[i]->name);
    }
    return pairs;
  }

  static bool is_multi_device(const DeviceRequest& request) {
    return std::any_of(request.choices.begin(), request.choices.end(), [](const DeviceChoice& c) {
      return c.allocation_mode == k8s::AllocationMode::kAll || c.count > 1;
    });
  }

  static bool has_multi_device_request(const std::vector<const DeviceRequest*>& gpus,
                                       const std::vector<const DeviceRequest*>& nics) {
    auto multi = [](const DeviceRequest* request) { return is_multi_device(*request); };
    return std::any_of(gpus.begin(), gpus.end(), multi) ||
           std::any_of(nics.begin(), nics.end(), multi);
  }

  // One constraint per pair, naming both requests (never an empty list, which would also bind
  // devices that lack the attribute). `add` the whole array when it is absent, else append.
  Json fix_operations(const std::vector<std::pair<std::string, std::string>>& pairs) const {
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
    Json operations = Json::array();
    if (!spec_.has_constraints_array) {
      operations.push_back(add_operation(spec_.constraints_pointer, std::move(constraints)));
      return operations;
    }
    for (Json& constraint : constraints) {
      operations.push_back(add_operation(spec_.constraints_pointer + "/-", std::move(constraint)));
    }
    return operations;
  }

  void check_multi_device(ClaimVerdict& verdict) const {
    for (const DeviceConstraint& constraint : spec_.constraints) {
      if (constraint.match_attribute.empty() ||
          !policy_.is_alignment_attribute(constraint.match_attribute)) {
        continue;
      }
      std::vector<std::string> offenders;
      for (const DeviceRequest& request : spec_.requests) {
        for (const DeviceChoice& choice : request.choices) {
          const bool many = choice.allocation_mode == k8s::AllocationMode::kAll || choice.count > 1;
          if (many && covers_choice(constraint, request, choice)) {
            offenders.push_back(messages::describe_choice(request, choice));
          }
        }
      }
      if (!offenders.empty()) {
        verdict.findings.push_back(ClaimFinding{policy::RuleId::kMultiDeviceAlignment,
                                                constraint.pointer,
                                                messages::multi_device(offenders, constraint),
                                                Json::array()});
      }
    }
  }

  const ClaimSpec& spec_;
  const policy::Policy& policy_;
  std::vector<RequestFacts> facts_;  // parallel to spec_.requests
  std::vector<const DeviceRequest*> gpus_;
  std::vector<const DeviceRequest*> nics_;
};

}  // namespace

ClaimVerdict analyze_claim(const ClaimSpec& spec, const DeviceRoles& roles,
                           const policy::Policy& policy) {
  return ClaimAnalyzer(spec, roles, policy).run();
}

}  // namespace topoguard::engine
