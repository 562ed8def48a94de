#include "topoguard/policytest/policy_test.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "../audit/audit_test_support.h"
#include "temp_dir.h"
#include "topoguard/common/sorted_json.h"
#include "topoguard/policy/policy_loader.h"

namespace topoguard::policytest {
namespace {

constexpr const char* kAligned = R"(apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: aligned}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu.nvidia.com}
      - name: nic
        exactly: {deviceClassName: dranet}
      constraints:
      - {requests: [gpu, nic], matchAttribute: resource.kubernetes.io/pcieRoot}
)";

constexpr const char* kExemptingPolicy = R"(apiVersion: topoguard.dev/v1alpha1
kind: AlignmentPolicy
metadata: {name: team}
spec:
  exceptions:
  - name: legacy
    reason: migrating (INFRA-1)
    rules: [missing-pcie-alignment]
    match: {namespaces: {include: [ml]}}
)";

// A root that holds every path, for the tests of what a test file says.
const PathRoot& whole_tree() {
  static const PathRoot root = *PathRoot::open("/");
  return root;
}

ParsedTests parse(const std::string& text) {
  return parse_policy_tests("t.yaml", text, "dir", whole_tree());
}

PolicyTest one_test(const std::string& results, const std::string& extra = "") {
  ParsedTests parsed = parse(
      "apiVersion: topoguard.dev/v1alpha1\nkind: AlignmentPolicyTest\n"
      "metadata: {name: t}\nresources: [in.yaml]\n" +
      extra + "results:\n" + results);
  EXPECT_TRUE(parsed.errors.empty()) << (parsed.errors.empty() ? "" : parsed.errors[0].to_string());
  EXPECT_EQ(parsed.tests.size(), 1u);
  return parsed.tests.empty() ? PolicyTest{} : parsed.tests.front();
}

TestInputs inputs_of(const std::string& manifests, const std::string& policy_text = "") {
  TestInputs inputs;
  if (policy_text.empty()) {
    inputs.policies = *policy::load_builtin_policies();
  } else {
    const policy::PolicyStreamOutcome outcome = policy::parse_policy_stream(policy_text, "p.yaml");
    EXPECT_TRUE(outcome.errors.empty());
    inputs.policies = policy::PolicySet(outcome.policies);
  }
  inputs.manifests = audit::parse_manifests({{"in.yaml", manifests}});
  return inputs;
}

TEST(PolicyTestParse, ReadsATestAndResolvesItsPathsAgainstItsFolder) {
  const ParsedTests parsed = parse(R"(# a comment
apiVersion: topoguard.dev/v1alpha1
kind: AlignmentPolicyTest
metadata: {name: prod}
policies: [../prod.yaml]
resources: [manifests/, /abs/x.yaml]
clusterState: [slices.yaml]
strict: false
results:
- resource: {kind: ResourceClaimTemplate, namespace: ml, name: gpu-nic}
  rule: missing-pcie-alignment
  action: deny
- resource: {kind: ResourceClaimTemplate, name: gpu-nic}
  patched: expected/gpu-nic.yaml
)");
  ASSERT_TRUE(parsed.errors.empty()) << parsed.errors[0].to_string();
  ASSERT_EQ(parsed.tests.size(), 1u);
  const PolicyTest& test = parsed.tests[0];
  EXPECT_EQ(test.name, "prod");
  EXPECT_EQ(test.line, 2);
  EXPECT_EQ(test.policies, std::vector<std::string>{"prod.yaml"});
  EXPECT_EQ(test.resources, (std::vector<std::string>{"dir/manifests/", "/abs/x.yaml"}));
  EXPECT_EQ(test.cluster_state, std::vector<std::string>{"dir/slices.yaml"});
  EXPECT_FALSE(test.strict);
  ASSERT_EQ(test.results.size(), 2u);
  EXPECT_EQ(test.results[0].outcome, Outcome::kDeny);
  EXPECT_EQ(test.results[0].location.line, 10);
  EXPECT_EQ(test.results[1].patched, "dir/expected/gpu-nic.yaml");
  EXPECT_FALSE(test.results[1].rule);
}

