// The AlignmentPolicy model (topoguard.dev/v1alpha1): plain, immutable values built once by the
// parser and shared read-only. Rule ids are the public contract of output, policies and docs.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "topoguard/common/json.h"
#include "topoguard/common/source_location.h"
#include "topoguard/k8s/kinds.h"
#include "topoguard/policy/pattern.h"

namespace topoguard::policy {

enum class RuleId {
  kMissingPcieAlignment,
  kNumaOnlyAlignment,
  kDevicePluginPairing,
  kSplitClaims,
  kMultiDeviceAlignment,
  kUnresolvedClaim,
  kUnsatisfiableAlignment,  // needs the cluster state (audit --cluster-state)
  kAttributeNotPublished,   // needs the cluster state (audit --cluster-state)
  kOverriddenAlignmentAttribute,
};
inline constexpr std::size_t kRuleCount = 9;
inline constexpr std::array<RuleId, kRuleCount> kAllRules{
    RuleId::kMissingPcieAlignment,        RuleId::kNumaOnlyAlignment,
    RuleId::kDevicePluginPairing,         RuleId::kSplitClaims,
    RuleId::kMultiDeviceAlignment,        RuleId::kUnresolvedClaim,
    RuleId::kUnsatisfiableAlignment,      RuleId::kAttributeNotPublished,
    RuleId::kOverriddenAlignmentAttribute};

// "missing-pcie-alignment", ...
[[nodiscard]] std::string_view rule_name(RuleId rule);
[[nodiscard]] std::optional<RuleId> parse_rule_name(std::string_view name);
// Whether the rule can produce a JSONPatch fix.
[[nodiscard]] bool rule_is_fixable(RuleId rule);

// Ordered from most to least severe; kOff disables the rule.
enum class Action { kDeny, kWarn, kAudit, kOff };
[[nodiscard]] std::string_view action_name(Action action);
[[nodiscard]] std::optional<Action> parse_action_name(std::string_view name);

struct LabelRequirement {
  enum class Operator { kIn, kNotIn, kExists, kDoesNotExist };
  std::string key;
  Operator op = Operator::kExists;
  std::vector<std::string> values;
};

// A Kubernetes label selector (matchLabels AND matchExpressions). Empty matches everything.
struct LabelSelector {
  std::map<std::string, std::string> match_labels;
  std::vector<LabelRequirement> match_expressions;

