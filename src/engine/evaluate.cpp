#include "topoguard/engine/evaluate.h"

#include <algorithm>
#include <array>
#include <initializer_list>
#include <optional>

#include "claim_alignment.h"
#include "claim_feasibility.h"
#include "device_roles.h"
#include "messages.h"
#include "topoguard/cluster/feasibility_cache.h"
#include "topoguard/k8s/claim_view.h"
#include "topoguard/k8s/kinds.h"
#include "topoguard/k8s/object.h"
#include "topoguard/k8s/pod_spec_view.h"
#include "topoguard/k8s/pod_template.h"

namespace topoguard::engine {

namespace {

using policy::RuleId;

using policy::MatchOutcome;

// A namespace selector on the labels of `namespace_name`: those of its Namespace when the
// inventory has it, else only the name label every Namespace carries.
MatchOutcome namespace_matches(const policy::LabelSelector& selector,
                               const std::string& namespace_name, const Inventory& inventory) {
  Json labels = Json::object();
  if (const Json* known = inventory.namespace_labels(namespace_name)) {
    if (known->is_object()) {
      labels = *known;
    }
  } else if (!selector.reads_only(policy::kNamespaceNameLabel)) {
    return MatchOutcome::kUnknown;
  }
  labels[std::string(policy::kNamespaceNameLabel)] = namespace_name;
  return selector.matches(labels) ? MatchOutcome::kYes : MatchOutcome::kNo;
}

MatchOutcome matches(const policy::Match& match, const Json& object, const k8s::ObjectRef& ref,
                     const std::vector<k8s::PodTemplateLocation>& templates,
                     const Inventory& inventory) {
  if (!match.kinds.empty() &&
      std::find(match.kinds.begin(), match.kinds.end(), ref.kind) == match.kinds.end()) {
    return MatchOutcome::kNo;
  }
  if (!match.names.empty() && !match.names.matches_any(ref.name)) {
    return MatchOutcome::kNo;
  }
  MatchOutcome by_namespace = MatchOutcome::kYes;
  if (!k8s::is_cluster_scoped(ref)) {
    const std::string namespace_name = k8s::effective_namespace(ref);
    if (!match.include_namespaces.empty() &&
        !match.include_namespaces.matches_any(namespace_name)) {
      return MatchOutcome::kNo;
    }
    if (match.exclude_namespaces.matches_any(namespace_name)) {
      return MatchOutcome::kNo;
    }
    if (match.namespace_selector) {
      by_namespace = namespace_matches(*match.namespace_selector, namespace_name, inventory);
      if (by_namespace == MatchOutcome::kNo) {
        return MatchOutcome::kNo;
      }
    }
  }
  if (match.selector && !match.selector->matches(k8s::labels_of(object)) &&
      // Workloads also match by the labels their pods get.
      std::none_of(templates.begin(), templates.end(),
                   [&](const k8s::PodTemplateLocation& location) {
                     return !location.template_pointer.empty() &&
                            location.template_object != nullptr &&
                            match.selector->matches(k8s::labels_of(*location.template_object));
                   })) {
    return MatchOutcome::kNo;
  }
  return by_namespace;
}

// What an evaluation says of a namespace selector it could not evaluate.
std::string unknown_namespace_text(const k8s::ObjectRef& ref) {
  return "the labels of namespace \"" + k8s::effective_namespace(ref) +
         "\" are not known (no Namespace object in the input or the cluster cache)";
}

// Evaluates one object under one policy.
class PolicyEvaluator {
 public:
  PolicyEvaluator(const policy::Policy& policy, const Inventory& inventory,
                  const DeviceRoles& roles, const Json& object, const k8s::ObjectRef& ref,
                  const std::vector<k8s::PodTemplateLocation>& templates,
                  cluster::StepBudget* feasibility_budget, cel::ProgramCache& programs,
                  cluster::FeasibilityCache& feasibility_answers, Evaluation& out)
      : policy_(policy),
        inventory_(inventory),
        roles_(roles),
        object_(object),
        ref_(ref),
        templates_(templates),
        feasibility_budget_(feasibility_budget),
        programs_(programs),
        feasibility_answers_(feasibility_answers),
        out_(out) {}