TEST(PolicyTestParse, EveryMistakeIsAnErrorAtItsLineAndField) {
  const ParsedTests parsed = parse(R"(apiVersion: topoguard.dev/v1
kind: AlignmentPolicyTest
metadata: {name: broken}
resources: [m.yaml]
results:
- resource: {kind: Pod, name: p}
  rule: missing-pcie-alignment
  action: block
- resource: {kind: Pod, name: p, labels: {}}
  rule: no-such-rule
  action: deny
- resource: {kind: Pod, name: p}
  action: deny
)");
  EXPECT_TRUE(parsed.tests.empty());
  std::vector<std::string> errors;
  for (const Error& error : parsed.errors) {
    errors.push_back(std::to_string(error.location.line) + " " + error.location.field);
  }
  EXPECT_EQ(errors, (std::vector<std::string>{"1 /apiVersion", "8 /results/0/action",
                                              "9 /results/1/resource/labels", "10 /results/1/rule",
                                              "12 /results/2/rule"}));
}

TEST(PolicyTestParse, NullIsAbsentAndOtherTypesAreErrors) {
  const ParsedTests parsed = parse(R"(apiVersion: topoguard.dev/v1alpha1
kind: AlignmentPolicyTest
metadata: {name: t}
policies:
strict:
resources: [m.yaml]
results:
- resource: {kind: Pod, namespace: 5, name: p}
  rule: [split-claims]
  action: pass
)");
  std::vector<std::string> errors;
  for (const Error& error : parsed.errors) {
    errors.push_back(std::to_string(error.location.line) + " " + error.location.field + " " +
                     error.message);
  }
  EXPECT_EQ(errors, (std::vector<std::string>{
                        "8 /results/0/resource/namespace must be a string, not integer",
                        "9 /results/0/rule must be a string, not array"}));
}

TEST(PolicyTestParse, OtherKindsAreSkippedAndPolicyFilesSkipTests) {
  const std::string text =
      std::string(kExemptingPolicy) +
      "---\napiVersion: topoguard.dev/v1alpha1\nkind: AlignmentPolicyTest\nmetadata: {name: t}\n"
      "resources: [m.yaml]\nresults: [{resource: {kind: Pod, name: p}, rule: split-claims, "
      "action: pass}]\n";
  const ParsedTests parsed = parse(text);
  EXPECT_TRUE(parsed.errors.empty());
  EXPECT_EQ(parsed.tests.size(), 1u);
  const policy::PolicyStreamOutcome policies = policy::parse_policy_stream(text, "p.yaml");
  EXPECT_TRUE(policies.errors.empty());
  EXPECT_EQ(policies.policies.size(), 1u);
}

TEST(PolicyTestRun, ExpectedActionsPassAndOthersFailWithWhatHappened) {
  const PolicyTest test =
      one_test(R"(- resource: {kind: ResourceClaimTemplate, namespace: ml, name: gpu-nic}
  rule: missing-pcie-alignment
  action: deny
- resource: {kind: ResourceClaimTemplate, name: aligned}
  rule: missing-pcie-alignment
  action: pass
- resource: {kind: ResourceClaimTemplate, namespace: default, name: aligned}
  rule: missing-pcie-alignment
  action: warn
- resource: {kind: ResourceClaimTemplate, namespace: other, name: gpu-nic}
  rule: missing-pcie-alignment
  action: deny
)");
  const TestInputs inputs =
      inputs_of(std::string(audit::testing::kUnalignedTemplate) + "---\n" + kAligned);
  const TestResult result = run_policy_test(test, inputs);
  ASSERT_EQ(result.cases.size(), 4u);
  EXPECT_TRUE(result.cases[0].passed);
  EXPECT_TRUE(result.cases[1].passed);  // no namespace: the object's "default"
  EXPECT_FALSE(result.cases[2].passed);
  EXPECT_EQ(result.cases[2].observed_outcome, Outcome::kPass);
  EXPECT_EQ(result.cases[2].observed, "no finding");
  EXPECT_FALSE(result.cases[3].passed);
  EXPECT_FALSE(result.cases[3].resource_found);
  EXPECT_NE(result.cases[3].observed.find("ResourceClaimTemplate ml/gpu-nic"), std::string::npos);
  EXPECT_FALSE(result.passed());
}

