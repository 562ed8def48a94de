// The admission decision: one AdmissionRequest + a PolicySet snapshot -> one AdmissionResponse.
// It runs the engine, checks its patch by applying it in-process (API-server JSONPatch semantics)
// and re-evaluating, and shapes denials, warnings and audit annotations. No I/O, no logging, no
// clock: what the server logs and counts comes back in ReviewOutcome. Safe to call concurrently.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "topoguard/admission/admission_review.h"
#include "topoguard/cel/cel.h"
#include "topoguard/engine/evaluate.h"
#include "topoguard/policy/policy.h"
#include "topoguard/policy/policy_set.h"

namespace topoguard::admission {

enum class Mode { kMutate, kValidate };
enum class FailureMode { kClosed, kOpen };  // what an internal error turns into: deny | allow

[[nodiscard]] std::string_view mode_name(Mode mode);
[[nodiscard]] std::string_view failure_mode_name(FailureMode mode);

// How a request ended, for metrics, logs and auditAnnotations["decision"].
enum class Decision {
  kSkip,        // not evaluated: DELETE/CONNECT or a kind the engine does not handle
  kAllow,       // evaluated, allowed without a patch
  kPatch,       // allowed with a patch
  kDeny,        // denied by deny-action findings
  kErrorAllow,  // internal error, allowed (failure mode open)
  kErrorDeny,   // internal error, denied (failure mode closed)
};
[[nodiscard]] std::string_view decision_name(Decision decision);

struct FindingSummary {
  policy::RuleId rule = policy::RuleId::kMissingPcieAlignment;
  policy::Action action = policy::Action::kAudit;
  std::string pointer;
};

// What the server logs and counts about one review; never the object body.
struct ReviewOutcome {
  Decision decision = Decision::kSkip;
  std::vector<FindingSummary> findings;  // on the object as admitted (after the patch, if any)
  std::size_t patch_operations = 0;      // operations sent
  std::vector<policy::RuleId> patch_rules;  // the rules whose fixes make up the patch sent, once each
  std::string patch_dropped;             // why an engine patch was not sent; empty otherwise
  std::string error;                     // the internal error, for kErrorAllow / kErrorDeny
  // The review was not decided: HandlerOptions::cel_budget ran out before its selectors were
  // all read. The response is then the failure mode's; deciding the review again, as received
  // (a request handed over may have been patched in place), with the full budget gives its
  // answer.
  bool needs_full_budget = false;
  // Feasibility work done for the review (cluster::StepBudget steps), and whether an answer was
  // left unknown because HandlerOptions::feasibility_steps ran out.
  std::size_t feasibility_steps = 0;
  bool feasibility_budget_exhausted = false;
  // Of those, the review's requester had no share of the feasibility lane (FeasibilityLane).
  bool feasibility_no_share = false;
  // The namespace whose labels the verdict needed and did not have
  // (engine::Evaluation::unknown_namespace; said in auditAnnotations["unknown"]); "" otherwise.
  std::string unknown_namespace;
};

struct HandlerOptions {
  Mode mode = Mode::kValidate;
  FailureMode failure_mode = FailureMode::kClosed;
  // CEL cost units for the object's selectors (and as much again for each re-check: the
  // patched object, the old object of an UPDATE). Below cel::kRequestCostBudget it bounds the
  // work of a first try: a review it cannot decide says so (ReviewOutcome::needs_full_budget)
  // and must be decided again with the full budget.
  std::uint64_t cel_budget = cel::kRequestCostBudget;
  // Steps the review's feasibility checks may take in all (cluster::StepBudget): past them their
  // answer is unknown, never a finding. The verdict and the patch do not depend on it.
  std::size_t feasibility_steps = std::numeric_limits<std::size_t>::max();
};

struct HandledReview {
  AdmissionResponse response;
  ReviewOutcome outcome;
};

// Never throws: an engine error or exception becomes a response per options.failure_mode.
[[nodiscard]] HandledReview handle_admission(const AdmissionRequest& request,
                                             const policy::PolicySet& policies,
                                             const HandlerOptions& options);
// The same decision for a caller done with the request: its object is patched in place to check
// the patch, saving a copy of the object. `request` is left in an unspecified state.
[[nodiscard]] HandledReview handle_admission(AdmissionRequest&& request,
                                             const policy::PolicySet& policies,
                                             const HandlerOptions& options);
// The same, with an Evaluator kept across reviews (made with admission_inventory()): what it
// learnt from earlier reviews is not worked out again.
[[nodiscard]] HandledReview handle_admission(AdmissionRequest&& request,
                                             engine::Evaluator& evaluator,
                                             const HandlerOptions& options);

// What the webhook knows besides the reviewed object: nothing (claims it references are unknown).
[[nodiscard]] const engine::Inventory& admission_inventory();

// The response to send when no decision could be made in time or at all (failure mode).
[[nodiscard]] HandledReview failure_response(const std::string& uid, FailureMode failure_mode,
                                             std::string reason);

// Shortens `text` to at most `limit` bytes at a UTF-8 boundary, ending in "..." when cut.
[[nodiscard]] std::string truncate_text(std::string_view text, std::size_t limit);

// What the API server keeps of each admission warning: 256 characters, counted as code points
// (k8s.io/apiserver pkg/endpoints/filters/warning.go, truncateItemRunes).
inline constexpr std::size_t kWarningCharacters = 256;

// `text` as one admission warning: control characters and invalid UTF-8 escaped (the API server
// drops a warning that holds either), at most `limit` characters. A longer text loses the end of
// what it describes but keeps its fix, the clause after its last "; ", whole when that leaves room
// for a start of the description; it is cut only between characters, marked by "...".
[[nodiscard]] std::string fit_warning(std::string_view text,
                                      std::size_t limit = kWarningCharacters);

}  // namespace topoguard::admission
