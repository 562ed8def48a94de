#include "policy_parser.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "note_name.h"
#include "topoguard/common/yaml_document.h"
#include "topoguard/policy/policy_loader.h"

namespace topoguard::policy {
namespace {

using ::testing::HasSubstr;

// Parses one document; `inherited` fills in what it omits (nullptr: the plain defaults).
PolicyParseOutcome parse(const std::string& yaml, const Policy* inherited = nullptr) {
  YamlStream stream = parse_yaml_stream(yaml, "policy.yaml");
  EXPECT_TRUE(stream.errors.empty()) << stream.errors.front().to_string();
  EXPECT_EQ(stream.documents.size(), 1u);
  const YamlDocument& document = stream.documents.at(0);
  return parse_policy(document.value, document.lines, "policy.yaml", inherited);
}

PolicyParseOutcome parse_inheriting(const std::string& yaml) {
  return parse(yaml, &builtin_policy());
}

std::string all_errors(const PolicyParseOutcome& outcome) {
  std::string text;
  for (const Error& error : outcome.errors) {
    text += error.to_string() + "\n";
  }
  return text;
}

// Lines 1-5; a case's spec body starts on line 6.
const std::string kHeader = R"(apiVersion: topoguard.dev/v1alpha1
kind: AlignmentPolicy
metadata:
  name: p
spec:
)";

struct ErrorCase {
  std::string_view note;
  std::string yaml;
  ErrorCode code;
  int line;
  std::string field;
  std::string message_part;
};

// Failure messages name the case instead of dumping its bytes.
void PrintTo(const ErrorCase& c, std::ostream* os) { *os << c.note; }

class PolicyErrorTest : public ::testing::TestWithParam<ErrorCase> {};

// Each malformed document yields exactly one error, with its code, line and field.
TEST_P(PolicyErrorTest, ReportsCodeLineAndField) {
  const ErrorCase& c = GetParam();
  PolicyParseOutcome outcome = parse(c.yaml);
  EXPECT_FALSE(outcome.policy.has_value());
  ASSERT_EQ(outcome.errors.size(), 1u) << all_errors(outcome);
  const Error& error = outcome.errors[0];
  EXPECT_EQ(error_code_name(error.code), std::string(error_code_name(c.code)));
  EXPECT_EQ(error.location.file, "policy.yaml");
  EXPECT_EQ(error.location.line, c.line);
  EXPECT_EQ(error.location.field, c.field);
  EXPECT_THAT(error.message, HasSubstr(c.message_part));
}

INSTANTIATE_TEST_SUITE_P(
    Document, PolicyErrorTest,
    ::testing::Values(
        ErrorCase{"document_not_object", "- a\n- b\n", ErrorCode::kWrongType, 1, "",
                  "expected an object"},
        ErrorCase{"missing_api_version", "kind: AlignmentPolicy\nmetadata: {name: p}\nspec: {}\n",
                  ErrorCode::kMissingField, 1, "/apiVersion", "\"apiVersion\" is missing"},
        ErrorCase{"wrong_api_version",
                  "apiVersion: topoguard.dev/v1\nkind: AlignmentPolicy\nmetadata: {name: p}\n"
                  "spec: {}\n",
                  ErrorCode::kInvalidValue, 1, "/apiVersion", "topoguard.dev/v1alpha1"},
        ErrorCase{"other_kind_is_reported_once",
                  "apiVersion: topoguard.dev/v1alpha1\nkind: Deployment\nspec:\n  replicas: 1\n",
                  ErrorCode::kInvalidValue, 2, "/kind", "must be \"AlignmentPolicy\""},
        ErrorCase{"kind_wrong_type",
                  "apiVersion: topoguard.dev/v1alpha1\nkind: 3\nmetadata: {name: p}\nspec: {}\n",
                  ErrorCode::kWrongType, 2, "/kind", "expected a string, got integer"},
        ErrorCase{"unknown_top_level_field", kHeader + "  {}\nstatus: {}\n",
                  ErrorCode::kUnknownField, 7, "/status", "unknown field \"status\""},
        ErrorCase{"missing_metadata",
                  "apiVersion: topoguard.dev/v1alpha1\nkind: AlignmentPolicy\nspec: {}\n",
                  ErrorCode::kMissingField, 1, "/metadata", "\"metadata\" is missing"},
        ErrorCase{"metadata_labels_unknown",
                  "apiVersion: topoguard.dev/v1alpha1\nkind: AlignmentPolicy\nmetadata:\n"
                  "  name: p\n  labels: {a: b}\nspec: {}\n",
                  ErrorCode::kUnknownField, 5, "/metadata/labels", "unknown field"},
        ErrorCase{"name_absent",
                  "apiVersion: topoguard.dev/v1alpha1\nkind: AlignmentPolicy\nmetadata: {}\n"
                  "spec: {}\n",
                  ErrorCode::kMissingField, 3, "/metadata/name", "\"name\" is missing"},
        ErrorCase{"name_wrong_type",
                  "apiVersion: topoguard.dev/v1alpha1\nkind: AlignmentPolicy\nmetadata:\n"
                  "  name: 7\nspec: {}\n",
                  ErrorCode::kWrongType, 4, "/metadata/name", "expected a string"},
        ErrorCase{"name_not_dns_subdomain",
                  "apiVersion: topoguard.dev/v1alpha1\nkind: AlignmentPolicy\nmetadata:\n"
                  "  name: Team_A\nspec: {}\n",
                  ErrorCode::kInvalidValue, 4, "/metadata/name", "DNS subdomain"},
        ErrorCase{"name_empty",
                  "apiVersion: topoguard.dev/v1alpha1\nkind: AlignmentPolicy\nmetadata:\n"
                  "  name: ''\nspec: {}\n",
                  ErrorCode::kInvalidValue, 4, "/metadata/name", "DNS subdomain"},
        ErrorCase{"missing_spec",
                  "apiVersion: topoguard.dev/v1alpha1\nkind: AlignmentPolicy\nmetadata:\n"
                  "  name: p\n",
                  ErrorCode::kMissingField, 1, "/spec", "\"spec\" is missing"},
        ErrorCase{"spec_wrong_type", kHeader + "  - a\n", ErrorCode::kWrongType, 5, "/spec",
                  "expected an object, got array"},
        ErrorCase{"unknown_spec_field", kHeader + "  matches: {}\n", ErrorCode::kUnknownField, 6,
                  "/spec/matches", "expected one of: match, devices"}),
    topoguard::testing::NoteName());

INSTANTIATE_TEST_SUITE_P(
    Match, PolicyErrorTest,
    ::testing::Values(
        ErrorCase{"match_wrong_type", kHeader + "  match: all\n", ErrorCode::kWrongType, 6,
                  "/spec/match", "expected an object, got string"},
        ErrorCase{"unknown_match_field", kHeader + "  match:\n    namespace: [a]\n",
                  ErrorCode::kUnknownField, 7, "/spec/match/namespace", "unknown field"},
        ErrorCase{"namespace_selector_wrong_type", kHeader + "  match:\n    namespaceSelector: prod\n",
                  ErrorCode::kWrongType, 7, "/spec/match/namespaceSelector",
                  "expected an object, got string"},
        ErrorCase{"namespace_selector_unknown_field",
                  kHeader + "  match:\n    namespaceSelector: {matchLabel: {a: b}}\n",
                  ErrorCode::kUnknownField, 7, "/spec/match/namespaceSelector/matchLabel",
                  "unknown field"},
        ErrorCase{"unknown_namespaces_field",
                  kHeader + "  match:\n    namespaces:\n      only: [a]\n",
                  ErrorCode::kUnknownField, 8, "/spec/match/namespaces/only", "include, exclude"},
        ErrorCase{"include_not_list", kHeader + "  match:\n    namespaces:\n      include: a\n",
                  ErrorCode::kWrongType, 8, "/spec/match/namespaces/include",
                  "expected a list of strings, got string"},
        ErrorCase{"include_element_not_string",
                  kHeader + "  match:\n    namespaces:\n      include:\n      - a\n      - 5\n",
                  ErrorCode::kWrongType, 10, "/spec/match/namespaces/include/1",
                  "expected a string, got integer"},
        ErrorCase{"include_bad_pattern_has_re2_reason",
                  kHeader + "  match:\n    namespaces:\n      include: ['team-(a']\n",
                  ErrorCode::kInvalidPattern, 8, "/spec/match/namespaces/include/0",
                  "missing ): team-(a"},
        ErrorCase{"exclude_bad_pattern_has_re2_reason",
                  kHeader + "  match:\n    namespaces:\n      exclude:\n      - '*'\n",
                  ErrorCode::kInvalidPattern, 9, "/spec/match/namespaces/exclude/0",
                  "no argument for repetition operator: *"},
        ErrorCase{"empty_pattern", kHeader + "  match:\n    names: ['']\n",
                  ErrorCode::kInvalidValue, 7, "/spec/match/names/0", "empty pattern"},
        ErrorCase{"names_bad_pattern", kHeader + "  match:\n    names: ['prefill-[']\n",
                  ErrorCode::kInvalidPattern, 7, "/spec/match/names/0", "missing ]"},
        ErrorCase{"unknown_kind", kHeader + "  match:\n    kinds: [Deployment, Service]\n",
                  ErrorCode::kInvalidValue, 7, "/spec/match/kinds/1", "\"Service\""},
        ErrorCase{"kinds_not_list", kHeader + "  match:\n    kinds: Deployment\n",
                  ErrorCode::kWrongType, 7, "/spec/match/kinds", "list of strings"},
        ErrorCase{"selector_unknown_field",
                  kHeader + "  match:\n    selector:\n      matchLabel: {a: b}\n",
                  ErrorCode::kUnknownField, 8, "/spec/match/selector/matchLabel",
                  "matchLabels, matchExpressions"},
        ErrorCase{"match_labels_value_not_string",
                  kHeader + "  match:\n    selector:\n      matchLabels:\n        gpu: true\n",
                  ErrorCode::kWrongType, 9, "/spec/match/selector/matchLabels/gpu",
                  "expected a string, got boolean"},
        ErrorCase{
            "match_labels_key_with_slash",
            kHeader + "  match:\n    selector:\n      matchLabels:\n        llm-d.ai/role: 1\n",
            ErrorCode::kWrongType, 9, "/spec/match/selector/matchLabels/llm-d.ai~1role",
            "got integer"},
        ErrorCase{"match_expressions_not_list",
                  kHeader + "  match:\n    selector:\n      matchExpressions: {key: a}\n",
                  ErrorCode::kWrongType, 8, "/spec/match/selector/matchExpressions",
                  "list of label selector requirements"},
        ErrorCase{"expression_missing_key",
                  kHeader + "  match:\n    selector:\n      matchExpressions:\n"
                            "      - operator: Exists\n",
                  ErrorCode::kMissingField, 9, "/spec/match/selector/matchExpressions/0/key",
                  "\"key\" is missing"},
        ErrorCase{"expression_missing_operator",
                  kHeader + "  match:\n    selector:\n      matchExpressions:\n      - key: a\n",
                  ErrorCode::kMissingField, 9, "/spec/match/selector/matchExpressions/0/operator",
                  "\"operator\" is missing"},
        ErrorCase{"expression_unknown_operator",
                  kHeader + "  match:\n    selector:\n      matchExpressions:\n      - key: a\n"
                            "        operator: Equals\n        values: [b]\n",
                  ErrorCode::kInvalidValue, 10, "/spec/match/selector/matchExpressions/0/operator",
                  "unknown operator"},
        ErrorCase{"in_needs_values",
                  kHeader + "  match:\n    selector:\n      matchExpressions:\n      - key: a\n"
                            "        operator: In\n",
                  ErrorCode::kInvalidValue, 9, "/spec/match/selector/matchExpressions/0/values",
                  "operator In needs a non-empty list of values"},
        ErrorCase{"not_in_needs_non_empty_values",
                  kHeader + "  match:\n    selector:\n      matchExpressions:\n      - key: a\n"
                            "        operator: NotIn\n        values: []\n",
                  ErrorCode::kInvalidValue, 11, "/spec/match/selector/matchExpressions/0/values",
                  "operator NotIn needs a non-empty list of values"},
        ErrorCase{"exists_takes_no_values",
                  kHeader + "  match:\n    selector:\n      matchExpressions:\n      - key: a\n"
                            "        operator: Exists\n        values: [b]\n",
                  ErrorCode::kInvalidValue, 11, "/spec/match/selector/matchExpressions/0/values",
                  "operator Exists takes no values"},
        ErrorCase{"does_not_exist_takes_no_values",
                  kHeader + "  match:\n    selector:\n      matchExpressions:\n      - key: a\n"
                            "        operator: DoesNotExist\n        values: [b]\n",
                  ErrorCode::kInvalidValue, 11, "/spec/match/selector/matchExpressions/0/values",
                  "operator DoesNotExist takes no values"},
        ErrorCase{"values_not_list",
                  kHeader + "  match:\n    selector:\n      matchExpressions:\n      - key: a\n"
                            "        operator: In\n        values: b\n",
                  ErrorCode::kWrongType, 11, "/spec/match/selector/matchExpressions/0/values",
                  "list of strings"},
        ErrorCase{"expression_unknown_field",
                  kHeader + "  match:\n    selector:\n      matchExpressions:\n      - key: a\n"
                            "        operator: Exists\n        value: b\n",
                  ErrorCode::kUnknownField, 11, "/spec/match/selector/matchExpressions/0/value",
                  "key, operator, values"}),
    topoguard::testing::NoteName());

INSTANTIATE_TEST_SUITE_P(
    DevicesAndAlignment, PolicyErrorTest,
    ::testing::Values(
        ErrorCase{"unknown_device_role", kHeader + "  devices:\n    fpga: {}\n",
                  ErrorCode::kUnknownField, 7, "/spec/devices/fpga", "expected one of: gpu, nic"},
        ErrorCase{"unknown_recognizer_field",
                  kHeader + "  devices:\n    gpu:\n      classes: [a]\n", ErrorCode::kUnknownField,
                  8, "/spec/devices/gpu/classes", "deviceClassNames, drivers, extendedResources"},
        ErrorCase{"recognizer_wrong_type", kHeader + "  devices:\n    nic: [a]\n",
                  ErrorCode::kWrongType, 7, "/spec/devices/nic", "expected an object"},
        ErrorCase{"gpu_class_bad_pattern",
                  kHeader + "  devices:\n    gpu:\n      deviceClassNames: ['gpu\\.(nvidia']\n",
                  ErrorCode::kInvalidPattern, 8, "/spec/devices/gpu/deviceClassNames/0",
                  "missing )"},
        ErrorCase{"nic_driver_bad_pattern",
                  kHeader + "  devices:\n    nic:\n      drivers: ['+dra']\n",
                  ErrorCode::kInvalidPattern, 8, "/spec/devices/nic/drivers/0",
                  "no argument for repetition operator: +"},
        ErrorCase{"nic_resource_bad_escape",
                  kHeader + "  devices:\n    nic:\n      extendedResources: ['rdma/\\q']\n",
                  ErrorCode::kInvalidPattern, 8, "/spec/devices/nic/extendedResources/0",
                  "invalid escape sequence: \\q"},
        ErrorCase{"unknown_alignment_field", kHeader + "  alignment:\n    attributes: [a/b]\n",
                  ErrorCode::kUnknownField, 7, "/spec/alignment/attributes",
                  "attribute, acceptedAttributes, numaAttributes"},
        ErrorCase{"attribute_without_domain", kHeader + "  alignment:\n    attribute: pcieRoot\n",
                  ErrorCode::kInvalidValue, 7, "/spec/alignment/attribute", "qualified name"},
        ErrorCase{"attribute_bad_identifier",
                  kHeader + "  alignment:\n    attribute: resource.kubernetes.io/pcie-root\n",
                  ErrorCode::kInvalidValue, 7, "/spec/alignment/attribute", "qualified name"},
        ErrorCase{"attribute_wrong_type", kHeader + "  alignment:\n    attribute: [a/b]\n",
                  ErrorCode::kWrongType, 7, "/spec/alignment/attribute", "expected a string"},
        ErrorCase{"accepted_attribute_uppercase_domain",
                  kHeader + "  alignment:\n    acceptedAttributes:\n    - example.com/root\n"
                            "    - Example.com/root\n",
                  ErrorCode::kInvalidValue, 9, "/spec/alignment/acceptedAttributes/1",
                  "\"Example.com/root\""},
        ErrorCase{"numa_bad_pattern", kHeader + "  alignment:\n    numaAttributes: ['(?<x)']\n",
                  ErrorCode::kInvalidPattern, 7, "/spec/alignment/numaAttributes/0",
                  "invalid perl operator: (?<"},
        ErrorCase{"numa_pattern_matches_alignment_attribute",
                  kHeader + "  alignment:\n    acceptedAttributes: [example.com/numaRoot]\n"
                            "    numaAttributes: ['.+/numa.*']\n",
                  ErrorCode::kInvalidValue, 8, "/spec/alignment/numaAttributes",
                  "\"example.com/numaRoot\""}),
    topoguard::testing::NoteName());

INSTANTIATE_TEST_SUITE_P(
    Rules, PolicyErrorTest,
    ::testing::Values(
        ErrorCase{"rules_not_map", kHeader + "  rules: [split-claims]\n", ErrorCode::kWrongType, 6,
                  "/spec/rules", "expected an object, got array"},
        ErrorCase{"unknown_rule_id", kHeader + "  rules:\n    pcie-alignment: {action: deny}\n",
                  ErrorCode::kUnknownRule, 7, "/spec/rules/pcie-alignment",
                  "known rules: missing-pcie-alignment, numa-only-alignment"},
        ErrorCase{"rule_settings_not_object", kHeader + "  rules:\n    split-claims: deny\n",
                  ErrorCode::kWrongType, 7, "/spec/rules/split-claims",
                  "expected an object, got string"},
        ErrorCase{"unknown_action", kHeader + "  rules:\n    split-claims:\n      action: block\n",
                  ErrorCode::kInvalidValue, 8, "/spec/rules/split-claims/action",
                  "expected deny, warn, audit or off"},
        ErrorCase{"action_wrong_type", kHeader + "  rules:\n    split-claims: {action: 1}\n",
                  ErrorCode::kWrongType, 7, "/spec/rules/split-claims/action", "expected a string"},
        ErrorCase{"mutate_on_unfixable_rule",
                  kHeader + "  rules:\n    device-plugin-pairing:\n      action: warn\n"
                            "      mutate: true\n",
                  ErrorCode::kInvalidValue, 9, "/spec/rules/device-plugin-pairing/mutate",
                  "has no fix"},
        ErrorCase{"mutate_yes_is_a_string",
                  kHeader + "  rules:\n    missing-pcie-alignment: {mutate: yes}\n",
                  ErrorCode::kWrongType, 7, "/spec/rules/missing-pcie-alignment/mutate",
                  "expected a boolean, got string"},
        ErrorCase{
            "unknown_rule_setting", kHeader + "  rules:\n    split-claims:\n      severity: high\n",
            ErrorCode::kUnknownField, 8, "/spec/rules/split-claims/severity", "action, mutate"},
        ErrorCase{"when_alignment_impossible_on_another_rule",
                  kHeader + "  rules:\n    missing-pcie-alignment:\n      "
                            "whenAlignmentImpossible: warn\n",
                  ErrorCode::kUnknownField, 8,
                  "/spec/rules/missing-pcie-alignment/whenAlignmentImpossible",
                  "only numa-only-alignment takes whenAlignmentImpossible"},
        ErrorCase{"when_alignment_impossible_unknown_action",
                  kHeader + "  rules:\n    numa-only-alignment:\n      "
                            "whenAlignmentImpossible: allow\n",
                  ErrorCode::kInvalidValue, 8,
                  "/spec/rules/numa-only-alignment/whenAlignmentImpossible",
                  "expected deny, warn, audit or off"}),
    topoguard::testing::NoteName());

const std::string kException = R"(  exceptions:
  - name: legacy
    reason: accepted until the DRA migration
    match: {}
)";  // lines 6-9