constexpr const char* kProdTierPolicy = R"(apiVersion: topoguard.dev/v1alpha1
kind: AlignmentPolicy
metadata: {name: prod-tier}
spec:
  rules: {missing-pcie-alignment: {action: warn}}
  actionOverrides:
  - {namespaceSelector: {matchLabels: {tier: prod}}, action: deny}
)";

// A deny that needs the labels of the namespace: without them the case fails and says why;
// `namespaces:` in the test gives them, and the resources' own Namespace wins over it.
TEST(PolicyTestRun, MissingNamespaceLabelsAreTheReasonGivenAndCanBeGiven) {
  const std::string results =
      R"(- resource: {kind: ResourceClaimTemplate, namespace: ml, name: gpu-nic}
  rule: missing-pcie-alignment
  action: deny
)";
  const PolicyTest without = one_test(results);
  TestInputs inputs = inputs_of(audit::testing::kUnalignedTemplate, kProdTierPolicy);
  const TestResult failed = run_policy_test(without, inputs);
  ASSERT_EQ(failed.cases.size(), 1u);
  EXPECT_FALSE(failed.cases[0].passed);
  EXPECT_EQ(failed.cases[0].observed_outcome, Outcome::kWarn);
  EXPECT_NE(failed.cases[0].why.find("the labels of namespace \"ml\" are not known"),
            std::string::npos)
      << failed.cases[0].why;
  std::ostringstream text;
  write_text({}, {failed}, text);
  EXPECT_NE(text.str().find("\n    why: the labels of namespace"), std::string::npos) << text.str();
  std::ostringstream colored;
  write_text({}, {failed}, colored, true);
  EXPECT_EQ(colored.str().rfind("\033[1;31mFAIL\033[0m ", 0), 0u) << colored.str();
  EXPECT_EQ(colored.str().substr(colored.str().find(' ')), text.str().substr(text.str().find(' ')));

  // Missing labels never strengthen: more than expected (warn where audit is) is not theirs.
  const PolicyTest audit_expected = one_test(
      R"(- resource: {kind: ResourceClaimTemplate, namespace: ml, name: gpu-nic}
  rule: missing-pcie-alignment
  action: audit
)");
  const TestResult stronger = run_policy_test(audit_expected, inputs);
  ASSERT_EQ(stronger.cases.size(), 1u);
  EXPECT_FALSE(stronger.cases[0].passed);
  EXPECT_EQ(stronger.cases[0].why, "");

  const PolicyTest with = one_test(results, "namespaces: {ml: {tier: prod}}\n");
  ASSERT_EQ(with.namespaces.size(), 1u);
  inputs.namespaces = with.namespaces;
  const TestResult passed = run_policy_test(with, inputs);
  ASSERT_EQ(passed.cases.size(), 1u);
  EXPECT_TRUE(passed.cases[0].passed) << passed.cases[0].observed;
  EXPECT_EQ(passed.cases[0].why, "");

  TestInputs own_namespace = inputs_of(
      "apiVersion: v1\nkind: Namespace\nmetadata: {name: ml, labels: {tier: dev}}\n---\n" +
          std::string(audit::testing::kUnalignedTemplate),
      kProdTierPolicy);
  own_namespace.namespaces = with.namespaces;
  const TestResult dev = run_policy_test(with, own_namespace);
  ASSERT_EQ(dev.cases.size(), 1u);
  EXPECT_EQ(dev.cases[0].observed_outcome, Outcome::kWarn);
  EXPECT_EQ(dev.cases[0].why, "");  // the labels were known: tier=dev
}