  void run() {
    if (k8s::is_claim_kind(k8s::api_group(ref_.api_version), ref_.kind)) {
      note_checked({RuleId::kMissingPcieAlignment, RuleId::kNumaOnlyAlignment,
                    RuleId::kMultiDeviceAlignment});
      if (inventory_.cluster_state() != nullptr) {
        note_checked({RuleId::kUnsatisfiableAlignment, RuleId::kAttributeNotPublished});
      }
      note_checked({RuleId::kOverriddenAlignmentAttribute});
      evaluate_claim();
      return;
    }
    note_checked({RuleId::kMissingPcieAlignment, RuleId::kNumaOnlyAlignment,
                  RuleId::kDevicePluginPairing, RuleId::kSplitClaims});
    if (inventory_.claims_known()) {
      note_checked({RuleId::kUnresolvedClaim});
    }
    for (const k8s::PodTemplateLocation& location : templates_) {
      evaluate_pod(k8s::read_pod_spec(location));
    }
  }

 private:
  struct ClaimUse {
    const k8s::PodClaimReference* reference;
    std::string source;  // for messages: claim "x" (ResourceClaimTemplate y)
    ClaimVerdict verdict;
  };

  // The rules this object is checked against: the enabled ones among those for its kind.
  void note_checked(std::initializer_list<RuleId> rules) {
    for (RuleId rule : rules) {
      if (action_of(rule) != policy::Action::kOff) {
        out_.checked.push_back(CheckedRule{policy_.name, rule});
      }
    }
  }

  void evaluate_claim() {
    auto spec = k8s::read_claim_spec(object_, &programs_);
    if (!spec) {
      out_.errors.push_back(spec.error());
      return;
    }
    ClaimVerdict verdict = analyze_claim(*spec, roles_, policy_);
    if (const cluster::ClusterState* state = inventory_.cluster_state();
        state != nullptr &&
        (enabled(RuleId::kUnsatisfiableAlignment) || enabled(RuleId::kAttributeNotPublished) ||
         policy_.rule(RuleId::kNumaOnlyAlignment).when_alignment_impossible)) {
      check_claim_feasibility(object_, *spec, verdict, *state, policy_, inventory_.node_shapes(),
                              &feasibility_answers_, feasibility_budget_, programs_);
    }
    for (ClaimFinding& finding : verdict.findings) {
      emit(finding.rule, finding.pointer, std::move(finding.message), std::move(finding.fix),
           finding.alignment_impossible);
    }
  }

  void evaluate_pod(const k8s::PodSpecView& pod) {
    const std::string namespace_name = k8s::effective_namespace(ref_);
    std::vector<ClaimUse> uses;
    for (const k8s::PodClaimReference& reference : pod.claims) {
      if (auto use = resolve(reference, namespace_name)) {
        uses.push_back(std::move(*use));
      }
    }

    std::vector<std::string> gpu_sources;
    std::vector<std::string> nic_sources;
    for (const ClaimUse& use : uses) {
      if (use.verdict.roles.gpu) {
        gpu_sources.push_back(use.source);
      }
      if (use.verdict.roles.nic) {
        nic_sources.push_back(use.source);
      }
    }
    std::optional<std::string> plugin_gpu_pointer;
    std::optional<std::string> plugin_nic_pointer;
    for (const k8s::ExtendedResourceRequest& request : pod.extended_resources) {
      const Roles roles = roles_.of_extended_resource(request.resource);
      const std::string source = "extended resource " + request.resource;
      if (roles.gpu) {
        gpu_sources.push_back(source);
        plugin_gpu_pointer = plugin_gpu_pointer.value_or(request.pointer);
      }
      if (roles.nic) {
        nic_sources.push_back(source);
        plugin_nic_pointer = plugin_nic_pointer.value_or(request.pointer);
      }
    }
    for (const k8s::NetworkAttachment& network : pod.networks) {
      const std::string* resource = inventory_.network_resource(
          network.namespace_name.empty() ? namespace_name : network.namespace_name, network.name);
      if (resource != nullptr && roles_.of_extended_resource(*resource).nic) {
        nic_sources.push_back("Multus network \"" + network.name + "\" (resource " + *resource +
                              ")");
        plugin_nic_pointer = plugin_nic_pointer.value_or(pod.networks_pointer);
      }
    }
    for (const std::string& network : pod.gke_networks) {
      if (roles_.of_extended_resource(std::string(kGkeNetworkResourcePrefix) + network).nic) {
        nic_sources.push_back("GKE network \"" + network + "\" (networking.gke.io/interfaces)");
        plugin_nic_pointer = plugin_nic_pointer.value_or(pod.gke_interfaces_pointer);
      }
    }

    if (!gpu_sources.empty() && !nic_sources.empty()) {
      if (plugin_gpu_pointer || plugin_nic_pointer) {
        emit(RuleId::kDevicePluginPairing, plugin_nic_pointer.value_or(*plugin_gpu_pointer),
             messages::device_plugin_pairing(gpu_sources, nic_sources,
                                             policy_.alignment_attribute));
      } else if (is_split(uses)) {
        emit(RuleId::kSplitClaims, pod.location.spec_pointer + "/resourceClaims",
             messages::split_claims(gpu_sources, nic_sources, policy_.alignment_attribute));
      }
    }
    for (const ClaimUse& use : uses) {
      if (use.verdict.roles.gpu && use.verdict.roles.nic && use.verdict.misalignment) {
        const bool numa_only = *use.verdict.misalignment == RuleId::kNumaOnlyAlignment;
        emit(*use.verdict.misalignment, use.reference->pointer,
             messages::inherited(use.source, numa_only, policy_.alignment_attribute));
      }
    }
  }