INSTANTIATE_TEST_SUITE_P(
    Exceptions, PolicyErrorTest,
    ::testing::Values(
        ErrorCase{"exceptions_not_list", kHeader + "  exceptions: {name: a}\n",
                  ErrorCode::kWrongType, 6, "/spec/exceptions", "list of exceptions"},
        ErrorCase{"exception_not_object", kHeader + "  exceptions:\n  - legacy\n",
                  ErrorCode::kWrongType, 7, "/spec/exceptions/0", "expected an object"},
        ErrorCase{"exception_missing_name",
                  kHeader + "  exceptions:\n  - reason: r\n    match: {}\n",
                  ErrorCode::kMissingField, 7, "/spec/exceptions/0/name", "\"name\" is missing"},
        ErrorCase{"exception_bad_name",
                  kHeader + "  exceptions:\n  - name: Legacy Training\n    reason: r\n"
                            "    match: {}\n",
                  ErrorCode::kInvalidValue, 7, "/spec/exceptions/0/name", "exception name"},
        ErrorCase{"exception_requires_reason",
                  kHeader + "  exceptions:\n  - name: legacy\n    match: {}\n",
                  ErrorCode::kMissingField, 7, "/spec/exceptions/0/reason",
                  "\"reason\" is missing"},
        ErrorCase{"exception_null_reason",
                  kHeader + "  exceptions:\n  - name: legacy\n    reason:\n    match: {}\n",
                  ErrorCode::kMissingField, 8, "/spec/exceptions/0/reason",
                  "\"reason\" is missing"},
        ErrorCase{"exception_blank_reason",
                  kHeader + "  exceptions:\n  - name: legacy\n    reason: '  '\n    match: {}\n",
                  ErrorCode::kInvalidValue, 8, "/spec/exceptions/0/reason", "non-empty reason"},
        ErrorCase{"exception_requires_match",
                  kHeader + "  exceptions:\n  - name: legacy\n    reason: r\n",
                  ErrorCode::kMissingField, 7, "/spec/exceptions/0/match", "\"match\" is missing"},
        ErrorCase{"exception_unknown_rule",
                  kHeader + kException + "    rules: [split-claims, numa-alignment]\n",
                  ErrorCode::kUnknownRule, 10, "/spec/exceptions/0/rules/1",
                  "unknown rule \"numa-alignment\""},
        ErrorCase{"exception_rules_not_list", kHeader + kException + "    rules: split-claims\n",
                  ErrorCode::kWrongType, 10, "/spec/exceptions/0/rules", "list of strings"},
        ErrorCase{"exception_unknown_field", kHeader + kException + "    until: 2027-01-01\n",
                  ErrorCode::kUnknownField, 10, "/spec/exceptions/0/until",
                  "name, reason, rules, match"},
        ErrorCase{"exception_match_bad_pattern",
                  kHeader + "  exceptions:\n  - name: legacy\n    reason: r\n    match:\n"
                            "      names: ['train-(']\n",
                  ErrorCode::kInvalidPattern, 10, "/spec/exceptions/0/match/names/0", "missing )"},
        ErrorCase{"exception_match_unknown_field",
                  kHeader + "  exceptions:\n  - name: legacy\n    reason: r\n    match:\n"
                            "      namespace: x\n",
                  ErrorCode::kUnknownField, 10, "/spec/exceptions/0/match/namespace",
                  "unknown field"},
        ErrorCase{"duplicate_exception_name",
                  kHeader + kException + "  - name: legacy\n    reason: again\n    match: {}\n",
                  ErrorCode::kInvalidValue, 10, "/spec/exceptions/1/name",
                  "duplicate exception name \"legacy\" (first used at line 7)"}),
    topoguard::testing::NoteName());

