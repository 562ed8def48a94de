// How policies steer evaluate(): rule actions and `mutate`, exceptions, match, and custom
// alignment attributes, each with an inline AlignmentPolicy.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine_test_support.h"
#include "note_name.h"
#include "topoguard/engine/evaluate.h"

namespace topoguard::engine {
namespace {

using policy::Action;
using policy::RuleId;
using testing::InventoryFixture;
using testing::parse_one;
using testing::policy_yaml;

// Unaligned GPU+NIC template in namespace ml, labelled team: a.
const std::string kUnalignedPolicyTemplate = R"(apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: t
  namespace: ml
  labels: {team: a}
spec:
  spec:
    devices:
      requests:
      - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}
      - {name: nic, exactly: {deviceClassName: dranet}}
)";

// The same template with its GPU and NIC tied to one PCIe root.
const std::string kAlignedPolicyTemplate = kUnalignedPolicyTemplate +
                                     "      constraints:\n"
                                     "      - {requests: [gpu, nic], matchAttribute: "
                                     "resource.kubernetes.io/pcieRoot}\n";

// Device-plugin pairing in a Deployment whose pods (not the Deployment) carry app: serve.
const std::string kPluginDeployment = R"(apiVersion: apps/v1
kind: Deployment
metadata: {name: d, namespace: ml}
spec:
  template:
    metadata: {labels: {app: serve}}
    spec:
      containers:
      - name: main
        resources:
          limits: {nvidia.com/gpu: "1", rdma/ib: "1"}
)";

struct PolicyCase {
  std::string_view note;
  std::string spec_extra;  // appended to the policy spec
  std::string object;
  std::vector<std::pair<RuleId, Action>> expected;
};

void PrintTo(const PolicyCase& c, std::ostream* os) { *os << c.note; }

class PolicyTest : public ::testing::TestWithParam<PolicyCase> {};

// The object yields exactly the expected (rule, action) findings under the inline policy, named
// after it; fixes are enabled because the fixable rules default to mutate: true.
TEST_P(PolicyTest, YieldsExpectedRulesAndActions) {
  const PolicyCase& c = GetParam();
  const policy::PolicySet policies = testing::inline_policies(policy_yaml(c.spec_extra));
  ASSERT_EQ(policies.policies().size(), 1u);
  const Json object = parse_one(c.object);
  const Inventory inventory;
  const Evaluation evaluation = evaluate(object, policies, inventory);
  SCOPED_TRACE(testing::dump(evaluation));
  ASSERT_EQ(evaluation.findings.size(), c.expected.size());
  for (std::size_t i = 0; i < c.expected.size(); ++i) {
    const Finding& finding = evaluation.findings[i];
    EXPECT_EQ(finding.rule, c.expected[i].first);
    EXPECT_EQ(finding.action, c.expected[i].second);
    EXPECT_EQ(finding.policy, "custom");
    EXPECT_EQ(finding.fix_enabled, !finding.fix.empty());
  }
  testing::expect_fixes_converge(object, evaluation, policies, inventory);
}

const std::vector<std::pair<RuleId, Action>> kMissingDeny{
    {RuleId::kMissingPcieAlignment, Action::kDeny}};
const std::vector<std::pair<RuleId, Action>> kPluginWarn{
    {RuleId::kDevicePluginPairing, Action::kWarn}};

INSTANTIATE_TEST_SUITE_P(
    Actions, PolicyTest,
    ::testing::Values(
        PolicyCase{"default_rules_deny", "", kUnalignedPolicyTemplate, kMissingDeny},
        PolicyCase{"action_warn", "  rules: {missing-pcie-alignment: {action: warn}}\n",
                   kUnalignedPolicyTemplate, {{RuleId::kMissingPcieAlignment, Action::kWarn}}},
        PolicyCase{"action_audit", "  rules: {missing-pcie-alignment: {action: audit}}\n",
                   kUnalignedPolicyTemplate, {{RuleId::kMissingPcieAlignment, Action::kAudit}}},
        PolicyCase{"action_off", "  rules: {missing-pcie-alignment: {action: off}}\n",
                   kUnalignedPolicyTemplate, {}},
        PolicyCase{"plugin_pairing_deny", "  rules: {device-plugin-pairing: {action: deny}}\n",
                   kPluginDeployment, {{RuleId::kDevicePluginPairing, Action::kDeny}}},
        PolicyCase{"plugin_pairing_off", "  rules: {device-plugin-pairing: {action: off}}\n",
                   kPluginDeployment, {}}),
    topoguard::testing::NoteName());