  // A pod's GPU and NIC are split when one claim holds one role without the other while a
  // different claim holds the other role. Counted, not compared pairwise.
  static bool is_split(const std::vector<ClaimUse>& uses) {
    std::size_t with_gpu = 0;
    std::size_t with_nic = 0;
    std::size_t gpu_only = 0;
    std::size_t nic_only = 0;
    for (const ClaimUse& use : uses) {
      const Roles& roles = use.verdict.roles;
      with_gpu += roles.gpu ? 1 : 0;
      with_nic += roles.nic ? 1 : 0;
      gpu_only += roles.gpu && !roles.nic ? 1 : 0;
      nic_only += roles.nic && !roles.gpu ? 1 : 0;
    }
    // A GPU-only claim holds no NIC, so any claim with a NIC is another one (and the reverse).
    return (gpu_only > 0 && with_nic > 0) || (nic_only > 0 && with_gpu > 0);
  }

  std::optional<ClaimUse> resolve(const k8s::PodClaimReference& reference,
                                  const std::string& namespace_name) {
    const bool by_template = !reference.template_name.empty();
    const std::string& target_name = by_template ? reference.template_name : reference.claim_name;
    if (target_name.empty()) {
      return std::nullopt;
    }
    const std::string kind(by_template ? k8s::kResourceClaimTemplateKind
                                       : k8s::kResourceClaimKind);
    const Json* target = by_template ? inventory_.claim_template(namespace_name, target_name)
                                     : inventory_.claim(namespace_name, target_name);
    if (target == nullptr) {
      if (inventory_.claims_known()) {
        emit(RuleId::kUnresolvedClaim, reference.pointer,
             messages::unresolved(reference.name, kind, target_name, namespace_name));
      }
      return std::nullopt;
    }
    auto spec = k8s::read_claim_spec(*target, &programs_);
    if (!spec) {
      return std::nullopt;  // reported where the claim itself is evaluated
    }
    return ClaimUse{&reference,
                    "claim \"" + reference.name + "\" (" + kind + " " + target_name + ")",
                    analyze_claim(*spec, roles_, policy_)};
  }

  // The rule's action on this object: its own (for a finding where alignment is impossible, its
  // whenAlignmentImpossible action), or an action override's. An override the labels could make
  // stronger is said only where that changes something: the action of a finding (`for_finding`)
  // or whether the rule runs at all.
  policy::Action action_of(RuleId rule, bool alignment_impossible = false,
                           bool for_finding = false) const {
    bool unknown = false;
    const auto override_matches = [&](const policy::Match& match) {
      const MatchOutcome outcome = matches(match, object_, ref_, templates_, inventory_);
      unknown = unknown || outcome == MatchOutcome::kUnknown;
      return outcome;
    };
    const policy::Action action = policy_.action_for(rule, override_matches, alignment_impossible);
    if (unknown && (for_finding || action == policy::Action::kOff) &&
        policy_.action_for(rule, override_matches, alignment_impossible,
                           policy::UnknownBound::kStrongest) < action) {
      note_unknown("an action override's namespaceSelector cannot be evaluated: " +
                   unknown_namespace_text(ref_) + "; the weaker action applies");
    }
    return action;
  }

