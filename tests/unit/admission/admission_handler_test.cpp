#include "topoguard/admission/admission_handler.h"

#include <string>

#include <gtest/gtest.h>

#include "note_name.h"
#include "topoguard/engine/json_patch.h"
#include "topoguard/policy/policy_loader.h"

namespace topoguard::admission {
namespace {

// One GPU and one RDMA NIC request without a pcieRoot constraint.
constexpr std::string_view kUnaligned = R"({
  "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
  "metadata": {"name": "gpu-nic"},
  "spec": {"spec": {"devices": {"requests": [
    {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 1}},
    {"name": "nic", "exactly": {"deviceClassName": "dranet.net", "count": 1}}]}}}})";

constexpr std::string_view kAligned = R"({
  "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
  "metadata": {"name": "gpu-nic", "namespace": "ml"},
  "spec": {"spec": {"devices": {"requests": [
    {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 1}},
    {"name": "nic", "exactly": {"deviceClassName": "dranet.net", "count": 1}}],
    "constraints": [{"requests": ["gpu", "nic"],
                     "matchAttribute": "resource.kubernetes.io/pcieRoot"}]}}}})";

// Tied only by NUMA node: denied, fixable (the fix keeps the NUMA constraint).
constexpr std::string_view kNumaOnly = R"({
  "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
  "metadata": {"name": "numa", "namespace": "ml"},
  "spec": {"spec": {"devices": {"requests": [
    {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 1}},
    {"name": "nic", "exactly": {"deviceClassName": "dranet.net", "count": 1}}],
    "constraints": [{"requests": ["gpu", "nic"], "matchAttribute": "dra.net/numaNode"}]}}}})";

// One GPU request, two NIC requests: no unambiguous pairing, so no fix.
constexpr std::string_view kAmbiguous = R"({
  "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
  "metadata": {"name": "ambiguous", "namespace": "ml"},
  "spec": {"spec": {"devices": {"requests": [
    {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 1}},
    {"name": "nic-a", "exactly": {"deviceClassName": "dranet.net", "count": 1}},
    {"name": "nic-b", "exactly": {"deviceClassName": "dranet.net", "count": 1}}]}}}})";

// Aligned, but two devices per request under one pcieRoot constraint: warn.
constexpr std::string_view kMultiDevice = R"({
  "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
  "metadata": {"name": "two-by-two", "namespace": "ml"},
  "spec": {"spec": {"devices": {"requests": [
    {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 2}},
    {"name": "nic", "exactly": {"deviceClassName": "dranet.net", "count": 2}}],
    "constraints": [{"requests": ["gpu", "nic"],
                     "matchAttribute": "resource.kubernetes.io/pcieRoot"}]}}}})";

constexpr std::string_view kMalformed = R"({
  "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
  "metadata": {"name": "broken", "namespace": "ml"},
  "spec": {"spec": {"devices": {"requests": "not-a-list"}}}})";

constexpr std::string_view kConfigMap = R"({
  "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "ml"}})";

const policy::PolicySet& builtin() {
  static const policy::PolicySet set = [] {
    Result<policy::PolicySet> loaded = policy::load_builtin_policies();
    EXPECT_TRUE(loaded.has_value());
    return loaded ? std::move(*loaded) : policy::PolicySet();
  }();
  return set;
}

AdmissionRequest make_request(std::string_view object, std::string operation = "CREATE",
                              std::string namespace_name = "ml") {
  AdmissionRequest request;
  request.uid = "uid-1";
  request.operation = std::move(operation);
  request.namespace_name = std::move(namespace_name);
  Json parsed = Json::parse(object);
  request.kind.kind = parsed.value("kind", "");
  if (request.operation == "DELETE") {
    request.old_object = std::move(parsed);
  } else {
    request.object = std::move(parsed);
  }
  return request;
}

bool has_rule(const ReviewOutcome& outcome, policy::RuleId rule) {
  for (const auto& finding : outcome.findings) {
    if (finding.rule == rule) {
      return true;
    }
  }
  return false;
}

struct Case {
  std::string_view note;
  std::string_view object;
  Mode mode;
  std::string operation;
  std::string namespace_name;
  bool dry_run;
  bool allowed;
  bool patched;
  Decision decision;
};

class HandlerTest : public ::testing::TestWithParam<Case> {};