// All errors of a document are reported, in document order, not only the first.
TEST(PolicyParserTest, CollectsEveryError) {
  PolicyParseOutcome outcome = parse(kHeader + R"(  match:
    namespaces: {include: ['(']}
    kinds: [Service]
  rules:
    no-such-rule: {}
    split-claims: {action: never}
  exceptions:
  - name: x
)");
  EXPECT_FALSE(outcome.policy.has_value());
  ASSERT_EQ(outcome.errors.size(), 6u) << all_errors(outcome);
  const std::vector<std::pair<ErrorCode, std::string>> expected{
      {ErrorCode::kInvalidPattern, "/spec/match/namespaces/include/0"},
      {ErrorCode::kInvalidValue, "/spec/match/kinds/0"},
      {ErrorCode::kUnknownRule, "/spec/rules/no-such-rule"},
      {ErrorCode::kInvalidValue, "/spec/rules/split-claims/action"},
      {ErrorCode::kMissingField, "/spec/exceptions/0/reason"},
      {ErrorCode::kMissingField, "/spec/exceptions/0/match"}};
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(outcome.errors[i].code, expected[i].first) << i;
    EXPECT_EQ(outcome.errors[i].location.field, expected[i].second) << i;
  }
  EXPECT_EQ(outcome.errors[0].location.line, 7);
  EXPECT_EQ(outcome.errors[5].location.line, 13);
}