INSTANTIATE_TEST_SUITE_P(
    Exceptions, PolicyTest,
    ::testing::Values(
        PolicyCase{"by_namespace", R"(  exceptions:
  - {name: e, reason: r, match: {namespaces: {include: [ml]}}}
)",
                   kUnalignedPolicyTemplate, {}},
        PolicyCase{"other_namespace_does_not_except", R"(  exceptions:
  - {name: e, reason: r, match: {namespaces: {include: [other]}}}
)",
                   kUnalignedPolicyTemplate, kMissingDeny},
        PolicyCase{"by_pod_template_selector", R"(  exceptions:
  - {name: e, reason: r, match: {selector: {matchLabels: {app: serve}}}}
)",
                   kPluginDeployment, {}},
        PolicyCase{"selector_not_matching", R"(  exceptions:
  - {name: e, reason: r, match: {selector: {matchLabels: {app: other}}}}
)",
                   kPluginDeployment, kPluginWarn},
        PolicyCase{"by_object_label_expression", R"(  exceptions:
  - name: e
    reason: r
    match: {selector: {matchExpressions: [{key: team, operator: In, values: [a, b]}]}}
)",
                   kUnalignedPolicyTemplate, {}},
        PolicyCase{"by_kind", R"(  exceptions:
  - {name: e, reason: r, match: {kinds: [ResourceClaimTemplate]}}
)",
                   kUnalignedPolicyTemplate, {}},
        PolicyCase{"other_kind_does_not_except", R"(  exceptions:
  - {name: e, reason: r, match: {kinds: [Deployment]}}
)",
                   kUnalignedPolicyTemplate, kMissingDeny},
        PolicyCase{"by_name", R"(  exceptions:
  - {name: e, reason: r, match: {names: ['t']}}
)",
                   kUnalignedPolicyTemplate, {}},
        PolicyCase{"name_pattern_is_full_match", R"(  exceptions:
  - {name: e, reason: r, match: {names: ['t.+']}}
)",
                   kUnalignedPolicyTemplate, kMissingDeny},
        PolicyCase{"by_rule", R"(  exceptions:
  - {name: e, reason: r, rules: [missing-pcie-alignment], match: {namespaces: {include: [ml]}}}
)",
                   kUnalignedPolicyTemplate, {}},
        PolicyCase{"other_rule_does_not_except", R"(  exceptions:
  - {name: e, reason: r, rules: [device-plugin-pairing], match: {namespaces: {include: [ml]}}}
)",
                   kUnalignedPolicyTemplate, kMissingDeny}),
    topoguard::testing::NoteName());

INSTANTIATE_TEST_SUITE_P(
    ActionOverrides, PolicyTest,
    ::testing::Values(
        PolicyCase{"namespace_override_applies", R"(  rules: {missing-pcie-alignment: {action: warn}}
  actionOverrides:
  - {namespaces: ['prod', 'ml'], rules: [missing-pcie-alignment], action: deny}
)",
                   kUnalignedPolicyTemplate, kMissingDeny},
        PolicyCase{"other_namespace_keeps_rule_action", R"(  rules: {missing-pcie-alignment: {action: warn}}
  actionOverrides:
  - {namespaces: ['prod-.*'], action: deny}
)",
                   kUnalignedPolicyTemplate, {{RuleId::kMissingPcieAlignment, Action::kWarn}}},
        PolicyCase{"selector_override_on_pod_labels", R"(  actionOverrides:
  - {selector: {matchLabels: {app: serve}}, action: audit}
)",
                   kPluginDeployment, {{RuleId::kDevicePluginPairing, Action::kAudit}}},
        PolicyCase{"first_covering_override_wins", R"(  actionOverrides:
  - {namespaces: ['ml'], rules: [split-claims], action: warn}
  - {namespaces: ['m.*'], action: audit}
  - {namespaces: ['ml'], action: warn}
)",
                   kUnalignedPolicyTemplate, {{RuleId::kMissingPcieAlignment, Action::kAudit}}},
        PolicyCase{"override_without_rules_leaves_off_rules_off", R"(  rules: {missing-pcie-alignment: {action: off}}
  actionOverrides:
  - {namespaces: ['ml'], action: deny}
)",
                   kUnalignedPolicyTemplate, {}},
        PolicyCase{"override_naming_an_off_rule_turns_it_on", R"(  rules: {missing-pcie-alignment: {action: off}}
  actionOverrides:
  - {namespaces: ['ml'], rules: [missing-pcie-alignment], action: warn}
)",
                   kUnalignedPolicyTemplate, {{RuleId::kMissingPcieAlignment, Action::kWarn}}},
        PolicyCase{"override_to_off", R"(  actionOverrides:
  - {namespaces: ['ml'], action: off}
)",
                   kUnalignedPolicyTemplate, {}}),
    topoguard::testing::NoteName());