// The decision, the presence of a patch and allowed/denied follow the admission rules.
TEST_P(HandlerTest, Decides) {
  const Case& c = GetParam();
  AdmissionRequest request = make_request(c.object, c.operation, c.namespace_name);
  request.dry_run = c.dry_run;
  const HandledReview handled =
      handle_admission(request, builtin(), {c.mode, FailureMode::kClosed});
  EXPECT_EQ(handled.response.uid, "uid-1");
  EXPECT_EQ(handled.response.allowed, c.allowed) << handled.response.status.message;
  EXPECT_EQ(!handled.response.patch.empty(), c.patched);
  EXPECT_EQ(handled.outcome.decision, c.decision) << decision_name(handled.outcome.decision);
  if (!c.allowed) {
    EXPECT_EQ(handled.response.status.code, 403);
    EXPECT_EQ(handled.response.status.reason, "Forbidden");
  }
  for (const auto& [key, value] : handled.response.audit_annotations) {
    EXPECT_EQ(key.find('/'), std::string::npos) << key;
  }
  // Handing the request over (its object is then patched in place) decides the same.
  const HandledReview handed_over =
      handle_admission(AdmissionRequest(request), builtin(), {c.mode, FailureMode::kClosed});
  EXPECT_EQ(handed_over.response.allowed, handled.response.allowed);
  EXPECT_EQ(handed_over.response.status.message, handled.response.status.message);
  EXPECT_EQ(handed_over.response.patch, handled.response.patch);
  EXPECT_EQ(handed_over.response.warnings, handled.response.warnings);
  EXPECT_EQ(handed_over.response.audit_annotations, handled.response.audit_annotations);
  EXPECT_EQ(handed_over.outcome.decision, handled.outcome.decision);
}

INSTANTIATE_TEST_SUITE_P(
    Requests, HandlerTest,
    ::testing::Values(
        Case{"ValidateDeniesUnaligned", kUnaligned, Mode::kValidate, "CREATE", "ml", false, false,
             false, Decision::kDeny},
        Case{"MutateCreatePatchesUnaligned", kUnaligned, Mode::kMutate, "CREATE", "ml", false,
             true, true, Decision::kPatch},
        Case{"MutateDryRunBehavesTheSame", kUnaligned, Mode::kMutate, "CREATE", "ml", true, true,
             true, Decision::kPatch},
        Case{"MutateUpdateIsNeverPatched", kUnaligned, Mode::kMutate, "UPDATE", "ml", false,
             false, false, Decision::kDeny},
        Case{"DeleteIsUntouched", kUnaligned, Mode::kValidate, "DELETE", "ml", false, true, false,
             Decision::kSkip},
        Case{"ConnectIsUntouched", kUnaligned, Mode::kMutate, "CONNECT", "ml", false, true, false,
             Decision::kSkip},
        Case{"UnhandledKindIsAllowed", kConfigMap, Mode::kMutate, "CREATE", "ml", false, true,
             false, Decision::kSkip},
        Case{"AlignedIsAllowed", kAligned, Mode::kValidate, "CREATE", "ml", false, true, false,
             Decision::kAllow},
        Case{"AlignedIsNotPatched", kAligned, Mode::kMutate, "CREATE", "ml", false, true, false,
             Decision::kAllow},
        Case{"NumaOnlyIsDeniedOnValidate", kNumaOnly, Mode::kValidate, "CREATE", "ml", false,
             false, false, Decision::kDeny},
        Case{"NumaOnlyIsPatchedOnMutate", kNumaOnly, Mode::kMutate, "CREATE", "ml", false, true,
             true, Decision::kPatch},
        Case{"AmbiguousIsDeniedWithoutPatch", kAmbiguous, Mode::kMutate, "CREATE", "ml", false,
             false, false, Decision::kDeny},
        Case{"MultiDeviceIsAllowedWithWarning", kMultiDevice, Mode::kValidate, "CREATE", "ml",
             false, true, false, Decision::kAllow},
        Case{"NamespaceFromRequestIsExcluded", kUnaligned, Mode::kValidate, "CREATE",
             "kube-system", false, true, false, Decision::kAllow}),
    topoguard::testing::NoteName());

// The mutate patch applies with API-server semantics and leaves nothing to deny.
TEST(HandlerPatchTest, PatchAppliesAndRemovesTheDenial) {
  const HandledReview handled = handle_admission(make_request(kUnaligned), builtin(),
                                                 {Mode::kMutate, FailureMode::kClosed});
  ASSERT_FALSE(handled.response.patch.empty());
  // The request log names the rule behind the patch, though nothing is left to report after it.
  EXPECT_EQ(handled.outcome.patch_rules,
            std::vector<policy::RuleId>{policy::RuleId::kMissingPcieAlignment});
  EXPECT_TRUE(handled.outcome.findings.empty());
  Result<Json> patched =
      engine::apply_patch(Json::parse(kUnaligned), handled.response.patch);
  ASSERT_TRUE(patched.has_value()) << patched.error().to_string();
  const HandledReview again = handle_admission(make_request(patched->dump()), builtin(),
                                               {Mode::kValidate, FailureMode::kClosed});
  EXPECT_TRUE(again.response.allowed) << again.response.status.message;
  EXPECT_FALSE(has_rule(again.outcome, policy::RuleId::kMissingPcieAlignment));
  // The namespace was filled in for evaluation only; the patch does not touch metadata.
  for (const auto& op : handled.response.patch) {
    EXPECT_NE(op["path"].get<std::string>().rfind("/metadata", 0), 0U) << op.dump();
  }
}