// A minimal policy gets the documented defaults for every field and rule.
TEST(PolicyParserTest, MinimalPolicyHasDefaults) {
  PolicyParseOutcome outcome = parse(kHeader + "  {}\n");
  ASSERT_TRUE(outcome.policy.has_value()) << all_errors(outcome);
  const Policy& policy = *outcome.policy;
  EXPECT_EQ(policy.name, "p");
  EXPECT_EQ(policy.origin.file, "policy.yaml");
  EXPECT_EQ(policy.origin.line, 1);
  EXPECT_TRUE(policy.match.include_namespaces.empty());
  EXPECT_TRUE(policy.match.exclude_namespaces.empty());
  EXPECT_FALSE(policy.match.selector.has_value());
  EXPECT_TRUE(policy.match.kinds.empty());
  EXPECT_TRUE(policy.match.names.empty());
  EXPECT_TRUE(policy.gpu.device_class_names.empty());
  EXPECT_TRUE(policy.nic.extended_resources.empty());
  EXPECT_EQ(policy.alignment_attribute, "resource.kubernetes.io/pcieRoot");
  EXPECT_TRUE(policy.accepted_attributes.empty());
  EXPECT_TRUE(policy.numa_attributes.empty());
  EXPECT_TRUE(policy.exceptions.empty());
  for (RuleId rule : kAllRules) {
    const RuleSettings expected = default_rule_settings(rule);
    EXPECT_EQ(policy.rule(rule).action, expected.action) << rule_name(rule);
    EXPECT_EQ(policy.rule(rule).mutate, expected.mutate) << rule_name(rule);
  }
}

