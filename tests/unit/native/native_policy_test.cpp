// `policy compile`'s objects: what is emitted for which policy and version, that every
// expression parses and has a cost bound under the API server's limit, and what is listed as
// left to the webhook. Whether the CEL decides what the engine decides is the differential test's
// job (tests/native), with two real CEL implementations.
#include "topoguard/native/native_policy.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "topoguard/cel/cel.h"
#include "topoguard/policy/policy_loader.h"

namespace topoguard::native {
namespace {

policy::PolicySet policies_from(const std::string& text) {
  policy::PolicyStreamOutcome outcome = policy::parse_policy_stream(text, "test.yaml");
  EXPECT_TRUE(outcome.errors.empty()) << outcome.errors[0].to_string();
  return policy::PolicySet(std::move(outcome.policies));
}

CompiledPolicies compile(const policy::PolicySet& policies, int minor = 36) {
  CompileOptions options;
  options.version.minor = minor;
  Result<CompiledPolicies> compiled = compile_policies(policies, options);
  EXPECT_TRUE(compiled.has_value()) << (compiled ? "" : compiled.error().to_string());
  return compiled ? std::move(*compiled) : CompiledPolicies{};
}

std::vector<std::string> kinds_and_names(const CompiledPolicies& compiled) {
  std::vector<std::string> out;
  for (const Json& object : compiled.objects) {
    out.push_back(object["kind"].get<std::string>() + "/" +
                  object["metadata"]["name"].get<std::string>());
  }
  return out;
}

bool mentions(const std::vector<std::string>& notes, std::string_view text) {
  return std::any_of(notes.begin(), notes.end(),
                     [&](const std::string& note) { return note.find(text) != std::string::npos; });
}

TEST(NativePolicyTest, BuiltinPolicyCompilesToDenyWarnAndFix) {
  const Result<policy::PolicySet> builtin = policy::load_builtin_policies();
  ASSERT_TRUE(builtin.has_value());
  const CompiledPolicies compiled = compile(*builtin);
  EXPECT_EQ(kinds_and_names(compiled),
            (std::vector<std::string>{"ValidatingAdmissionPolicy/topoguard-default-deny",
                                      "ValidatingAdmissionPolicyBinding/topoguard-default-deny",
                                      "ValidatingAdmissionPolicy/topoguard-default-warn",
                                      "ValidatingAdmissionPolicyBinding/topoguard-default-warn",
                                      "MutatingAdmissionPolicy/topoguard-default-fix",
                                      "MutatingAdmissionPolicyBinding/topoguard-default-fix"}));
  const Json& deny = compiled.objects[0];
  EXPECT_EQ(deny["apiVersion"], "admissionregistration.k8s.io/v1");
  EXPECT_EQ(deny["spec"]["failurePolicy"], "Ignore");
  const Json& rule = deny["spec"]["matchConstraints"]["resourceRules"][0];
  EXPECT_EQ(rule["operations"], Json::array({"CREATE"}));
  EXPECT_EQ(rule["apiVersions"], Json::array({"v1"}));
  EXPECT_EQ(deny["spec"]["matchConstraints"]["matchPolicy"], "Equivalent");
  // missing-pcie-alignment, numa-only-alignment and overridden-alignment-attribute deny;
  // multi-device-alignment warns.
  EXPECT_EQ(deny["spec"]["validations"].size(), 3u);
  EXPECT_EQ(compiled.objects[1]["spec"]["validationActions"], Json::array({"Deny"}));
  EXPECT_EQ(compiled.objects[3]["spec"]["validationActions"], Json::array({"Warn"}));
  for (const Json& validation : deny["spec"]["validations"]) {
    EXPECT_EQ(validation["reason"], "Forbidden");
  }
  const Json& fix = compiled.objects[4];
  EXPECT_EQ(fix["apiVersion"], "admissionregistration.k8s.io/v1");
  EXPECT_EQ(fix["spec"]["reinvocationPolicy"], "IfNeeded");
  EXPECT_EQ(fix["spec"]["mutations"][0]["patchType"], "JSONPatch");
  // kube-system is excluded by the built-in policy.
  EXPECT_NE(deny["spec"]["matchConditions"][0]["expression"].get<std::string>().find("kube-system"),
            std::string::npos);
  EXPECT_TRUE(mentions(compiled.webhook_only, "split-claims"));
  EXPECT_TRUE(mentions(compiled.webhook_only, "unsatisfiable-alignment"));
  EXPECT_TRUE(mentions(compiled.webhook_only, "no DeviceClass list"));
  // The built-in policy asks nothing its compiled form cannot carry: `--strict` passes.
  EXPECT_TRUE(compiled.not_compiled.empty()) << compiled.not_compiled.front();
}

TEST(NativePolicyTest, EveryExpressionParsesAndStaysUnderThePerCallLimit) {
  const Result<policy::PolicySet> builtin = policy::load_builtin_policies();
  ASSERT_TRUE(builtin.has_value());
  const CompiledPolicies compiled = compile(*builtin);
  ASSERT_FALSE(compiled.costs.empty());
  for (const ExpressionCost& cost : compiled.costs) {
    EXPECT_LT(cost.cost, kPerCallLimit / 2) << cost.object << " " << cost.field;
    EXPECT_GT(cost.cost, 0u) << cost.object << " " << cost.field;
  }
  EXPECT_LT(compiled.largest_policy_cost, kRuntimeBudget / 2);
  for (const Json& object : compiled.objects) {
    if (!object["spec"].contains("variables")) {
      continue;
    }
    for (const Json& variable : object["spec"]["variables"]) {
      EXPECT_TRUE(cel::compile(variable["expression"].get<std::string>()).has_value())
          << variable["name"];
    }
  }
}

TEST(NativePolicyTest, BetaMutatingPolicyBeforeOneThirtySix) {
  const Result<policy::PolicySet> builtin = policy::load_builtin_policies();
  ASSERT_TRUE(builtin.has_value());
  const CompiledPolicies compiled = compile(*builtin, 35);
  const Json& fix = compiled.objects[4];
  ASSERT_EQ(fix["kind"], "MutatingAdmissionPolicy");
  EXPECT_EQ(fix["apiVersion"], "admissionregistration.k8s.io/v1beta1");
  EXPECT_NE(fix["metadata"]["annotations"]["topoguard.dev/feature-gate"].get<std::string>().find(
                "runtime-config"),
            std::string::npos);
  EXPECT_EQ(compiled.objects[5]["apiVersion"], "admissionregistration.k8s.io/v1beta1");
}

TEST(NativePolicyTest, VersionsBeforeOneThirtyFourAreRefused) {
  EXPECT_TRUE(parse_kubernetes_version("1.36").has_value());
  EXPECT_EQ(parse_kubernetes_version("v1.35.2")->minor, 35);
  EXPECT_FALSE(parse_kubernetes_version("1.33"));
  EXPECT_FALSE(parse_kubernetes_version("2.0"));
  EXPECT_FALSE(parse_kubernetes_version("1"));
  EXPECT_FALSE(parse_kubernetes_version("1.x"));
  EXPECT_FALSE(parse_kubernetes_version(""));
}

TEST(NativePolicyTest, OverridesAndExceptionsBecomeVariablesAndConditions) {
  const CompiledPolicies compiled = compile(policies_from(R"(
apiVersion: topoguard.dev/v1alpha1
kind: AlignmentPolicy
metadata: {name: site}
spec:
  match:
    namespaces: {include: ['team-.*', 'ml']}
    selector: {matchLabels: {gpu: "yes"}}
  rules:
    missing-pcie-alignment: {action: warn, mutate: true}
    numa-only-alignment: {action: warn, mutate: false}
  actionOverrides:
  - action: deny
    rules: [missing-pcie-alignment]
    namespaces: ['prod-.*']
  exceptions:
  - name: everything-in-sandbox
    reason: experiments
    match: {namespaces: {include: [sandbox]}}
  - name: legacy
    reason: by hand
    rules: [numa-only-alignment]
    match: {namespaceSelector: {matchLabels: {legacy: "true"}}}
)"));
  const std::vector<std::string> names = kinds_and_names(compiled);
  ASSERT_GE(names.size(), 4u);
  EXPECT_EQ(names[0], "ValidatingAdmissionPolicy/topoguard-site-deny");
  const Json& deny = compiled.objects[0]["spec"];
  EXPECT_EQ(deny["matchConstraints"]["objectSelector"]["matchLabels"]["gpu"], "yes");
  std::vector<std::string> conditions;
  for (const Json& condition : deny["matchConditions"]) {
    conditions.push_back(condition["name"].get<std::string>());
  }
  EXPECT_EQ(conditions,
            (std::vector<std::string>{"policy-match", "exception-0"}));
  std::vector<std::string> variables;
  for (const Json& variable : deny["variables"]) {
    variables.push_back(variable["name"].get<std::string>());
  }
  EXPECT_NE(std::find(variables.begin(), variables.end(), "actionMissingPcieAlignment"),
            variables.end());
  EXPECT_NE(std::find(variables.begin(), variables.end(), "exemptNumaOnlyAlignment"),
            variables.end());
  // The deny policy holds the rule an override can make deny and the inherited
  // overridden-alignment-attribute (deny), not numa-only-alignment (warn).
  ASSERT_EQ(deny["validations"].size(), 2u);
  EXPECT_EQ(deny["validations"][1]["message"].get<std::string>().rfind(
                "overridden-alignment-attribute", 0),
            0u);
  EXPECT_NE(deny["validations"][0]["expression"].get<std::string>().find(
                "variables.actionMissingPcieAlignment == 'deny'"),
            std::string::npos);
  // The fix: only missing-pcie-alignment mutates.
  EXPECT_EQ(names.back(), "MutatingAdmissionPolicyBinding/topoguard-site-fix");
}

TEST(NativePolicyTest, NothingForPoliciesOfOtherKinds) {
  const CompiledPolicies compiled = compile(policies_from(R"(
apiVersion: topoguard.dev/v1alpha1
kind: AlignmentPolicy
metadata: {name: pods-only}
spec:
  match: {kinds: [Deployment, Pod]}
)"));
  EXPECT_TRUE(compiled.objects.empty());
  EXPECT_TRUE(mentions(compiled.not_compiled, "matches no ResourceClaim"));
}

TEST(NativePolicyTest, NoMutatingPolicyWhenNoFixIsApplied) {
  const CompiledPolicies compiled = compile(policies_from(R"(
apiVersion: topoguard.dev/v1alpha1
kind: AlignmentPolicy
metadata: {name: no-fix}
spec:
  rules:
    missing-pcie-alignment: {action: deny, mutate: false}
    numa-only-alignment: {action: warn, mutate: false}
)"));
  for (const Json& object : compiled.objects) {
    EXPECT_NE(object["kind"], "MutatingAdmissionPolicy");
    // Nothing is patched, so a claim sent in a beta version is judged as one sent as v1.
    EXPECT_EQ(object.dump().find("requestKind"), std::string::npos) << object["metadata"]["name"];
  }
  EXPECT_FALSE(mentions(compiled.limits, "v1beta2"));
}

// Kubernetes 1.37.2 cannot convert a MutatingAdmissionPolicy's patch back to v1beta1/v1beta2:
// the fix runs only on claims sent as v1, and the validating policies leave a beta-version claim
// the fix would change to the webhook instead of judging it unpatched.
TEST(NativePolicyTest, BetaVersionClaimsTheFixWouldChangeAreLeftToTheWebhook) {
  const Result<policy::PolicySet> builtin = policy::load_builtin_policies();
  ASSERT_TRUE(builtin.has_value());
  const CompiledPolicies compiled = compile(*builtin, 37);
  const Json& fix = compiled.objects[4];
  ASSERT_EQ(fix["kind"], "MutatingAdmissionPolicy");
  EXPECT_EQ(fix["spec"]["matchConditions"].back(),
            (Json{{"name", "sent-as-v1"}, {"expression", "request.requestKind.version == 'v1'"}}));
  EXPECT_TRUE(fix["spec"]["mutations"][0]["jsonPatch"]["expression"].get<std::string>().starts_with(
      "variables.addsConstraints ? "));
  for (const std::size_t index : {0u, 2u}) {
    const Json& validating = compiled.objects[index];
    ASSERT_EQ(validating["kind"], "ValidatingAdmissionPolicy");
    const Json& skipped = validating["spec"]["variables"].back();
    EXPECT_EQ(skipped["name"], "fixSkippedForBetaVersion");
    EXPECT_EQ(skipped["expression"],
              "!(request.requestKind.version == 'v1') && variables.addsConstraints");
    for (const Json& validation : validating["spec"]["validations"]) {
      EXPECT_TRUE(validation["expression"].get<std::string>().starts_with(
          "!(!variables.fixSkippedForBetaVersion && "))
          << validation["expression"];
    }
  }
  EXPECT_TRUE(mentions(compiled.limits, "claims sent as resource.k8s.io/v1beta1 or v1beta2"));
}

TEST(NativePolicyTest, ClassesFromTheClusterStateAreBakedIn) {
  const Result<policy::PolicySet> builtin = policy::load_builtin_policies();
  ASSERT_TRUE(builtin.has_value());
  CompileOptions options;
  options.cluster_state = true;
  options.device_classes["default"] = {{"a100-pcie", true, false}, {"cx7-vf", false, true}};
  const Result<CompiledPolicies> compiled = compile_policies(*builtin, options);
  ASSERT_TRUE(compiled.has_value());
  const std::string text = compiled->objects[0].dump();
  EXPECT_NE(text.find("a100-pcie"), std::string::npos);
  EXPECT_NE(text.find("cx7-vf"), std::string::npos);
  EXPECT_TRUE(mentions(compiled->limits, "baked in"));
}

}  // namespace
}  // namespace topoguard::native
