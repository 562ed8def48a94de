// The feasibility rules of one claim spec against the cluster state (audit --cluster-state):
// unsatisfiable-alignment when no node can hold a claim with an alignment constraint, and
// attribute-not-published when a driver a constrained request may get publishes no alignment
// attribute (or one in a format that never matches). A claim without an alignment constraint
// is judged as the fix topoguard would inject (what-if). A numa-only-alignment finding of
// `verdict` is marked alignment_impossible (its fix dropped: it would keep the pods Pending) when
// the hardware could hold the claim as written but, on every node that could, not with the fix.
// Pure.
#pragma once

#include <vector>

#include "claim_alignment.h"
#include "topoguard/cluster/cluster_state.h"
#include "topoguard/cluster/feasibility.h"
#include "topoguard/cluster/feasibility_cache.h"
#include "topoguard/cluster/shape_index.h"
#include "topoguard/common/json.h"
#include "topoguard/k8s/claim_view.h"
#include "topoguard/policy/policy.h"

namespace topoguard::engine {

// `object` is the claim or template `spec` was read from; `verdict` its alignment verdict
// (its fixes are the what-if), which gets the new findings. `shapes`: the state's node shapes,
// or null to check node by node (the same answers). `cache` (null: none) keeps answers for
// `state`, by claim spec. `budget` (null: unbounded) bounds the checks' work; an answer past it
// is unknown and adds no finding. The fixed claim's expressions are compiled through `programs`.
void check_claim_feasibility(const Json& object, const k8s::ClaimSpec& spec, ClaimVerdict& verdict,
                             const cluster::ClusterState& state, const policy::Policy& policy,
                             const cluster::NodeShapes* shapes, cluster::FeasibilityCache* cache,
                             cluster::StepBudget* budget, cel::ProgramCache& programs);

}  // namespace topoguard::engine