struct DefaultRuleCase {
  std::string_view note;
  RuleId rule;
  Action action;
  bool mutate;
};

class DefaultRuleTest : public ::testing::TestWithParam<DefaultRuleCase> {};

// The defaults are the contract in the README and the issue.
TEST_P(DefaultRuleTest, MatchesContract) {
  const DefaultRuleCase& c = GetParam();
  EXPECT_EQ(default_rule_settings(c.rule).action, c.action);
  EXPECT_EQ(default_rule_settings(c.rule).mutate, c.mutate);
  EXPECT_EQ(c.mutate, rule_is_fixable(c.rule));
}

INSTANTIATE_TEST_SUITE_P(
    Rules, DefaultRuleTest,
    ::testing::Values(
        DefaultRuleCase{"missing_pcie_alignment", RuleId::kMissingPcieAlignment, Action::kDeny,
                        true},
        DefaultRuleCase{"numa_only_alignment", RuleId::kNumaOnlyAlignment, Action::kDeny, true},
        DefaultRuleCase{"device_plugin_pairing", RuleId::kDevicePluginPairing, Action::kWarn,
                        false},
        DefaultRuleCase{"split_claims", RuleId::kSplitClaims, Action::kDeny, false},
        DefaultRuleCase{"multi_device_alignment", RuleId::kMultiDeviceAlignment, Action::kWarn,
                        false},
        DefaultRuleCase{"unresolved_claim", RuleId::kUnresolvedClaim, Action::kAudit, false},
        DefaultRuleCase{"unsatisfiable_alignment", RuleId::kUnsatisfiableAlignment, Action::kWarn,
                        false},
        DefaultRuleCase{"attribute_not_published", RuleId::kAttributeNotPublished, Action::kWarn,
                        false},
        DefaultRuleCase{"overridden_alignment_attribute", RuleId::kOverriddenAlignmentAttribute,
                        Action::kDeny, false}),
    topoguard::testing::NoteName());

