#include "claim_feasibility.h"

#include <algorithm>
#include <optional>

#include "messages.h"
#include "topoguard/cluster/feasibility.h"
#include "topoguard/cluster/feasibility_cache.h"
#include "topoguard/engine/json_patch.h"
#include "topoguard/k8s/object.h"

namespace topoguard::engine {

namespace {

bool has_alignment_constraint(const k8s::ClaimSpec& spec, const policy::Policy& policy) {
  return std::any_of(spec.constraints.begin(), spec.constraints.end(),
                     [&](const k8s::DeviceConstraint& constraint) {
                       return policy.is_alignment_attribute(constraint.match_attribute);
                     });
}

// The first constraint on the alignment attribute, or one that ties by it through derived
// attributes; null when there is none.
const k8s::DeviceConstraint* alignment_constraint(const k8s::ClaimSpec& spec,
                                                  const ClaimVerdict& verdict,
                                                  const policy::Policy& policy) {
  for (std::size_t c = 0; c < spec.constraints.size(); ++c) {
    if (policy.is_alignment_attribute(spec.constraints[c].match_attribute) ||
        std::find(verdict.alignment_constraints.begin(), verdict.alignment_constraints.end(), c) !=
            verdict.alignment_constraints.end()) {
      return &spec.constraints[c];
    }
  }
  return nullptr;
}

// The key of `spec`'s answers in a feasibility cache: where its devices sit in `object`, the
// object it was read from, and their JSON.
std::string spec_key(const Json& object, const k8s::ClaimSpec& spec) {
  const Json::json_pointer pointer(spec.devices_pointer);
  return object.contains(pointer) ? spec.devices_pointer + "\n" + object.at(pointer).dump()
                                  : std::string();
}

struct FixedSpec {
  k8s::ClaimSpec spec;
  std::string key;  // spec_key()
};

// The claim as topoguard's fixes would leave it, when they add an alignment constraint.
std::optional<FixedSpec> fixed_spec(const Json& object, const ClaimVerdict& verdict,
                                    cel::ProgramCache& programs) {
  JsonPatch operations;
  for (const ClaimFinding& finding : verdict.findings) {
    operations.insert(operations.end(), finding.fix.begin(), finding.fix.end());
  }
  if (operations.empty()) {
    return std::nullopt;
  }
  auto fixed = apply_patch(object, operations);
  if (!fixed) {
    return std::nullopt;
  }
  auto spec = k8s::read_claim_spec(*fixed, &programs);
  if (!spec) {
    return std::nullopt;
  }
  std::string key = spec_key(*fixed, *spec);
  return FixedSpec{std::move(spec).value(), std::move(key)};
}

std::string request_pointer(const k8s::ClaimSpec& spec, const std::string& label) {
  const std::string name = label.substr(0, label.find('/'));
  for (const k8s::DeviceRequest& request : spec.requests) {
    if (request.name == name) {
      return request.pointer;
    }
  }
  return spec.devices_pointer;
}

// The nodes that could hold `spec` as written, when on each of them (and there is one) the
// hardware cannot hold `fixed`, the claim with the alignment constraint; empty otherwise.
std::vector<std::string> alignment_impossible_on(const k8s::ClaimSpec& spec,
                                                 const std::string& key,
                                                 const FixedSpec& fixed,
                                                 const cluster::ClusterState& state,
                                                 cluster::FeasibilityOptions options) {
  options.with_allocations = false;
  // Node by node: with node shapes, the two claims may group nodes differently.
  options.spec_key = key;
  const std::vector<cluster::NodeFeasibility> as_written =
      cluster::per_node(*cluster::check_feasibility_cached(spec, state, options), state);
  options.spec_key = fixed.key;
  const std::vector<cluster::NodeFeasibility> aligned =
      cluster::per_node(*cluster::check_feasibility_cached(fixed.spec, state, options), state);
  std::vector<std::string> nodes;
  for (std::size_t i = 0; i < as_written.size() && i < aligned.size(); ++i) {
    if (as_written[i].verdict != cluster::Verdict::kSatisfiable) {
      continue;
    }
    if (aligned[i].verdict != cluster::Verdict::kUnsatisfiable) {
      return {};
    }
    nodes.push_back(as_written[i].node);
  }
  return nodes;
}

}  // namespace

void check_claim_feasibility(const Json& object, const k8s::ClaimSpec& spec, ClaimVerdict& verdict,
                             const cluster::ClusterState& state, const policy::Policy& policy,
                             const cluster::NodeShapes* shapes, cluster::FeasibilityCache* cache,
                             cluster::StepBudget* budget, cel::ProgramCache& programs) {
  std::vector<ClaimFinding>& findings = verdict.findings;
  const k8s::DeviceConstraint* constraint = alignment_constraint(spec, verdict, policy);
  const bool what_if = constraint == nullptr;
  std::optional<FixedSpec> fixed;
  if (what_if) {
    fixed = fixed_spec(object, verdict, programs);
    if (!fixed || !has_alignment_constraint(fixed->spec, policy)) {
      return;
    }
  }
  const std::string key = cache != nullptr ? spec_key(object, spec) : std::string();
  const k8s::ClaimSpec& target = what_if ? fixed->spec : spec;
  cluster::FeasibilityOptions options;
  const k8s::ObjectRef ref = k8s::object_ref(object);
  options.own_claim = ref.namespace_name + "/" + ref.name;
  options.shapes = shapes;
  options.budget = budget;
  options.cache = cache;
  options.spec_key = what_if ? fixed->key : key;
  const cluster::ClaimFeasibilityPtr answer =
      cluster::check_feasibility_cached(target, state, options);
  const cluster::ClaimFeasibility& feasibility = *answer;
  if (what_if && verdict.misalignment == policy::RuleId::kNumaOnlyAlignment) {
    const std::vector<std::string> nodes =
        alignment_impossible_on(spec, key, *fixed, state, options);
    for (ClaimFinding& finding : findings) {
      if (!nodes.empty() && finding.rule == policy::RuleId::kNumaOnlyAlignment) {
        finding.alignment_impossible = true;
        finding.fix.clear();
        finding.message += messages::alignment_impossible(nodes, policy.alignment_attribute);
      }
    }
  }

  if (feasibility.allocation_error) {
    // The same derived attribute is in the claim as written, fixed or not.
    findings.push_back(
        ClaimFinding{policy::RuleId::kUnsatisfiableAlignment, feasibility.allocation_error->pointer,
                     messages::allocation_fails(*feasibility.allocation_error), {}});
  } else if (feasibility.verdict == cluster::Verdict::kUnsatisfiable) {
    findings.push_back(
        ClaimFinding{policy::RuleId::kUnsatisfiableAlignment,
                     constraint != nullptr ? constraint->pointer : spec.constraints_pointer,
                     messages::unsatisfiable(feasibility, what_if), {}});
  }
  for (const cluster::AttributePublication& publication : feasibility.publications) {
    if (!policy.is_alignment_attribute(publication.attribute) ||
        (publication.nodes_without.empty() && publication.nonstandard_values.empty())) {
      continue;
    }
    findings.push_back(ClaimFinding{policy::RuleId::kAttributeNotPublished,
                                    request_pointer(spec, publication.request),
                                    messages::attribute_not_published(publication, what_if),
                                    {}});
  }
}

}  // namespace topoguard::engine