INSTANTIATE_TEST_SUITE_P(
    Match, PolicyTest,
    ::testing::Values(
        PolicyCase{"include_is_full_match", "  match: {namespaces: {include: ['m']}}\n",
                   kUnalignedPolicyTemplate, {}},
        PolicyCase{"include_pattern_matches", "  match: {namespaces: {include: ['m.*']}}\n",
                   kUnalignedPolicyTemplate, kMissingDeny},
        PolicyCase{"exclude_namespace", "  match: {namespaces: {exclude: ['ml|prod']}}\n",
                   kUnalignedPolicyTemplate, {}},
        PolicyCase{"exclude_is_full_match", "  match: {namespaces: {exclude: ['l']}}\n",
                   kUnalignedPolicyTemplate, kMissingDeny},
        PolicyCase{"selector_on_object_labels", "  match: {selector: {matchLabels: {team: a}}}\n",
                   kUnalignedPolicyTemplate, kMissingDeny},
        PolicyCase{"selector_not_matching_object",
                   "  match: {selector: {matchLabels: {team: b}}}\n", kUnalignedPolicyTemplate, {}},
        PolicyCase{"selector_on_pod_template_labels",
                   "  match: {selector: {matchLabels: {app: serve}}}\n", kPluginDeployment,
                   kPluginWarn},
        PolicyCase{"selector_does_not_exist",
                   "  match: {selector: {matchExpressions: [{key: team, operator: "
                   "DoesNotExist}]}}\n",
                   kUnalignedPolicyTemplate, {}},
        PolicyCase{"kinds_include_deployment", "  match: {kinds: [Deployment]}\n",
                   kPluginDeployment, kPluginWarn},
        PolicyCase{"kinds_exclude_template", "  match: {kinds: [Deployment]}\n",
                   kUnalignedPolicyTemplate, {}},
        PolicyCase{"names", "  match: {names: ['d']}\n", kPluginDeployment, kPluginWarn},
        PolicyCase{"names_not_matching", "  match: {names: ['x']}\n", kPluginDeployment, {}}),
    topoguard::testing::NoteName());

// namespaceSelector reads the labels of the object's Namespace from the inventory (audit input,
// the cluster cache); every Namespace has kubernetes.io/metadata.name. When the labels are not
// known the selector is unknown: a policy that may not apply does not run, an exception that may
// apply waives, an override that may apply never makes the action stronger; each is said once,
// with the namespace, where the labels could make the verdict stronger.
struct NamespaceCase {
  std::string_view note;
  std::string spec_extra;
  bool namespace_known;  // the inventory has Namespace ml, labelled tier: prod
  std::vector<std::pair<RuleId, Action>> expected;
  std::size_t exempted = 0;
  std::size_t unknown = 0;
  std::string object = kUnalignedPolicyTemplate;
};

void PrintTo(const NamespaceCase& c, std::ostream* os) { *os << c.note; }

class NamespaceSelectorTest : public ::testing::TestWithParam<NamespaceCase> {};

