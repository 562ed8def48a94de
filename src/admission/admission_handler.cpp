#include "topoguard/admission/admission_handler.h"

#include <algorithm>
#include <exception>
#include <set>
#include <tuple>
#include <utility>

#include "topoguard/cluster/feasibility.h"
#include "topoguard/common/json_writer.h"
#include "topoguard/common/printable_text.h"
#include "topoguard/engine/json_patch.h"
#include "topoguard/k8s/kinds.h"
#include "topoguard/k8s/object.h"

namespace topoguard::admission {
namespace {

// The API server's limit on all warnings of a response, in characters (k8s.io/apiserver
// pkg/endpoints/filters/warning.go, truncateAtTotalRunes): past it, it cuts each to 256.
constexpr std::size_t kWarningsTotalLimit = 4096;
// Denial messages end up in kubectl output and events; keep them readable and bounded.
constexpr std::size_t kDenialMessageLimit = 16 * 1024;
// Audit annotations are stored with the audit event of every request.
constexpr std::size_t kFindingsAnnotationLimit = 8 * 1024;

// Whether the engine must be shown `object` with metadata.namespace filled in from the request:
// kubectl and controllers rely on the API server to fill it in, and the API server has usually
// done so by the time it calls the webhook, so this is rarely true.
bool needs_namespace(const Json& object, const std::string& namespace_name) {
  if (namespace_name.empty()) {
    return false;
  }
  const Json* metadata = member(object, "metadata");
  if (metadata == nullptr || metadata->is_null()) {
    return true;
  }
  if (!metadata->is_object()) {
    return false;
  }
  const Json* existing = member(*metadata, "namespace");
  return existing == nullptr || !existing->is_string() || existing->get_ref<const std::string&>().empty();
}

// Fills in metadata.namespace when needs_namespace() says so.
void fill_namespace(Json& object, const std::string& namespace_name) {
  if (!needs_namespace(object, namespace_name)) {
    return;
  }
  Json& metadata = object["metadata"];
  if (metadata.is_null()) {
    metadata = Json::object();
  }
  metadata["namespace"] = namespace_name;
}

// The object as the engine is shown it: evaluated in place, or copied into `copy` with its
// namespace filled in when it lacks one (never patched: the patch is checked against the object
// exactly as received).
const Json& as_evaluated(const Json& object, const std::string& namespace_name, Json& copy) {
  if (!needs_namespace(object, namespace_name)) {
    return object;
  }
  copy = object;
  fill_namespace(copy, namespace_name);
  return copy;
}

bool is_continuation_byte(char byte) { return (static_cast<unsigned char>(byte) & 0xC0U) == 0x80U; }

// Characters as the API server counts them (runes): every byte that does not continue a UTF-8
// sequence starts one.
std::size_t character_count(std::string_view text) {
  return static_cast<std::size_t>(
      std::count_if(text.begin(), text.end(), [](char byte) { return !is_continuation_byte(byte); }));
}

// The first `characters` characters of `text`.
std::string_view first_characters(std::string_view text, std::size_t characters) {
  std::size_t at = 0;
  for (std::size_t seen = 0; at < text.size(); ++at) {
    if (!is_continuation_byte(text[at]) && seen++ == characters) {
      break;
    }
  }
  return text.substr(0, at);
}

bool being_deleted(const Json& object) {
  const Json* metadata = member(object, "metadata");
  const Json* deletion = metadata != nullptr ? member(*metadata, "deletionTimestamp") : nullptr;
  return deletion != nullptr && !deletion->is_null();
}

// Whether the two objects differ only in metadata and status (labels, annotations, finalizers,
// owner references, a controller's status write).
bool same_but_metadata_and_status(const Json& object, const Json& old_object) {
  if (!object.is_object() || !old_object.is_object()) {
    return false;
  }
  const auto counted = [](const std::string& key) { return key != "metadata" && key != "status"; };
  std::size_t fields = 0;
  for (const auto& [key, value] : object.items()) {
    if (!counted(key)) {
      continue;
    }
    ++fields;
    const Json* old_value = member(old_object, key);
    if (old_value == nullptr || *old_value != value) {
      return false;
    }
  }
  std::size_t old_fields = 0;
  for (const auto& [key, value] : old_object.items()) {
    old_fields += counted(key) ? 1 : 0;
  }
  return fields == old_fields;
}

// UPDATEs that are never judged, whatever the policies say. Claim and template specs are
// immutable (the API server refuses any change to them), so their UPDATEs touch metadata and
// status only; an object being deleted only loses finalizers; and a workload UPDATE that leaves
// everything but metadata and status as it was adds nothing a rule reads.
bool update_never_judged(const AdmissionRequest& request) {
  const std::string_view group =
      k8s::api_group(string_member_view(request.object, "apiVersion"));
  return request.operation == "UPDATE" &&
         (k8s::is_claim_kind(group, string_member_view(request.object, "kind")) ||
          being_deleted(request.object) ||
          same_but_metadata_and_status(request.object, request.old_object));
}

// A finding is identified across an object's versions by its policy, rule and place.
using FindingKey = std::tuple<std::string, policy::RuleId, std::string>;

FindingKey key_of(const engine::Finding& finding) {
  return {finding.policy, finding.rule, finding.pointer};
}

// On UPDATE only what the change brings is denied (Kyverno's allowExistingViolations): a deny
// finding the old object has too becomes a warning that says so. An old object that cannot be
// evaluated has no findings to keep.
void allow_existing_violations(std::vector<engine::Finding>& findings,
                               const engine::Evaluation& before) {
  if (!before.errors.empty()) {
    return;
  }
  std::set<FindingKey> existing;
  for (const engine::Finding& finding : before.findings) {
    existing.insert(key_of(finding));
  }
  for (engine::Finding& finding : findings) {
    if (finding.action == policy::Action::kDeny && existing.contains(key_of(finding))) {
      finding.action = policy::Action::kWarn;
      finding.message = "existing violation, allowed on update: " + finding.message;
    }
  }
}

std::string where(const engine::Finding& finding) {
  return finding.pointer.empty() ? std::string("/") : finding.pointer;
}

std::string describe_errors(const std::vector<Error>& errors) {
  std::string text = "engine could not evaluate the object: ";
  for (std::size_t i = 0; i < errors.size(); ++i) {
    text += (i == 0 ? "" : "; ") + errors[i].to_string();
  }
  return truncate_text(text, 1024);
}

std::vector<std::string> warnings_for(const std::vector<engine::Finding>& findings) {
  std::vector<std::string> warnings;
  std::set<std::string> seen;
  std::size_t total = 0;
  std::size_t omitted = 0;
  for (const auto& finding : findings) {
    if (finding.action != policy::Action::kWarn) {
      continue;
    }
    // The JSON pointer is left to the audit annotations: the characters are better spent on
    // the message and its fix.
    std::string text = fit_warning(std::string(policy::rule_name(finding.rule)) + ": " +
                                   finding.message);
    if (!seen.insert(text).second) {
      continue;
    }
    // Leave room for the closing "N more" line.
    const std::size_t characters = character_count(text);
    if (total + characters > kWarningsTotalLimit - 64) {
      ++omitted;
      continue;
    }
    total += characters;
    warnings.push_back(std::move(text));
  }
  if (omitted > 0) {
    warnings.push_back("topoguard: " + std::to_string(omitted) +
                       " more warning(s) omitted; see the audit annotations or topoguard audit");
  }
  return warnings;
}

std::string denial_message(const std::vector<engine::Finding>& findings) {
  std::size_t denies = 0;
  for (const auto& finding : findings) {
    denies += finding.action == policy::Action::kDeny ? 1 : 0;
  }
  std::string message = "topoguard: " + std::to_string(denies) +
                        (denies == 1 ? " policy violation" : " policy violations") +
                        " (rule at JSON pointer: how to fix)";
  for (const auto& finding : findings) {
    if (finding.action != policy::Action::kDeny) {
      continue;
    }
    message += "\n- " + std::string(policy::rule_name(finding.rule)) + " at " + where(finding) +
               " (policy " + finding.policy + "): " + finding.message;
  }
  return truncate_text(message, kDenialMessageLimit);
}

std::string findings_annotation(const std::vector<FindingSummary>& findings) {
  Json list = Json::array();
  std::size_t size = 2;
  for (const auto& finding : findings) {
    Json item = Json::object();
    item["rule"] = policy::rule_name(finding.rule);
    item["action"] = policy::action_name(finding.action);
    item["path"] = finding.pointer;
    const std::size_t item_size = to_json_text(item).size() + 1;
    if (size + item_size > kFindingsAnnotationLimit - 32) {
      Json more = Json::object();
      more["truncated"] = findings.size() - list.size();
      list.push_back(std::move(more));
      break;
    }
    size += item_size;
    list.push_back(std::move(item));
  }
  return to_json_text(list);
}

std::vector<FindingSummary> summarize(const std::vector<engine::Finding>& findings) {
  std::vector<FindingSummary> out;
  out.reserve(findings.size());
  for (const auto& finding : findings) {
    out.push_back({finding.rule, finding.action, finding.pointer});
  }
  return out;
}

std::vector<policy::RuleId> fixed_rules(const std::vector<engine::Finding>& findings) {
  std::vector<policy::RuleId> rules;
  for (const auto& finding : findings) {
    if (finding.fix_enabled &&
        std::find(rules.begin(), rules.end(), finding.rule) == rules.end()) {
      rules.push_back(finding.rule);
    }
  }
  return rules;
}

bool has_deny(const std::vector<engine::Finding>& findings) {
  for (const auto& finding : findings) {
    if (finding.action == policy::Action::kDeny) {
      return true;
    }
  }
  return false;
}

// The answer of a first try that its CEL budget could not decide: the failure mode's, marked
// for a second try with the full budget.
HandledReview undecided(const std::string& uid, FailureMode failure_mode) {
  HandledReview handled =
      failure_response(uid, failure_mode, "not decided within the first try's CEL budget");
  handled.outcome.needs_full_budget = true;
  return handled;
}

// `own_object` is request.object when the caller has no further use for it (the patch is then
// checked on it in place), nullptr when it must stay as it is (the patch is checked on a copy).
HandledReview decide(const AdmissionRequest& request, Json* own_object,
                     engine::Evaluator& evaluator, const HandlerOptions& options) {
  HandledReview handled;
  handled.response.uid = request.uid;

  if (request.operation != "CREATE" && request.operation != "UPDATE") {
    handled.outcome.decision = Decision::kSkip;
    return handled;
  }
  if (!request.object.is_object() || !engine::is_evaluated_kind(request.object) ||
      update_never_judged(request)) {
    handled.outcome.decision = Decision::kSkip;
    return handled;
  }

  // Past a first try's budget nothing is decided: the full budget could decide otherwise.
  const bool first_try = options.cel_budget < cel::kRequestCostBudget;
  const auto too_small = [first_try](const engine::Evaluation& evaluation) {
    return first_try && evaluation.cel_budget_exhausted;
  };
  // One budget for every feasibility check of the review (the object, its old and patched forms).
  cluster::StepBudget feasibility(options.feasibility_steps);
  Json with_namespace;
  engine::Evaluation evaluation = evaluator.evaluate(
      as_evaluated(request.object, request.namespace_name, with_namespace), options.cel_budget,
      &feasibility);
  if (too_small(evaluation)) {
    return undecided(request.uid, options.failure_mode);
  }
  if (!evaluation.errors.empty()) {
    return failure_response(request.uid, options.failure_mode,
                            describe_errors(evaluation.errors));
  }
  if (request.operation == "UPDATE" && request.old_object.is_object()) {
    Json old_with_namespace;
    const engine::Evaluation before = evaluator.evaluate(
        as_evaluated(request.old_object, request.namespace_name, old_with_namespace),
        options.cel_budget, &feasibility);
    if (too_small(before)) {
      return undecided(request.uid, options.failure_mode);
    }
    allow_existing_violations(evaluation.findings, before);
  }

  engine::JsonPatch patch;
  const bool may_patch = options.mode == Mode::kMutate && request.operation == "CREATE";
  if (may_patch && !evaluation.patch.empty()) {
    // The API server fails the whole request on a patch that does not apply, even under
    // failurePolicy Ignore, so the patch is tried on the object exactly as received.
    Json copy;
    Json* patched = own_object;
    if (patched == nullptr) {
      copy = request.object;
      patched = &copy;
    }
    if (Status applied = engine::apply_patch_in_place(*patched, evaluation.patch); !applied) {
      handled.outcome.patch_dropped = applied.error().to_string();
    } else {
      fill_namespace(*patched, request.namespace_name);
      engine::Evaluation after = evaluator.evaluate(*patched, options.cel_budget, &feasibility);
      if (too_small(after)) {
        return undecided(request.uid, options.failure_mode);
      }
      if (!after.errors.empty()) {
        handled.outcome.patch_dropped =
            "the patched object does not evaluate: " + describe_errors(after.errors);
      } else {
        patch = std::move(evaluation.patch);
        handled.outcome.patch_rules = fixed_rules(evaluation.findings);
        evaluation = std::move(after);
      }
    }
  }

  handled.outcome.feasibility_steps = feasibility.spent();
  handled.outcome.feasibility_budget_exhausted = feasibility.exhausted();
  handled.outcome.findings = summarize(evaluation.findings);
  handled.response.warnings = warnings_for(evaluation.findings);
  if (has_deny(evaluation.findings)) {
    handled.response.allowed = false;
    handled.response.status.code = 403;
    handled.response.status.reason = "Forbidden";
    handled.response.status.message = denial_message(evaluation.findings);
    handled.outcome.decision = Decision::kDeny;
  } else if (!patch.empty()) {
    handled.outcome.patch_operations = patch.size();
    handled.response.patch = std::move(patch);
    handled.outcome.decision = Decision::kPatch;
  } else {
    handled.outcome.decision = Decision::kAllow;
  }

  auto& annotations = handled.response.audit_annotations;
  annotations["decision"] = std::string(decision_name(handled.outcome.decision));
  if (!handled.outcome.findings.empty()) {
    annotations["findings"] = findings_annotation(handled.outcome.findings);
  }
  if (!handled.outcome.patch_dropped.empty()) {
    annotations["patch-dropped"] = truncate_text(handled.outcome.patch_dropped, 1024);
  }
  if (feasibility.exhausted()) {
    annotations["feasibility"] =
        "unknown: the review's feasibility budget of " + std::to_string(options.feasibility_steps) +
        " steps ran out (or its requester had no share of it left)";
  }
  if (!evaluation.unknown.empty()) {
    std::string unknown;
    for (const std::string& text : evaluation.unknown) {
      unknown += (unknown.empty() ? "" : "; ") + text;
    }
    annotations["unknown"] = truncate_text(unknown, 1024);
    handled.outcome.unknown_namespace = evaluation.unknown_namespace;
  }
  return handled;
}

HandledReview decide_or_fail(const AdmissionRequest& request, Json* own_object,
                             engine::Evaluator& evaluator, const HandlerOptions& options) {
  try {
    return decide(request, own_object, evaluator, options);
  } catch (const std::exception& exception) {
    return failure_response(request.uid, options.failure_mode,
                            std::string("internal error: ") + exception.what());
  } catch (...) {
    return failure_response(request.uid, options.failure_mode, "internal error");
  }
}

}  // namespace

std::string_view mode_name(Mode mode) {
  return mode == Mode::kMutate ? "mutate" : "validate";
}

std::string_view failure_mode_name(FailureMode mode) {
  return mode == FailureMode::kClosed ? "closed" : "open";
}

std::string_view decision_name(Decision decision) {
  switch (decision) {
    case Decision::kSkip:
      return "skip";
    case Decision::kAllow:
      return "allow";
    case Decision::kPatch:
      return "patch";
    case Decision::kDeny:
      return "deny";
    case Decision::kErrorAllow:
      return "error_allow";
    case Decision::kErrorDeny:
      return "error_deny";
  }
  return "unknown";
}

const engine::Inventory& admission_inventory() {
  static const engine::Inventory inventory(engine::Inventory::Claims::kUnknown);
  return inventory;
}

HandledReview handle_admission(const AdmissionRequest& request,
                               const policy::PolicySet& policies, const HandlerOptions& options) {
  engine::Evaluator evaluator(policies, admission_inventory());
  return decide_or_fail(request, nullptr, evaluator, options);
}

HandledReview handle_admission(AdmissionRequest&& request, const policy::PolicySet& policies,
                               const HandlerOptions& options) {
  engine::Evaluator evaluator(policies, admission_inventory());
  return handle_admission(std::move(request), evaluator, options);
}

HandledReview handle_admission(AdmissionRequest&& request, engine::Evaluator& evaluator,
                               const HandlerOptions& options) {
  return decide_or_fail(request, &request.object, evaluator, options);
}

HandledReview failure_response(const std::string& uid, FailureMode failure_mode,
                               std::string reason) {
  HandledReview handled;
  handled.response.uid = uid;
  handled.outcome.error = std::move(reason);
  if (failure_mode == FailureMode::kClosed) {
    handled.response.allowed = false;
    handled.response.status.code = 500;
    handled.response.status.reason = "InternalError";
    handled.response.status.message =
        "topoguard could not decide (failure mode closed): " + handled.outcome.error;
    handled.outcome.decision = Decision::kErrorDeny;
  } else {
    handled.response.warnings.push_back(fit_warning(
        "topoguard did not check this object (failure mode open): " + handled.outcome.error));
    handled.outcome.decision = Decision::kErrorAllow;
  }
  handled.response.audit_annotations["decision"] =
      std::string(decision_name(handled.outcome.decision));
  handled.response.audit_annotations["error"] = truncate_text(handled.outcome.error, 1024);
  return handled;
}

std::string fit_warning(std::string_view raw, std::size_t limit) {
  const std::string text = printable(raw);
  if (character_count(text) <= limit) {
    return text;
  }
  constexpr std::string_view kCut = "...";
  if (limit <= kCut.size()) {
    return std::string(kCut.substr(0, limit));
  }
  const std::size_t fix = text.rfind("; ");
  // The fix is kept when at least a quarter of the room is left for what it fixes.
  if (fix != std::string::npos) {
    const std::size_t fix_characters = character_count(text.substr(fix));
    if (fix_characters + kCut.size() + limit / 4 <= limit) {
      return std::string(first_characters(text, limit - fix_characters - kCut.size())) +
             std::string(kCut) + text.substr(fix);
    }
  }
  return std::string(first_characters(text, limit - kCut.size())) + std::string(kCut);
}

std::string truncate_text(std::string_view text, std::size_t limit) {
  if (text.size() <= limit) {
    return std::string(text);
  }
  constexpr std::string_view kEllipsis = "...";
  if (limit <= kEllipsis.size()) {
    return std::string(kEllipsis.substr(0, limit));
  }
  std::size_t cut = limit - kEllipsis.size();
  // Back up over UTF-8 continuation bytes (10xxxxxx) so a character is never split.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0U) == 0x80U) {
    --cut;
  }
  return std::string(text.substr(0, cut)) + std::string(kEllipsis);
}

}  // namespace topoguard::admission