// Every field of the schema lands in the model.
TEST(PolicyParserTest, ReadsEveryField) {
  PolicyParseOutcome outcome = parse(kHeader + R"(  match:
    namespaces:
      include: ['team-.*']
      exclude: [team-sandbox]
    selector:
      matchLabels: {llm-d.ai/role: decode}
      matchExpressions:
      - {key: tier, operator: In, values: [gold, silver]}
      - {key: legacy, operator: DoesNotExist}
    kinds: [Deployment, ResourceClaimTemplate]
    names: ['prefill-.*']
  devices:
    gpu:
      deviceClassNames: ['gpu\.nvidia\.com']
      drivers: ['gpu\.nvidia\.com']
      extendedResources: ['nvidia\.com/gpu']
    nic:
      deviceClassNames: ['dra\.net']
      drivers: ['dra\.net']
      extendedResources: ['rdma/.*']
  alignment:
    attribute: example.com/pcieRoot
    acceptedAttributes: [resource.kubernetes.io/pcieRoot]
    numaAttributes: ['.+/numaNode']
  rules:
    missing-pcie-alignment: {mutate: false}
    numa-only-alignment: {action: warn}
    device-plugin-pairing: {action: deny, mutate: false}
    split-claims: {action: "off"}
    multi-device-alignment:
    unresolved-claim: {action: warn}
  exceptions:
  - name: legacy-training
    reason: device plugins until Q3
    rules: [device-plugin-pairing, split-claims, device-plugin-pairing]
    match:
      namespaces: {include: [training]}
  - name: everything-in-lab
    reason: lab cluster
    match: {names: ['lab-.*']}
)");
  ASSERT_TRUE(outcome.policy.has_value()) << all_errors(outcome);
  const Policy& policy = *outcome.policy;

  EXPECT_TRUE(policy.match.include_namespaces.matches_any("team-a"));
  EXPECT_FALSE(policy.match.include_namespaces.matches_any("xteam-a"));  // full match
  EXPECT_TRUE(policy.match.exclude_namespaces.matches_any("team-sandbox"));
  ASSERT_TRUE(policy.match.selector.has_value());
  EXPECT_EQ(policy.match.selector->match_labels,
            (std::map<std::string, std::string>{{"llm-d.ai/role", "decode"}}));
  ASSERT_EQ(policy.match.selector->match_expressions.size(), 2u);
  EXPECT_EQ(policy.match.selector->match_expressions[0].key, "tier");
  EXPECT_EQ(policy.match.selector->match_expressions[0].op, LabelRequirement::Operator::kIn);
  EXPECT_EQ(policy.match.selector->match_expressions[0].values,
            (std::vector<std::string>{"gold", "silver"}));
  EXPECT_EQ(policy.match.selector->match_expressions[1].op,
            LabelRequirement::Operator::kDoesNotExist);
  EXPECT_EQ(policy.match.kinds, (std::vector<std::string>{"Deployment", "ResourceClaimTemplate"}));
  EXPECT_TRUE(policy.match.names.matches_any("prefill-0"));

  EXPECT_TRUE(policy.gpu.device_class_names.matches_any("gpu.nvidia.com"));
  EXPECT_FALSE(policy.gpu.device_class_names.matches_any("gpuXnvidia.com"));  // escaped dot
  EXPECT_TRUE(policy.gpu.drivers.matches_any("gpu.nvidia.com"));
  EXPECT_TRUE(policy.gpu.extended_resources.matches_any("nvidia.com/gpu"));
  EXPECT_TRUE(policy.nic.device_class_names.matches_any("dra.net"));
  EXPECT_TRUE(policy.nic.drivers.matches_any("dra.net"));
  EXPECT_TRUE(policy.nic.extended_resources.matches_any("rdma/ib"));

  EXPECT_EQ(policy.alignment_attribute, "example.com/pcieRoot");
  EXPECT_TRUE(policy.is_alignment_attribute("resource.kubernetes.io/pcieRoot"));
  EXPECT_TRUE(policy.is_alignment_attribute("example.com/pcieRoot"));
  EXPECT_TRUE(policy.numa_attributes.matches_any("dra.net/numaNode"));

  auto rule = [&policy](RuleId id) { return policy.rule(id); };
  EXPECT_EQ(rule(RuleId::kMissingPcieAlignment).action, Action::kDeny);  // action kept
  EXPECT_FALSE(rule(RuleId::kMissingPcieAlignment).mutate);
  EXPECT_EQ(rule(RuleId::kNumaOnlyAlignment).action, Action::kWarn);
  EXPECT_TRUE(rule(RuleId::kNumaOnlyAlignment).mutate);  // mutate kept
  EXPECT_EQ(rule(RuleId::kDevicePluginPairing).action, Action::kDeny);
  EXPECT_EQ(rule(RuleId::kSplitClaims).action, Action::kOff);
  EXPECT_EQ(rule(RuleId::kMultiDeviceAlignment).action, Action::kWarn);  // null: default
  EXPECT_EQ(rule(RuleId::kUnresolvedClaim).action, Action::kWarn);

  ASSERT_EQ(policy.exceptions.size(), 2u);
  const PolicyException& legacy = policy.exceptions[0];
  EXPECT_EQ(legacy.name, "legacy-training");
  EXPECT_EQ(legacy.reason, "device plugins until Q3");
  EXPECT_EQ(legacy.rules,
            (std::vector<RuleId>{RuleId::kDevicePluginPairing, RuleId::kSplitClaims}));
  EXPECT_TRUE(legacy.match.include_namespaces.matches_any("training"));
  EXPECT_EQ(legacy.origin.file, "policy.yaml");
  EXPECT_EQ(legacy.origin.line, 38);
  EXPECT_TRUE(policy.exceptions[1].rules.empty());  // absent: every rule
  EXPECT_TRUE(policy.exceptions[1].match.names.matches_any("lab-1"));
}