TEST_P(NamespaceSelectorTest, ReadsTheNamespaceLabels) {
  const NamespaceCase& c = GetParam();
  const policy::PolicySet policies = testing::inline_policies(policy_yaml(c.spec_extra));
  ASSERT_EQ(policies.policies().size(), 1u);
  const Json ml = parse_one("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ml\n"
                            "  labels: {tier: prod}\n");
  Inventory inventory;
  if (c.namespace_known) {
    ASSERT_TRUE(inventory.add(ml));
  }
  const Evaluation evaluation = evaluate(parse_one(c.object), policies, inventory);
  SCOPED_TRACE(testing::dump(evaluation));
  ASSERT_EQ(evaluation.findings.size(), c.expected.size());
  for (std::size_t i = 0; i < c.expected.size(); ++i) {
    EXPECT_EQ(evaluation.findings[i].rule, c.expected[i].first);
    EXPECT_EQ(evaluation.findings[i].action, c.expected[i].second);
  }
  EXPECT_EQ(evaluation.exempted.size(), c.exempted);
  ASSERT_EQ(evaluation.unknown.size(), c.unknown);
  EXPECT_EQ(evaluation.unknown_namespace, c.unknown == 0 ? "" : "ml");
  for (const std::string& text : evaluation.unknown) {
    EXPECT_THAT(text, ::testing::HasSubstr("the labels of namespace \"ml\" are not known"));
  }
  for (const Finding& finding : evaluation.exempted) {
    EXPECT_EQ(finding.exception_reason.find("cannot be evaluated") != std::string::npos,
              !c.namespace_known);
  }
}

const std::string kProdSelector = "{matchLabels: {tier: prod}}";

INSTANTIATE_TEST_SUITE_P(
    Cases, NamespaceSelectorTest,
    ::testing::Values(
        NamespaceCase{"match_selects_the_namespace",
                      "  match: {namespaceSelector: " + kProdSelector + "}\n", true, kMissingDeny},
        NamespaceCase{"match_other_labels",
                      "  match: {namespaceSelector: {matchLabels: {tier: dev}}}\n", true, {}},
        NamespaceCase{"match_not_in_labels",
                      "  match: {namespaceSelector: {matchExpressions: [{key: tier, operator: "
                      "NotIn, values: [prod]}]}}\n",
                      true, {}},
        NamespaceCase{"match_unknown_namespace_does_not_run",
                      "  match: {namespaceSelector: " + kProdSelector + "}\n", false, {}, 0, 1},
        NamespaceCase{"name_label_without_namespace_object",
                      "  match: {namespaceSelector: {matchExpressions: [{key: "
                      "kubernetes.io/metadata.name, operator: In, values: [ml]}]}}\n",
                      false, kMissingDeny},
        NamespaceCase{"name_label_on_a_namespace_object_without_it",
                      "  match: {namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: "
                      "ml, tier: prod}}}\n",
                      true, kMissingDeny},
        NamespaceCase{"exception_by_namespace_labels",
                      "  exceptions:\n  - {name: e, reason: r, match: {namespaceSelector: " +
                          kProdSelector + "}}\n",
                      true, {}, 1},
        NamespaceCase{"exception_unknown_waives_and_says_so",
                      "  exceptions:\n  - {name: e, reason: r, match: {namespaceSelector: " +
                          kProdSelector + "}}\n",
                      false, {}, 1, 1},
        NamespaceCase{"exception_unknown_without_finding_is_silent",
                      "  exceptions:\n  - {name: e, reason: r, match: {namespaceSelector: " +
                          kProdSelector + "}}\n",
                      false, {}, 0, 0, kAlignedPolicyTemplate},
        NamespaceCase{"override_by_namespace_labels",
                      "  rules: {missing-pcie-alignment: {action: warn}}\n  actionOverrides:\n"
                      "  - {namespaceSelector: " +
                          kProdSelector + ", action: deny}\n",
                      true, kMissingDeny},
        NamespaceCase{"override_unknown_never_strengthens",
                      "  rules: {missing-pcie-alignment: {action: warn}}\n  actionOverrides:\n"
                      "  - {namespaceSelector: " +
                          kProdSelector + ", action: deny}\n",
                      false, {{RuleId::kMissingPcieAlignment, Action::kWarn}}, 0, 1},
        NamespaceCase{"override_unknown_without_finding_is_silent",
                      "  rules: {missing-pcie-alignment: {action: warn}}\n  actionOverrides:\n"
                      "  - {namespaceSelector: " +
                          kProdSelector + ", action: deny}\n",
                      false, {}, 0, 0, kAlignedPolicyTemplate},
        NamespaceCase{"override_unknown_that_cannot_strengthen_is_silent",
                      "  actionOverrides:\n  - {namespaceSelector: " + kProdSelector +
                          ", action: deny}\n",
                      false, kMissingDeny, 0, 0},
        NamespaceCase{"override_unknown_could_turn_an_off_rule_on",
                      "  rules: {missing-pcie-alignment: {action: off}}\n  actionOverrides:\n"
                      "  - {namespaceSelector: " +
                          kProdSelector + ", rules: [missing-pcie-alignment], action: deny}\n",
                      false, {}, 0, 1},
        NamespaceCase{"override_unknown_weakens",
                      "  actionOverrides:\n  - {namespaceSelector: " + kProdSelector +
                          ", action: audit}\n",
                      false, {{RuleId::kMissingPcieAlignment, Action::kAudit}}, 0, 1},
        NamespaceCase{"override_unknown_then_a_known_one",
                      "  actionOverrides:\n  - {namespaceSelector: " + kProdSelector +
                          ", action: warn}\n  - {namespaces: [ml], action: deny}\n",
                      false, {{RuleId::kMissingPcieAlignment, Action::kWarn}}, 0, 1}),
    topoguard::testing::NoteName());

