// What the engine reports: findings (rule, action, message, where) and the JSONPatch of the
// fixes it may apply. Plain values, produced by evaluate() and consumed by audit and admission.
#pragma once

#include <string>
#include <vector>

#include "topoguard/common/json.h"
#include "topoguard/common/result.h"
#include "topoguard/engine/json_patch.h"
#include "topoguard/k8s/object.h"
#include "topoguard/policy/policy.h"

namespace topoguard::engine {

struct Finding {
  std::string policy;
  policy::RuleId rule = policy::RuleId::kMissingPcieAlignment;
  policy::Action action = policy::Action::kAudit;
  std::string message;
  k8s::ObjectRef resource;
  std::string pointer;          // JSON pointer of the offending element in the object
  JsonPatch fix;                // empty when the finding has no fix
  bool fix_enabled = false;     // the rule's `mutate` is on: the fix is part of the patch
  // Set on findings an exception waives (Evaluation::exempted): its name and reason.
  std::string exception;
  std::string exception_reason;
};

// A rule that ran on the object under a policy (enabled there and meaningful for the object's
// kind), whether or not it found something: reports show the ones without findings as passes.
struct CheckedRule {
  std::string policy;
  policy::RuleId rule = policy::RuleId::kMissingPcieAlignment;
};

struct Evaluation {
  std::vector<Finding> findings;
  // Findings an exception of their policy waives: reported as such, never acted on (no action,
  // no fix in the patch).
  std::vector<Finding> exempted;
  std::vector<CheckedRule> checked;  // policies in set order, rules in RuleId order
  JsonPatch patch;             // every enabled fix, applicable to the input object as one patch
  std::vector<Error> errors;   // malformed parts of the object; location.field names the field
  // Some selector ended unknown because the object's CEL budget ran out: with a larger budget
  // the verdict could differ.
  bool cel_budget_exhausted = false;
  // A feasibility check stopped when the feasibility budget given ran out: its answer is
  // unknown (no unsatisfiable-alignment or attribute-not-published finding came of it).
  bool feasibility_budget_exhausted = false;
  // What the policies ask that could not be decided for this object (a namespaceSelector on a
  // Namespace whose labels are not known), each said once, and only where the labels could make
  // the verdict stronger: a policy that may apply did not run, an override that may apply made
  // no action stronger, an exception that may apply waived a finding.
  std::vector<std::string> unknown;
  // The namespace whose labels those needed (the object's), when `unknown` is not empty: the
  // verdict was reached without them and is never stronger than with them.
  std::string unknown_namespace;
};

}  // namespace topoguard::engine