// `key:` with nothing after it reads as null and counts as absent for optional fields.
TEST(PolicyParserTest, NullOptionalFieldsAreAbsent) {
  PolicyParseOutcome outcome = parse(kHeader + R"(  match:
    namespaces:
    selector:
  devices:
    gpu:
  rules:
  exceptions:
)");
  ASSERT_TRUE(outcome.policy.has_value()) << all_errors(outcome);
  EXPECT_FALSE(outcome.policy->match.selector.has_value());
  EXPECT_EQ(outcome.policy->rule(RuleId::kSplitClaims).action, Action::kDeny);
}

struct SelectorCase {
  std::string_view note;
  std::string expression;  // one matchExpressions entry
  Json labels;
  bool matches;
};

class SelectorOperatorTest : public ::testing::TestWithParam<SelectorCase> {};

// Each Kubernetes operator parses and then selects like Kubernetes does.
TEST_P(SelectorOperatorTest, ParsesAndMatches) {
  const SelectorCase& c = GetParam();
  PolicyParseOutcome outcome =
      parse(kHeader + "  match:\n    selector:\n      matchExpressions:\n" + "      - " +
            c.expression + "\n");
  ASSERT_TRUE(outcome.policy.has_value()) << all_errors(outcome);
  ASSERT_TRUE(outcome.policy->match.selector.has_value());
  EXPECT_EQ(outcome.policy->match.selector->matches(c.labels), c.matches);
}

INSTANTIATE_TEST_SUITE_P(
    Operators, SelectorOperatorTest,
    ::testing::Values(
        SelectorCase{"in_matches", "{key: role, operator: In, values: [prefill, decode]}",
                     Json{{"role", "decode"}}, true},
        SelectorCase{"in_other_value", "{key: role, operator: In, values: [prefill]}",
                     Json{{"role", "decode"}}, false},
        SelectorCase{"in_absent_label", "{key: role, operator: In, values: [prefill]}",
                     Json::object(), false},
        SelectorCase{"not_in_other_value", "{key: role, operator: NotIn, values: [prefill]}",
                     Json{{"role", "decode"}}, true},
        SelectorCase{"not_in_absent_label", "{key: role, operator: NotIn, values: [prefill]}",
                     Json::object(), true},
        SelectorCase{"not_in_listed_value", "{key: role, operator: NotIn, values: [decode]}",
                     Json{{"role", "decode"}}, false},
        SelectorCase{"exists_present", "{key: role, operator: Exists}", Json{{"role", ""}}, true},
        SelectorCase{"exists_with_empty_values", "{key: role, operator: Exists, values: []}",
                     Json::object(), false},
        SelectorCase{"does_not_exist_absent", "{key: role, operator: DoesNotExist}",
                     Json{{"other", "x"}}, true},
        SelectorCase{"does_not_exist_present", "{key: role, operator: DoesNotExist}",
                     Json{{"role", "x"}}, false}),
    topoguard::testing::NoteName());