// A finding an exception waives is kept in Evaluation::exempted with the exception's name and
// reason, out of the findings and the patch.
TEST(PolicyExceptionTest, WaivedFindingIsRecordedNotActedOn) {
  const policy::PolicySet policies = testing::inline_policies(policy_yaml(R"(  exceptions:
  - {name: legacy, reason: "validated by hand", match: {namespaces: {include: [ml]}}}
)"));
  const Evaluation evaluation =
      evaluate(parse_one(kUnalignedPolicyTemplate), policies, Inventory());
  EXPECT_TRUE(evaluation.findings.empty());
  EXPECT_TRUE(evaluation.patch.empty());
  ASSERT_EQ(evaluation.exempted.size(), 1u);
  EXPECT_EQ(evaluation.exempted[0].rule, RuleId::kMissingPcieAlignment);
  EXPECT_EQ(evaluation.exempted[0].action, Action::kDeny);
  EXPECT_EQ(evaluation.exempted[0].exception, "legacy");
  EXPECT_EQ(evaluation.exempted[0].exception_reason, "validated by hand");
  EXPECT_FALSE(evaluation.exempted[0].fix_enabled);
}

// mutate: false keeps the fix in the finding (for the report) but out of the patch.
TEST(PolicyMutateTest, MutateFalseReportsFixButDoesNotPatch) {
  const policy::PolicySet policies = testing::inline_policies(
      policy_yaml("  rules: {missing-pcie-alignment: {action: deny, mutate: false}}\n"));
  const Evaluation evaluation =
      evaluate(parse_one(kUnalignedPolicyTemplate), policies, Inventory());
  ASSERT_EQ(evaluation.findings.size(), 1u);
  EXPECT_EQ(evaluation.findings[0].rule, RuleId::kMissingPcieAlignment);
  EXPECT_FALSE(evaluation.findings[0].fix.empty());
  EXPECT_FALSE(evaluation.findings[0].fix_enabled);
  EXPECT_TRUE(evaluation.patch.empty());
}

// The policy's alignment attribute is what fixes write; accepted attributes also align.
TEST(PolicyAttributeTest, CustomAlignmentAttributeIsUsedByTheFix) {
  const policy::PolicySet policies = testing::inline_policies(
      policy_yaml("").replace(policy_yaml("").find("attribute: resource.kubernetes.io/pcieRoot"),
                              std::string("attribute: resource.kubernetes.io/pcieRoot").size(),
                              "attribute: example.com/pcieRoot"));
  const Evaluation evaluation =
      evaluate(parse_one(kUnalignedPolicyTemplate), policies, Inventory());
  ASSERT_EQ(evaluation.findings.size(), 1u);
  EXPECT_EQ(patch_to_json(evaluation.patch),
            Json::parse(R"([{"op":"add","path":"/spec/spec/devices/constraints","value":[
                {"requests":["gpu","nic"],"matchAttribute":"example.com/pcieRoot"}]}])"));
}

