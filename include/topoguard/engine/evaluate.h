// The policy engine: object + policies (+ what is known of other objects) in, findings and a
// JSONPatch out. Pure and deterministic: no I/O, logging, clock or globals. Every policy judges the
// object as submitted (none sees another's fix); findings come in policy-name order, rules in a
// fixed order. Safe to call concurrently.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "topoguard/common/json.h"
#include "topoguard/engine/finding.h"
#include "topoguard/engine/inventory.h"
#include "topoguard/policy/policy_set.h"

namespace topoguard::cluster {
class StepBudget;
}  // namespace topoguard::cluster

namespace topoguard::engine {

// Whether evaluate() has anything to say about objects of this apiVersion/kind (workloads with
// pod templates, ResourceClaims and their templates).
[[nodiscard]] bool is_evaluated_kind(const Json& object);

// Evaluation::patch is the union of the enabled fixes of all policies, each operation once, to be
// applied once to the object as submitted (callers re-evaluate the result to check it).
[[nodiscard]] Evaluation evaluate(const Json& object, const policy::PolicySet& policies,
                                  const Inventory& inventory);

// evaluate() for one object after another under the same policies and inventory (an audit run,
// a review and the re-check of its patch, a webhook thread's reviews). It remembers what it
// worked out about device classes, drivers and selectors, which recur from object to object,
// and the feasibility answers against the inventory's cluster state, by claim spec (a repeated
// spec costs no step); verdicts are exactly evaluate()'s. Both arguments must outlive it, and
// the inventory's cluster state must not change while it lives (a new state, a new evaluator).
// One per thread: not safe to share between threads.
class Evaluator {
 public:
  Evaluator(const policy::PolicySet& policies, const Inventory& inventory);
  ~Evaluator();
  Evaluator(const Evaluator&) = delete;
  Evaluator& operator=(const Evaluator&) = delete;

  [[nodiscard]] Evaluation evaluate(const Json& object);
  // The same with `cel_budget` cost units for all the object's selectors instead of the API
  // server's per-request budget (cel::kRequestCostBudget): a smaller one bounds the work, and
  // Evaluation::cel_budget_exhausted says when it was too small to give the full answer.
  [[nodiscard]] Evaluation evaluate(const Json& object, std::uint64_t cel_budget);
  // The same with `feasibility_budget` (not owned; null: unbounded) bounding the work of the
  // feasibility checks against the inventory's cluster state, shared with every evaluation it is
  // passed to: past it their answers are unknown (Evaluation::feasibility_budget_exhausted), and
  // unknown adds no finding.
  [[nodiscard]] Evaluation evaluate(const Json& object, std::uint64_t cel_budget,
                                    cluster::StepBudget* feasibility_budget);
  // How many answers it keeps, for callers that bound its memory (it grows with the distinct
  // class names, drivers and selector sets it has seen).
  [[nodiscard]] std::size_t remembered() const;

 private:
  struct Memo;
  const policy::PolicySet& policies_;
  const Inventory& inventory_;
  std::unique_ptr<Memo> memo_;
};

}  // namespace topoguard::engine