  [[nodiscard]] bool matches(const Json& labels) const;
  // Whether every requirement is on `key` alone (so the labels it reads are known when that
  // one is).
  [[nodiscard]] bool reads_only(std::string_view key) const;
};

// The label the API server sets on every Namespace to its name (immutable).
inline constexpr std::string_view kNamespaceNameLabel = "kubernetes.io/metadata.name";

// Whether a match selects an object; kUnknown when that depends on what is not known (the
// labels of a Namespace that is not in the input or the cluster cache).
enum class MatchOutcome { kNo, kYes, kUnknown };

// Which of the actions an override that may or may not select the object (kUnknown) leaves
// possible: the weakest (what the engine acts on) or the strongest (what the labels could make it).
enum class UnknownBound { kWeakest, kStrongest };

// Which objects a policy or exception applies to. Empty lists mean "no restriction".
struct Match {
  PatternList include_namespaces;  // RE2 full-match; empty: every namespace
  PatternList exclude_namespaces;
  std::optional<LabelSelector> selector;  // on the object's labels or any pod template's labels
  std::vector<std::string> kinds;         // e.g. Deployment, ResourceClaimTemplate
  PatternList names;                      // RE2 full-match on metadata.name
  // On the labels of the object's Namespace; a cluster-scoped object is not restricted.
  std::optional<LabelSelector> namespace_selector;
};

// How devices of one role (GPU or NIC) are recognised.
struct DeviceRecognizer {
  PatternList device_class_names;  // DeviceClass names in requests
  PatternList drivers;             // driver names (from DeviceClass or request CEL selectors)
  PatternList extended_resources;  // container resource names (device plugins, DRA ext. res.)
};

struct RuleSettings {
  Action action = Action::kOff;
  bool mutate = false;  // for fixable rules: whether the webhook / `fix` apply the fix
  // numa-only-alignment only: the action instead of `action` when the cluster state shows that
  // the alignment attribute can be met on no node that could hold the claim, so NUMA is the
  // best alignment the hardware offers (`whenAlignmentImpossible`).
  std::optional<Action> when_alignment_impossible = std::nullopt;
};

struct PolicyException {
  std::string name;
  std::string reason;
  Match match;
  std::vector<RuleId> rules;  // empty: every rule
  SourceLocation origin;
};

// Another action for some rules on objects in some namespaces or with some labels, like Kyverno's
// validationFailureActionOverrides: "deny in prod, warn elsewhere" in one policy. The first
// override of a policy that covers a finding decides its action.
struct ActionOverride {
  Action action = Action::kDeny;
  std::vector<RuleId> rules;  // empty: every rule that is not `off` in the policy
  Match match;                // namespaces (include patterns) and/or selector
  SourceLocation origin;
};

struct Policy {
  std::string name;
  SourceLocation origin;  // file and line of the policy document
  Match match;
  DeviceRecognizer gpu;
  DeviceRecognizer nic;
  std::string alignment_attribute{k8s::kPcieRootAttribute};  // used by fixes
  std::vector<std::string> accepted_attributes;  // other attributes that also count as aligned
  PatternList numa_attributes;  // qualified attribute names that only express NUMA locality
  std::array<RuleSettings, kRuleCount> rules{};
  std::vector<PolicyException> exceptions;
  std::vector<ActionOverride> action_overrides;
  // What the document left out and took from the built-in policy, as spec paths such as
  // "devices.gpu", "alignment.numaAttributes" or "rules.split-claims" (for `policy show`).
  std::vector<std::string> inherited;

  [[nodiscard]] const RuleSettings& rule(RuleId id) const {
    return rules[static_cast<std::size_t>(id)];
  }
  // The action `rule` has on an object that `override_matches` (Match -> MatchOutcome) says an
  // override selects: the first covering override's action, else the rule's own (its
  // whenAlignmentImpossible action for a finding that says the alignment attribute is impossible
  // there). A covering override that may or may not select the object (kUnknown) never makes
  // the action stronger than it would be: the weaker of the two stands. With
  // UnknownBound::kStrongest, the stronger: the action the unknown could hide.
  template <typename OverrideMatches>
  [[nodiscard]] Action action_for(RuleId id, OverrideMatches&& override_matches,
                                  bool alignment_impossible = false,
                                  UnknownBound bound = UnknownBound::kWeakest) const {
    const RuleSettings& settings = rule(id);
    const Action own = alignment_impossible && settings.when_alignment_impossible
                           ? *settings.when_alignment_impossible
                           : settings.action;
    // Actions order from deny to off: the larger is the weaker.
    std::optional<Action> bound_unknown;
    const auto bounded = [&bound_unknown, bound](Action action) {
      if (!bound_unknown) {
        return action;
      }
      return bound == UnknownBound::kWeakest ? std::max(action, *bound_unknown)
                                             : std::min(action, *bound_unknown);
    };
    for (const ActionOverride& entry : action_overrides) {
      const bool covers = entry.rules.empty()
                              ? own != Action::kOff
                              : std::find(entry.rules.begin(), entry.rules.end(), id) !=
                                    entry.rules.end();
      if (!covers) {
        continue;
      }
      switch (override_matches(entry.match)) {
        case MatchOutcome::kYes:
          return bounded(entry.action);
        case MatchOutcome::kUnknown:
          bound_unknown = bounded(entry.action);
          break;
        case MatchOutcome::kNo:
          break;
      }
    }
    return bounded(own);
  }
  // alignment_attribute or one of accepted_attributes.
  [[nodiscard]] bool is_alignment_attribute(std::string_view attribute) const;
};

}  // namespace topoguard::policy