TEST(PolicyAttributeTest, AcceptedAttributeCountsAsAligned) {
  const policy::PolicySet policies = testing::inline_policies(
      policy_yaml("").replace(policy_yaml("").find("    numaAttributes"), 0,
                              "    acceptedAttributes: [example.com/root]\n"));
  const Json object = parse_one(kUnalignedPolicyTemplate + R"(      constraints:
      - {requests: [gpu, nic], matchAttribute: example.com/root}
)");
  EXPECT_TRUE(evaluate(object, policies, Inventory()).findings.empty());
  // The built-in policy does not accept it.
  EXPECT_EQ(evaluate(object, testing::builtin_policies(), Inventory()).findings.size(), 1u);
}

// Two policies: each judges the object as submitted and reports under its own name; their
// identical fixes appear once in the patch, which applies in one go and re-evaluates clean.
TEST(PolicySetTest, EveryPolicyJudgesTheObjectAsSubmitted) {
  const policy::PolicySet policies =
      testing::inline_policies(policy_yaml("", "second") + "---\n" + policy_yaml("", "first"));
  const Json object = parse_one(kUnalignedPolicyTemplate);
  const Evaluation evaluation = evaluate(object, policies, Inventory());
  ASSERT_EQ(evaluation.findings.size(), 2u) << testing::dump(evaluation);
  EXPECT_EQ(evaluation.findings[0].policy, "first");  // policy-name order, not file order
  EXPECT_EQ(evaluation.findings[1].policy, "second");
  EXPECT_EQ(evaluation.patch, evaluation.findings[0].fix);
  const Json patched = object.patch(patch_to_json(evaluation.patch));
  EXPECT_TRUE(evaluate(patched, policies, Inventory()).findings.empty());
}

// An observing policy (audit, mutate on) next to an enforcing one: the enforcing one still
// denies the object as submitted, whichever comes first; the fix is in the patch once.
TEST(PolicySetTest, ObservingPolicyDoesNotHideAnotherPolicysDenial) {
  const std::string observe =
      policy_yaml("  rules: {missing-pcie-alignment: {action: audit}}\n", "a-observe");
  const std::string enforce = policy_yaml("", "b-enforce");
  for (const std::string& yaml : {observe + "---\n" + enforce, enforce + "---\n" + observe}) {
    const Evaluation evaluation =
        evaluate(parse_one(kUnalignedPolicyTemplate), testing::inline_policies(yaml), Inventory());
    ASSERT_EQ(evaluation.findings.size(), 2u) << testing::dump(evaluation);
    EXPECT_EQ(evaluation.findings[0].action, Action::kAudit);
    EXPECT_EQ(evaluation.findings[1].action, Action::kDeny);
    EXPECT_EQ(evaluation.patch.size(), 1u);
  }
}

// Policies whose fixes differ (two alignment attributes) both add the absent constraints array:
// the patch adds it once, holding both constraints, instead of the second add replacing the first.
TEST(PolicySetTest, DifferentFixesOfOneArrayAreJoined) {
  const std::string base = policy_yaml("", "other");
  const std::string other =
      std::string(base).replace(base.find("attribute: resource.kubernetes.io/pcieRoot"),
                                std::string("attribute: resource.kubernetes.io/pcieRoot").size(),
                                "attribute: example.com/pcieRoot");
  const policy::PolicySet policies =
      testing::inline_policies(policy_yaml("", "default") + "---\n" + other);
  const Json object = parse_one(kUnalignedPolicyTemplate);
  const Evaluation evaluation = evaluate(object, policies, Inventory());
  EXPECT_EQ(patch_to_json(evaluation.patch),
            Json::parse(R"([{"op":"add","path":"/spec/spec/devices/constraints","value":[
                {"requests":["gpu","nic"],"matchAttribute":"resource.kubernetes.io/pcieRoot"},
                {"requests":["gpu","nic"],"matchAttribute":"example.com/pcieRoot"}]}])"));
  EXPECT_TRUE(evaluate(object.patch(patch_to_json(evaluation.patch)), policies, Inventory())
                  .findings.empty());
}