// `namespaces:` is a map written in the test or a list of files (resolved, inside the root);
// anything else, or a bad label, is an error at its line and field.
TEST(PolicyTestParse, NamespacesAreAMapOrFiles) {
  const PolicyTest files = one_test("- resource: {kind: Pod, name: p}\n  rule: split-claims\n"
                                    "  action: pass\n",
                                    "namespaces: [ns.yaml]\n");
  EXPECT_EQ(files.namespace_files, std::vector<std::string>{"dir/ns.yaml"});
  EXPECT_TRUE(files.namespaces.empty());
  for (const auto& [value, error] : std::vector<std::pair<std::string, std::string>>{
           {"7", "t.yaml:5: /namespaces: must map namespace names to labels, or list files of "
                 "them [wrong_type]"},
           {"{ml: {tier: [prod]}}",
            "t.yaml:5: /namespaces/ml/tier: a label value must be a string (quote it), got array "
            "[wrong_type]"}}) {
    const ParsedTests parsed =
        parse("apiVersion: topoguard.dev/v1alpha1\nkind: AlignmentPolicyTest\n"
              "metadata: {name: t}\nresources: [in.yaml]\nnamespaces: " +
              value + "\nresults:\n- resource: {kind: Pod, name: p}\n  rule: split-claims\n"
              "  action: pass\n");
    EXPECT_TRUE(parsed.tests.empty()) << value;
    ASSERT_EQ(parsed.errors.size(), 1u) << value;
    EXPECT_EQ(parsed.errors[0].to_string(), error);
  }
}

TEST(PolicyTestRun, StrictTestsFailOnUnlistedFindingsOfListedResources) {
  const std::string results =
      R"(- resource: {kind: ResourceClaimTemplate, namespace: ml, name: gpu-nic}
  patched: never-read.yaml
)";
  TestInputs inputs = inputs_of(audit::testing::kUnalignedTemplate);
  const PolicyTest strict = one_test(results);
  inputs.patched.emplace(strict.results[0].patched, Json(SortedJson::parse(R"({"a": 1})")));
  const TestResult failed = run_policy_test(strict, inputs);
  ASSERT_EQ(failed.cases.size(), 2u);
  EXPECT_FALSE(failed.cases[0].passed);  // the patched object differs
  EXPECT_EQ(failed.cases[0].diff.rfind("--- expected\n+++ patched\n", 0), 0u)
      << failed.cases[0].diff;
  ASSERT_TRUE(failed.cases[0].patched_object);
  EXPECT_EQ(failed.cases[1].expected, nullptr);
  EXPECT_EQ(failed.cases[1].rule, policy::RuleId::kMissingPcieAlignment);
  EXPECT_EQ(failed.cases[1].observed_outcome, Outcome::kDeny);

  const PolicyTest lenient = one_test(results, "strict: false\n");
  inputs.patched.erase(strict.results[0].patched);
  inputs.patched.emplace(lenient.results[0].patched, *failed.cases[0].patched_object);
  const TestResult passed = run_policy_test(lenient, inputs);
  ASSERT_EQ(passed.cases.size(), 1u);
  EXPECT_TRUE(passed.cases[0].passed) << passed.cases[0].observed;
  EXPECT_TRUE(passed.passed());
}

TEST(PolicyTestRun, AnExceptionMakesTheOutcomeExempted) {
  const PolicyTest test =
      one_test(R"(- resource: {kind: ResourceClaimTemplate, namespace: ml, name: gpu-nic}
  rule: missing-pcie-alignment
  action: exempted
)");
  const TestResult result =
      run_policy_test(test, inputs_of(audit::testing::kUnalignedTemplate, kExemptingPolicy));
  ASSERT_EQ(result.cases.size(), 1u);
  EXPECT_TRUE(result.cases[0].passed) << result.cases[0].observed;
  EXPECT_EQ(result.cases[0].observed.rfind("exempted by legacy: ", 0), 0u);
}

TEST(PolicyTestRun, InputErrorsFailTheTest) {
  const PolicyTest test = one_test(R"(- resource: {kind: Pod, name: p}
  rule: split-claims
  action: pass
)");
  const TestResult result = run_policy_test(test, inputs_of("kind: [unclosed\n"));
  EXPECT_FALSE(result.errors.empty());
  EXPECT_FALSE(result.passed());
}

