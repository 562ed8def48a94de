// The policy engine: object + policies (+ what is known of other objects) in, findings and a
// JSONPatch out. Pure and deterministic: no I/O, logging, clock or globals. Every policy judges the
// object as submitted (none sees another's fix); findings come in policy-name order, rules in a
// fixed order. Safe to call concurrently.
#pragma once

#include "topoguard/common/json.h"
#include "topoguard/engine/finding.h"
#include "topoguard/engine/inventory.h"
#include "topoguard/policy/policy_set.h"

namespace topoguard::engine {

// Whether evaluate() has anything to say about objects of this apiVersion/kind (workloads with
// pod templates, ResourceClaims and their templates).
[[nodiscard]] bool is_evaluated_kind(const Json& object);

// Evaluation::patch is the union of the enabled fixes of all policies, each operation once, to be
// applied once to the object as submitted (callers re-evaluate the result to check it).
[[nodiscard]] Evaluation evaluate(const Json& object, const policy::PolicySet& policies,
                                  const Inventory& inventory);

}  // namespace topoguard::engine