// A claim whose fields have the wrong types is an error with the field's pointer, not a crash.
TEST(EvaluateErrorsTest, MalformedClaimIsAnErrorNamingTheField) {
  const Json object = parse_one(R"(apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: t, namespace: ml}
spec:
  spec:
    devices:
      requests: "gpu"
)");
  const Evaluation evaluation = evaluate(object, testing::builtin_policies(), Inventory());
  EXPECT_TRUE(evaluation.findings.empty());
  ASSERT_EQ(evaluation.errors.size(), 1u);
  EXPECT_EQ(evaluation.errors[0].location.field, "/spec/spec/devices/requests");
  EXPECT_EQ(evaluation.errors[0].code, ErrorCode::kWrongType);
}

// Objects evaluate() does not judge yield nothing, whatever they contain.
TEST(EvaluateKindsTest, OtherKindsAndNonObjectsYieldNothing) {
  for (const std::string yaml :
       {"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {a: b}\n",
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: x}\n", "[1, 2]\n",
        "just a string\n"}) {
    const Json object = parse_one(yaml);
    EXPECT_FALSE(is_evaluated_kind(object)) << yaml;
    const Evaluation evaluation = evaluate(object, testing::builtin_policies(), Inventory());
    EXPECT_TRUE(evaluation.findings.empty()) << yaml;
    EXPECT_TRUE(evaluation.errors.empty()) << yaml;
  }
  EXPECT_TRUE(is_evaluated_kind(parse_one(kUnalignedPolicyTemplate)));
  EXPECT_TRUE(is_evaluated_kind(parse_one(kPluginDeployment)));
}

struct CheckedCase {
  std::string_view note;
  std::string spec_extra;
  std::string object;
  bool claims_known;
  std::vector<RuleId> expected;  // all under policy "custom"
};

void PrintTo(const CheckedCase& c, std::ostream* os) { *os << c.note; }

class CheckedRulesTest : public ::testing::TestWithParam<CheckedCase> {};

// evaluate() lists the rules it ran for the object, found or not: the enabled rules of each
// matching policy that mean something for the object's kind (reports show them as passes).
TEST_P(CheckedRulesTest, ListsEnabledRulesForKind) {
  const CheckedCase& c = GetParam();
  const policy::PolicySet policies = testing::inline_policies(policy_yaml(c.spec_extra));
  const Inventory inventory(c.claims_known ? Inventory::Claims::kKnown
                                           : Inventory::Claims::kUnknown);
  const Evaluation evaluation = evaluate(parse_one(c.object), policies, inventory);
  std::vector<RuleId> rules;
  for (const CheckedRule& checked : evaluation.checked) {
    EXPECT_EQ(checked.policy, "custom");
    rules.push_back(checked.rule);
  }
  EXPECT_EQ(rules, c.expected);
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, CheckedRulesTest,
    ::testing::Values(
        CheckedCase{"claim_rules", "", kUnalignedPolicyTemplate, true,
                    {RuleId::kMissingPcieAlignment, RuleId::kNumaOnlyAlignment,
                     RuleId::kMultiDeviceAlignment, RuleId::kOverriddenAlignmentAttribute}},
        CheckedCase{"workload_rules_with_claims_known", "", kPluginDeployment, true,
                    {RuleId::kMissingPcieAlignment, RuleId::kNumaOnlyAlignment,
                     RuleId::kDevicePluginPairing, RuleId::kSplitClaims,
                     RuleId::kUnresolvedClaim}},
        CheckedCase{"webhook_cannot_resolve_claims", "", kPluginDeployment, false,
                    {RuleId::kMissingPcieAlignment, RuleId::kNumaOnlyAlignment,
                     RuleId::kDevicePluginPairing, RuleId::kSplitClaims}},
        CheckedCase{"disabled_rule_not_checked",
                    "  rules: {numa-only-alignment: {action: off}}\n",
                    kUnalignedPolicyTemplate, true,
                    {RuleId::kMissingPcieAlignment, RuleId::kMultiDeviceAlignment,
                     RuleId::kOverriddenAlignmentAttribute}},
        CheckedCase{"policy_not_matching_checks_nothing",
                    "  match: {namespaces: {exclude: [ml]}}\n", kUnalignedPolicyTemplate, true,
                    {}}),
    topoguard::testing::NoteName());

}  // namespace
}  // namespace topoguard::engine