TEST(PolicyTestUpdate, ActionsAreReplacedInPlaceAndFindingsAppendedKeepingComments) {
  const std::string text = R"(# header
apiVersion: topoguard.dev/v1alpha1
kind: AlignmentPolicyTest
metadata: {name: t}
resources: [in.yaml]
results:
  # the template
  - resource: {kind: ResourceClaimTemplate, namespace: ml, name: gpu-nic}
    rule: split-claims
    action: 'warn'  # keep me
  - resource: {kind: ResourceClaimTemplate, namespace: ml, name: gpu-nic}
    rule: numa-only-alignment
    action: deny
# trailing
)";
  ParsedTests parsed = parse_policy_tests("t.yaml", text, ".", whole_tree());
  ASSERT_EQ(parsed.tests.size(), 1u);
  const TestResult result =
      run_policy_test(parsed.tests[0], inputs_of(audit::testing::kUnalignedTemplate));
  const Result<FileUpdate> update = update_test_file("t.yaml", text, {result});
  ASSERT_TRUE(update) << update.error().to_string();
  EXPECT_EQ(update->text, R"(# header
apiVersion: topoguard.dev/v1alpha1
kind: AlignmentPolicyTest
metadata: {name: t}
resources: [in.yaml]
results:
  # the template
  - resource: {kind: ResourceClaimTemplate, namespace: ml, name: gpu-nic}
    rule: split-claims
    action: 'pass'  # keep me
  - resource: {kind: ResourceClaimTemplate, namespace: ml, name: gpu-nic}
    rule: numa-only-alignment
    action: pass
  - resource: {kind: ResourceClaimTemplate, namespace: ml, name: gpu-nic}
    rule: missing-pcie-alignment
    action: deny
# trailing
)");
  // The updated file runs clean.
  parsed = parse_policy_tests("t.yaml", update->text, ".", whole_tree());
  ASSERT_EQ(parsed.tests.size(), 1u);
  EXPECT_TRUE(
      run_policy_test(parsed.tests[0], inputs_of(audit::testing::kUnalignedTemplate)).passed());
}

TEST(PolicyTestUpdate, AFlowResultListIsLeftWithANote) {
  const std::string text =
      "apiVersion: topoguard.dev/v1alpha1\nkind: AlignmentPolicyTest\nmetadata: {name: t}\n"
      "resources: [in.yaml]\nresults: [{resource: {kind: ResourceClaimTemplate, namespace: ml, "
      "name: gpu-nic}, rule: split-claims, action: pass}]\n";
  const ParsedTests parsed = parse_policy_tests("t.yaml", text, ".", whole_tree());
  ASSERT_EQ(parsed.tests.size(), 1u);
  const TestResult result =
      run_policy_test(parsed.tests[0], inputs_of(audit::testing::kUnalignedTemplate));
  const Result<FileUpdate> update = update_test_file("t.yaml", text, {result});
  ASSERT_TRUE(update);
  EXPECT_EQ(update->text, text);
  ASSERT_EQ(update->notes.size(), 1u);
  EXPECT_NE(update->notes[0].find("add by hand"), std::string::npos);
}

TEST(PolicyTestOutput, TextAndJUnitCountTheSameFailures) {
  const PolicyTest test =
      one_test(R"(- resource: {kind: ResourceClaimTemplate, namespace: ml, name: gpu-nic}
  rule: missing-pcie-alignment
  action: warn
)");
  const TestResult result = run_policy_test(test, inputs_of(audit::testing::kUnalignedTemplate));
  std::ostringstream text;
  write_text({}, {result}, text);
  EXPECT_NE(text.str().find("FAIL t: ResourceClaimTemplate ml/gpu-nic missing-pcie-alignment warn\n"
                            "    at t.yaml:6\n    expected: warn\n    got: deny: "),
            std::string::npos)
      << text.str();
  EXPECT_NE(text.str().find("1 test, 1 failed\n"), std::string::npos);
  std::ostringstream junit;
  write_junit({}, {result}, junit);
  EXPECT_NE(junit.str().find("tests=\"1\" failures=\"1\" errors=\"0\""), std::string::npos);
  EXPECT_NE(junit.str().find("<failure type=\"wrong-result\" message=\"deny: "), std::string::npos);
}

// The paths of a test file, in a real tree: <tmp>/root holds the suite, <tmp>/outside does not.
struct EscapeCase {
  std::string field;    // policies, resources, clusterState or patched
  std::string path;     // as the test file writes it
  std::string pointer;  // where the error must be
};