struct AttributeNameCase {
  std::string_view note;
  std::string name;
  bool valid;
};

class QualifiedNameTest : public ::testing::TestWithParam<AttributeNameCase> {};

// Attribute names follow DRA's QualifiedName: <dns-subdomain up to 63>/<C identifier up to 32>.
TEST_P(QualifiedNameTest, Validates) {
  EXPECT_EQ(is_qualified_attribute_name(GetParam().name), GetParam().valid);
}

INSTANTIATE_TEST_SUITE_P(
    Names, QualifiedNameTest,
    ::testing::Values(
        AttributeNameCase{"standard", "resource.kubernetes.io/pcieRoot", true},
        AttributeNameCase{"driver_local", "gpu.nvidia.com/parentUUID", true},
        AttributeNameCase{"underscore_identifier", "dra.net/_numa_1", true},
        AttributeNameCase{"no_domain", "pcieRoot", false},
        AttributeNameCase{"empty_domain", "/pcieRoot", false},
        AttributeNameCase{"empty_identifier", "dra.net/", false},
        AttributeNameCase{"two_slashes", "a.io/b/c", false},
        AttributeNameCase{"identifier_with_dash", "dra.net/numa-node", false},
        AttributeNameCase{"identifier_starts_with_digit", "dra.net/1numa", false},
        AttributeNameCase{"uppercase_domain", "Dra.net/numaNode", false},
        AttributeNameCase{"domain_label_ends_with_dash", "dra-.net/numaNode", false},
        AttributeNameCase{"identifier_33_chars", "a.io/" + std::string(33, 'x'), false},
        AttributeNameCase{"identifier_32_chars", "a.io/" + std::string(32, 'x'), true},
        AttributeNameCase{"domain_64_chars", std::string(60, 'a') + ".com/x", false}),
    topoguard::testing::NoteName());

// What a policy leaves out of devices, alignment and rules comes from the built-in policy and
// is listed as inherited; match and exceptions are never inherited.
TEST(PolicyInheritanceTest, OmittedSectionsComeFromTheBuiltInPolicy) {
  PolicyParseOutcome outcome = parse_inheriting(
      kHeader + "  rules:\n    split-claims: {action: warn}\n  alignment:\n    attribute: "
                "example.com/root\n");
  ASSERT_TRUE(outcome.policy.has_value()) << all_errors(outcome);
  const Policy& policy = *outcome.policy;
  const Policy& builtin = builtin_policy();
  EXPECT_TRUE(policy.gpu.device_class_names.matches_any("gpu.nvidia.com"));
  EXPECT_TRUE(policy.nic.extended_resources.matches_any("rdma/hca"));
  EXPECT_EQ(policy.alignment_attribute, "example.com/root");
  EXPECT_TRUE(policy.numa_attributes.matches_any("dra.net/numaNode"));
  EXPECT_EQ(policy.rule(RuleId::kSplitClaims).action, Action::kWarn);
  EXPECT_EQ(policy.rule(RuleId::kMissingPcieAlignment).action,
            builtin.rule(RuleId::kMissingPcieAlignment).action);
  EXPECT_TRUE(policy.match.exclude_namespaces.empty());  // kube-system is not inherited
  EXPECT_EQ(policy.inherited,
            (std::vector<std::string>{"devices.gpu", "devices.nic", "alignment.acceptedAttributes",
                                      "alignment.numaAttributes", "rules.missing-pcie-alignment",
                                      "rules.numa-only-alignment", "rules.device-plugin-pairing",
                                      "rules.multi-device-alignment", "rules.unresolved-claim",
                                      "rules.unsatisfiable-alignment",
                                      "rules.attribute-not-published",
                                      "rules.overridden-alignment-attribute"}));
}

// A section that is written, even empty, replaces the inherited one.
TEST(PolicyInheritanceTest, WrittenSectionsReplaceInheritedOnes) {
  PolicyParseOutcome outcome = parse_inheriting(
      kHeader + "  devices:\n    gpu: {deviceClassNames: ['my\\.gpu']}\n  alignment:\n"
                "    numaAttributes: []\n");
  ASSERT_TRUE(outcome.policy.has_value()) << all_errors(outcome);
  const Policy& policy = *outcome.policy;
  EXPECT_TRUE(policy.gpu.device_class_names.matches_any("my.gpu"));
  EXPECT_FALSE(policy.gpu.device_class_names.matches_any("gpu.nvidia.com"));
  EXPECT_TRUE(policy.gpu.drivers.empty());  // a written recognizer replaces the whole one
  EXPECT_TRUE(policy.nic.device_class_names.matches_any("dranet"));
  EXPECT_TRUE(policy.numa_attributes.empty());
}

// An inherited NUMA pattern that matches the policy's own alignment attribute is an error that
// says where the pattern came from.
TEST(PolicyInheritanceTest, InheritedNumaPatternConflictSaysSo) {
  PolicyParseOutcome outcome =
      parse_inheriting(kHeader + "  alignment:\n    attribute: example.com/numaNode\n");
  ASSERT_EQ(outcome.errors.size(), 1u) << all_errors(outcome);
  EXPECT_EQ(outcome.errors[0].location.field, "/spec/alignment/numaAttributes");
  EXPECT_THAT(outcome.errors[0].message, HasSubstr("inherited from the built-in policy"));
}

}  // namespace
}  // namespace topoguard::policy
