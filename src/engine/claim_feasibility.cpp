#include "claim_feasibility.h"

#include <algorithm>
#include <optional>

#include "messages.h"
#include "topoguard/cluster/feasibility.h"
#include "topoguard/engine/json_patch.h"

namespace topoguard::engine {

namespace {

bool has_alignment_constraint(const k8s::ClaimSpec& spec, const policy::Policy& policy) {
  return std::any_of(spec.constraints.begin(), spec.constraints.end(),
                     [&](const k8s::DeviceConstraint& constraint) {
                       return policy.is_alignment_attribute(constraint.match_attribute);
                     });
}

// The claim as topoguard's fixes would leave it, when they add an alignment constraint.
std::optional<k8s::ClaimSpec> fixed_spec(const Json& object, const ClaimVerdict& verdict) {
  Json operations = Json::array();
  for (const ClaimFinding& finding : verdict.findings) {
    for (const Json& operation : finding.fix) {
      operations.push_back(operation);
    }
  }
  if (operations.empty()) {
    return std::nullopt;
  }
  auto fixed = apply_patch(object, operations);
  if (!fixed) {
    return std::nullopt;
  }
  auto spec = k8s::read_claim_spec(*fixed);
  return spec ? std::optional(std::move(spec).value()) : std::nullopt;
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

}  // namespace

std::vector<ClaimFinding> check_claim_feasibility(const Json& object, const k8s::ClaimSpec& spec,
                                                  const ClaimVerdict& verdict,
                                                  const cluster::ClusterState& state,
                                                  const policy::Policy& policy) {
  std::vector<ClaimFinding> findings;
  const bool what_if = !has_alignment_constraint(spec, policy);
  std::optional<k8s::ClaimSpec> fixed;
  if (what_if) {
    fixed = fixed_spec(object, verdict);
    if (!fixed || !has_alignment_constraint(*fixed, policy)) {
      return findings;
    }
  }
  const k8s::ClaimSpec& target = what_if ? *fixed : spec;
  const cluster::ClaimFeasibility feasibility = cluster::check_feasibility(target, state);

  if (feasibility.verdict == cluster::Verdict::kUnsatisfiable) {
    const auto constraint = std::find_if(
        spec.constraints.begin(), spec.constraints.end(), [&](const k8s::DeviceConstraint& c) {
          return policy.is_alignment_attribute(c.match_attribute);
        });
    findings.push_back(ClaimFinding{
        policy::RuleId::kUnsatisfiableAlignment,
        constraint != spec.constraints.end() ? constraint->pointer : spec.constraints_pointer,
        messages::unsatisfiable(feasibility, what_if), Json::array()});
  }
  for (const cluster::AttributePublication& publication : feasibility.publications) {
    if (!policy.is_alignment_attribute(publication.attribute) ||
        (publication.nodes_without.empty() && publication.nonstandard_values.empty())) {
      continue;
    }
    findings.push_back(ClaimFinding{policy::RuleId::kAttributeNotPublished,
                                    request_pointer(spec, publication.request),
                                    messages::attribute_not_published(publication, what_if),
                                    Json::array()});
  }
  return findings;
}

}  // namespace topoguard::engine