class PolicyTestRootTest : public ::testing::TestWithParam<EscapeCase> {
 protected:
  void SetUp() override {
    dir_.write("outside/x.yaml", "kind: Pod\n");
    dir_.write("root/in.yaml", "kind: Pod\n");
    dir_.write("root/folder/in.yaml", "kind: Pod\n");
    std::filesystem::create_symlink(dir_.path() + "/outside/x.yaml", dir_.path() + "/root/link.yaml");
    std::filesystem::create_symlink(dir_.path() + "/outside/x.yaml",
                                    dir_.path() + "/root/folder/link.yaml");
    std::filesystem::create_symlink("in.yaml", dir_.path() + "/root/inside-link.yaml");
  }

  // The errors of a suite in <tmp>/root whose `field` names `path`.
  std::vector<Error> errors_of(const std::string& field, const std::string& path) const {
    const Result<PathRoot> root = PathRoot::open(dir_.path() + "/root");
    EXPECT_TRUE(root);
    std::string text =
        "apiVersion: topoguard.dev/v1alpha1\nkind: AlignmentPolicyTest\nmetadata: {name: t}\n";
    text += field == "resources" ? "" : "resources: [in.yaml]\n";
    if (field == "patched") {
      text += "results:\n- resource: {kind: Pod, name: p}\n  patched: " + path + "\n";
    } else {
      text += field + ": [" + path + "]\nresults:\n- resource: {kind: Pod, name: p}\n" +
              "  rule: split-claims\n  action: pass\n";
    }
    return parse_policy_tests("suite.yaml", text, dir_.path() + "/root", *root).errors;
  }

  testing::TempDir dir_;
};

// A path that resolves outside the root (by .., absolutely, through a symlink, or a folder
// holding a symlink that leads out) is an error at its field; the same shapes inside are fine.
TEST_P(PolicyTestRootTest, PathsOutsideTheRootAreErrorsAtTheirField) {
  const EscapeCase& c = GetParam();
  const std::string path = c.path.starts_with("OUTSIDE") ? dir_.path() + c.path.substr(7) : c.path;
  const std::vector<Error> errors = errors_of(c.field, path);
  if (c.pointer.empty()) {
    EXPECT_TRUE(errors.empty()) << errors.front().to_string();
    return;
  }
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].location.file, "suite.yaml");
  EXPECT_EQ(errors[0].location.field, c.pointer);
  EXPECT_GT(errors[0].location.line, 0);
  EXPECT_NE(errors[0].message.find("resolves outside the root"), std::string::npos)
      << errors[0].message;
}

std::vector<EscapeCase> escape_cases() {
  std::vector<EscapeCase> cases;
  for (const std::string field : {"policies", "resources", "clusterState", "patched"}) {
    const std::string pointer = field == "patched" ? "/results/0/patched" : "/" + field + "/0";
    cases.push_back({field, "../outside/x.yaml", pointer});
    cases.push_back({field, "OUTSIDE/outside/x.yaml", pointer});
    cases.push_back({field, "link.yaml", pointer});
    cases.push_back({field, "folder/../../outside/x.yaml", pointer});
    cases.push_back({field, "inside-link.yaml", ""});
    cases.push_back({field, "OUTSIDE/root/in.yaml", ""});
    if (field != "patched") {
      cases.push_back({field, "folder", pointer});
    }
  }
  return cases;
}

std::string escape_case_name(const ::testing::TestParamInfo<EscapeCase>& info) {
  return info.param.field + "_" + std::to_string(info.index);
}

INSTANTIATE_TEST_SUITE_P(EachField, PolicyTestRootTest, ::testing::ValuesIn(escape_cases()),
                         escape_case_name);

// contains() compares whole components: a sibling that shares the root's name as a prefix is
// outside.
TEST(PathRoot, ASiblingWithTheSamePrefixIsOutside) {
  testing::TempDir dir;
  dir.write("root/a.yaml", "");
  dir.write("root-other/a.yaml", "");
  const Result<PathRoot> root = PathRoot::open(dir.path() + "/root");
  ASSERT_TRUE(root);
  EXPECT_TRUE(root->contains(dir.path() + "/root/a.yaml"));
  EXPECT_TRUE(root->contains(dir.path() + "/root/new/file.yaml"));
  EXPECT_FALSE(root->contains(dir.path() + "/root-other/a.yaml"));
  EXPECT_FALSE(PathRoot::open(dir.path() + "/root/a.yaml"));
}

}  // namespace
}  // namespace topoguard::policytest