  bool enabled(RuleId rule) const { return action_of(rule) != policy::Action::kOff; }

  // The first exception of the policy that waives `rule` on this object, if any; asked once per
  // rule, as an object can have a finding for each of thousands of pod templates or constraints.
  const policy::PolicyException* exception_for(RuleId rule) {
    std::optional<const policy::PolicyException*>& known =
        exception_[static_cast<std::size_t>(rule)];
    if (!known) {
      known = nullptr;
      for (const policy::PolicyException& exception : policy_.exceptions) {
        const bool covers_rule = exception.rules.empty() ||
                                 std::find(exception.rules.begin(), exception.rules.end(), rule) !=
                                     exception.rules.end();
        const MatchOutcome outcome =
            covers_rule ? matches(exception.match, object_, ref_, templates_, inventory_)
                        : MatchOutcome::kNo;
        if (outcome != MatchOutcome::kNo) {
          // One that may apply waives too: a finding kept from a team its exception covers
          // would be a denial on a guess.
          known = &exception;
          exception_unknown_[static_cast<std::size_t>(rule)] = outcome == MatchOutcome::kUnknown;
          break;
        }
      }
    }
    return *known;
  }

  void emit(RuleId rule, std::string pointer, std::string message, JsonPatch fix = {},
            bool alignment_impossible = false) {
    const policy::RuleSettings& settings = policy_.rule(rule);
    const policy::Action action = action_of(rule, alignment_impossible, true);
    if (action == policy::Action::kOff) {
      return;
    }
    Finding finding;
    finding.policy = policy_.name;
    finding.rule = rule;
    finding.action = action;
    finding.message = std::move(message);
    finding.resource = ref_;
    finding.pointer = std::move(pointer);
    finding.fix_enabled = !fix.empty() && settings.mutate;
    finding.fix = std::move(fix);
    // A waived finding is kept for the record, never acted on: no decision, no fix.
    if (const policy::PolicyException* exception = exception_for(rule)) {
      finding.fix_enabled = false;
      finding.exception = exception->name;
      finding.exception_reason = exception->reason;
      if (exception_unknown_[static_cast<std::size_t>(rule)]) {
        finding.exception_reason += " (applied though its namespaceSelector cannot be evaluated: " +
                                    unknown_namespace_text(ref_) + ")";
        note_unknown("exception \"" + exception->name +
                     "\": its namespaceSelector cannot be evaluated: " +
                     unknown_namespace_text(ref_) + "; it waives the finding");
      }
      out_.exempted.push_back(std::move(finding));
      return;
    }
    out_.findings.push_back(std::move(finding));
  }

  const policy::Policy& policy_;
  const Inventory& inventory_;
  const DeviceRoles& roles_;
  const Json& object_;
  const k8s::ObjectRef& ref_;
  const std::vector<k8s::PodTemplateLocation>& templates_;
  cluster::StepBudget* feasibility_budget_;  // null: unbounded
  cel::ProgramCache& programs_;
  cluster::FeasibilityCache& feasibility_answers_;
  Evaluation& out_;
  // Says once per object and policy what could not be evaluated.
  void note_unknown(std::string text) const {
    text = "policy \"" + policy_.name + "\": " + text;
    if (std::find(out_.unknown.begin(), out_.unknown.end(), text) == out_.unknown.end()) {
      out_.unknown.push_back(std::move(text));
    }
    out_.unknown_namespace = k8s::effective_namespace(ref_);
  }

  // by RuleId
  std::array<std::optional<const policy::PolicyException*>, policy::kRuleCount> exception_;
  std::array<bool, policy::kRuleCount> exception_unknown_{};
};

// Adds `operation` to `patch` unless it is already there. Two policies that fix one claim whose
// constraints array is absent each `add` the whole array; a second `add` would replace the
// first, so the elements of the second join the first instead (each element once).
void add_to_union(JsonPatch& patch, const PatchOperation& operation) {
  for (PatchOperation& existing : patch) {
    if (existing == operation) {
      return;
    }
    if (existing.path == operation.path && existing.value.is_array() &&
        operation.value.is_array()) {
      Json& elements = existing.value;
      for (const Json& element : operation.value) {
        if (std::find(elements.begin(), elements.end(), element) == elements.end()) {
          elements.push_back(element);
        }
      }
      return;
    }
  }
  patch.push_back(operation);
}

}  // namespace

bool is_evaluated_kind(const Json& object) {
  const std::string_view group = k8s::api_group(string_member_view(object, "apiVersion"));
  const std::string_view kind = string_member_view(object, "kind");
  return k8s::is_claim_kind(group, kind) || k8s::is_workload_kind(group, kind);
}

namespace {

// Charges a DeviceRoles' selector evaluations to `budget` while it lives.
class BudgetScope {
 public:
  BudgetScope(const DeviceRoles& roles, cel::CostBudget& budget) : roles_(roles) {
    roles_.set_budget(&budget);
  }
  ~BudgetScope() { roles_.set_budget(nullptr); }
  BudgetScope(const BudgetScope&) = delete;
  BudgetScope& operator=(const BudgetScope&) = delete;