// A denial lists each deny finding: rule, JSON pointer and the fix.
TEST(HandlerDenialTest, MessageNamesRuleWhereAndFix) {
  const HandledReview handled = handle_admission(make_request(kUnaligned), builtin(),
                                                 {Mode::kValidate, FailureMode::kClosed});
  const std::string& message = handled.response.status.message;
  EXPECT_NE(message.find("missing-pcie-alignment"), std::string::npos) << message;
  EXPECT_NE(message.find("/spec/spec/devices"), std::string::npos) << message;
  EXPECT_NE(message.find("resource.kubernetes.io/pcieRoot"), std::string::npos) << message;
  ASSERT_TRUE(has_rule(handled.outcome, policy::RuleId::kMissingPcieAlignment));
  const Json findings = Json::parse(handled.response.audit_annotations.at("findings"));
  ASSERT_EQ(findings.size(), 1U);
  EXPECT_EQ(findings[0]["rule"], "missing-pcie-alignment");
  EXPECT_EQ(findings[0]["action"], "deny");
  EXPECT_EQ(handled.response.audit_annotations.at("decision"), "deny");
}

// Warn findings become warnings of at most 120 characters, 4096 in total.
TEST(HandlerWarningTest, WarningsAreBounded) {
  Json object = Json::parse(kMultiDevice);
  Json& requests = object["spec"]["spec"]["devices"]["requests"];
  Json& constraints = object["spec"]["spec"]["devices"]["constraints"];
  requests = Json::array();
  constraints = Json::array();
  for (int i = 0; i < 80; ++i) {
    const std::string gpu = "gpu-with-a-rather-long-request-name-" + std::to_string(i);
    const std::string nic = "nic-with-a-rather-long-request-name-" + std::to_string(i);
    requests.push_back({{"name", gpu}, {"exactly", {{"deviceClassName", "gpu.nvidia.com"},
                                                   {"count", 2}}}});
    requests.push_back({{"name", nic}, {"exactly", {{"deviceClassName", "dranet.net"},
                                                   {"count", 2}}}});
    constraints.push_back(
        {{"requests", {gpu, nic}}, {"matchAttribute", "resource.kubernetes.io/pcieRoot"}});
  }
  const HandledReview handled = handle_admission(make_request(object.dump()), builtin(),
                                                 {Mode::kValidate, FailureMode::kClosed});
  ASSERT_TRUE(has_rule(handled.outcome, policy::RuleId::kMultiDeviceAlignment));
  ASSERT_GT(handled.outcome.findings.size(), 40U);
  std::size_t total = 0;
  for (const auto& warning : handled.response.warnings) {
    EXPECT_LE(warning.size(), 120U) << warning;
    total += warning.size();
  }
  EXPECT_LE(total, 4096U);
  EXPECT_LT(handled.response.warnings.size(), handled.outcome.findings.size());
  EXPECT_NE(handled.response.warnings.back().find("more warning"), std::string::npos);
}

struct FailureCase {
  std::string_view note;
  FailureMode failure_mode;
  bool allowed;
  Decision decision;
};

class HandlerFailureTest : public ::testing::TestWithParam<FailureCase> {};

// An object the engine cannot evaluate is answered per failure mode, always well-formed.
TEST_P(HandlerFailureTest, EngineErrorFollowsFailureMode) {
  const FailureCase& c = GetParam();
  const HandledReview handled =
      handle_admission(make_request(kMalformed), builtin(), {Mode::kMutate, c.failure_mode});
  EXPECT_EQ(handled.response.uid, "uid-1");
  EXPECT_EQ(handled.response.allowed, c.allowed);
  EXPECT_EQ(handled.outcome.decision, c.decision);
  EXPECT_TRUE(handled.response.patch.empty());
  EXPECT_FALSE(handled.outcome.error.empty());
  if (c.allowed) {
    ASSERT_EQ(handled.response.warnings.size(), 1U);
    EXPECT_LE(handled.response.warnings[0].size(), 120U);
  } else {
    EXPECT_EQ(handled.response.status.code, 500);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Modes, HandlerFailureTest,
    ::testing::Values(FailureCase{"ClosedDenies", FailureMode::kClosed, false,
                                  Decision::kErrorDeny},
                      FailureCase{"OpenAllowsWithWarning", FailureMode::kOpen, true,
                                  Decision::kErrorAllow}),
    topoguard::testing::NoteName());

struct TruncateCase {
  std::string_view note;
  std::string text;
  std::size_t limit;
  std::string expected;
};

class TruncateTest : public ::testing::TestWithParam<TruncateCase> {};

// Truncation never splits a UTF-8 character and marks the cut.
TEST_P(TruncateTest, CutsAtCharacterBoundary) {
  EXPECT_EQ(truncate_text(GetParam().text, GetParam().limit), GetParam().expected);
}

INSTANTIATE_TEST_SUITE_P(
    Texts, TruncateTest,
    ::testing::Values(TruncateCase{"ShortIsUnchanged", "abc", 5, "abc"},
                      TruncateCase{"ExactIsUnchanged", "abcde", 5, "abcde"},
                      TruncateCase{"LongIsCut", "abcdefgh", 6, "abc..."},
                      TruncateCase{"MultibyteIsKept", "ab\xc2\xb5xyz", 6, "ab..."},
                      TruncateCase{"TinyLimit", "abcdef", 2, ".."}),
    topoguard::testing::NoteName());

}  // namespace
}  // namespace topoguard::admission