 private:
  const DeviceRoles& roles_;
};

}  // namespace

// Per policy, in the policy set's order.
struct Evaluator::Memo {
  std::vector<DeviceRoles> roles;
  // The claims' expressions, compiled once for every policy and object that repeats them.
  cel::ProgramCache programs;
  // Feasibility answers against the inventory's cluster state, by claim spec: a claim checked
  // before (by any policy, in any object) costs no step.
  cluster::FeasibilityCache feasibility_answers;
};

Evaluator::Evaluator(const policy::PolicySet& policies, const Inventory& inventory)
    : policies_(policies), inventory_(inventory), memo_(std::make_unique<Memo>()) {
  memo_->roles.reserve(policies.policies().size());
  for (const policy::Policy& policy : policies.policies()) {
    memo_->roles.emplace_back(policy, inventory);
  }
}

Evaluator::~Evaluator() = default;

std::size_t Evaluator::remembered() const {
  std::size_t total = 0;
  for (const DeviceRoles& roles : memo_->roles) {
    total += roles.remembered();
  }
  return total;
}

Evaluation Evaluator::evaluate(const Json& object) {
  return evaluate(object, cel::kRequestCostBudget);
}

Evaluation Evaluator::evaluate(const Json& object, std::uint64_t cel_budget) {
  return evaluate(object, cel_budget, nullptr);
}

Evaluation Evaluator::evaluate(const Json& object, std::uint64_t cel_budget,
                               cluster::StepBudget* feasibility_budget) {
  Evaluation evaluation;
  if (!object.is_object() || !is_evaluated_kind(object)) {
    return evaluation;
  }
  const k8s::ObjectRef ref = k8s::object_ref(object);
  const auto templates = k8s::locate_pod_templates(object);
  // Every policy judges the object as submitted, never another policy's fix, so neither the
  // order nor the names of policy files can change a verdict.
  // One CEL budget for the whole object, as the API server has one per request: past it, the
  // object's remaining selectors are unknown.
  cel::CostBudget budget(cel_budget);
  const std::vector<policy::Policy>& policies = policies_.policies();
  for (std::size_t i = 0; i < policies.size(); ++i) {
    switch (matches(policies[i].match, object, ref, templates, inventory_)) {
      case MatchOutcome::kYes: {
        const BudgetScope charged(memo_->roles[i], budget);
        PolicyEvaluator(policies[i], inventory_, memo_->roles[i], object, ref, templates,
                        feasibility_budget, memo_->programs, memo_->feasibility_answers,
                        evaluation)
            .run();
        break;
      }
      case MatchOutcome::kUnknown:
        // Never judged on a guess: the policy may not apply here.
        evaluation.unknown.push_back("policy \"" + policies[i].name +
                                     "\": its namespaceSelector cannot be evaluated: " +
                                     unknown_namespace_text(ref) + "; its rules did not run");
        evaluation.unknown_namespace = k8s::effective_namespace(ref);
        break;
      case MatchOutcome::kNo:
        break;
    }
  }
  evaluation.cel_budget_exhausted = budget.cut_short();
  evaluation.feasibility_budget_exhausted =
      feasibility_budget != nullptr && feasibility_budget->exhausted();
  for (const Finding& finding : evaluation.findings) {
    if (finding.fix_enabled) {
      for (const PatchOperation& operation : finding.fix) {
        add_to_union(evaluation.patch, operation);
      }
    }
  }
  return evaluation;
}

Evaluation evaluate(const Json& object, const policy::PolicySet& policies,
                    const Inventory& inventory) {
  return Evaluator(policies, inventory).evaluate(object);
}

}  // namespace topoguard::engine
