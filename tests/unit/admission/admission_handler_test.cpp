#include "topoguard/admission/admission_handler.h"

#include <string>

#include <gtest/gtest.h>

#include "note_name.h"
#include "topoguard/engine/json_patch.h"
#include "topoguard/policy/policy_loader.h"
#include "utf8.h"

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
        // Claim and template specs are immutable: their UPDATEs are never judged.
        Case{"TemplateUpdateIsNeverJudged", kUnaligned, Mode::kMutate, "UPDATE", "ml", false,
             true, false, Decision::kSkip},
        Case{"TemplateUpdateIsNeverJudgedOnValidate", kUnaligned, Mode::kValidate, "UPDATE", "ml",
             false, true, false, Decision::kSkip},
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
  for (const engine::PatchOperation& operation : handled.response.patch) {
    EXPECT_NE(operation.path.rfind("/metadata", 0), 0U) << operation.path;
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

// A policy whose namespaceSelector cannot be read (the review carries no namespace labels and
// this webhook has no cluster cache) does not judge the object, and the audit log says why.
TEST(HandlerUnknownTest, UnreadableNamespaceSelectorAllowsAndSaysSo) {
  policy::PolicyStreamOutcome parsed = policy::parse_policy_stream(
      "apiVersion: topoguard.dev/v1alpha1\nkind: AlignmentPolicy\nmetadata: {name: prod}\n"
      "spec:\n  match: {namespaceSelector: {matchLabels: {tier: prod}}}\n",
      "prod.yaml");
  ASSERT_TRUE(parsed.errors.empty()) << parsed.errors[0].to_string();
  const policy::PolicySet policies(std::move(parsed.policies));
  const HandledReview handled = handle_admission(make_request(kUnaligned), policies,
                                                 {Mode::kValidate, FailureMode::kClosed});
  EXPECT_TRUE(handled.response.allowed);
  EXPECT_EQ(handled.response.audit_annotations.at("decision"), "allow");
  EXPECT_NE(handled.response.audit_annotations.at("unknown").find(
                "policy \"prod\": its namespaceSelector cannot be evaluated: the labels of "
                "namespace \"ml\" are not known"),
            std::string::npos)
      << handled.response.audit_annotations.at("unknown");
  // The name label every Namespace carries is known without its labels.
  policy::PolicyStreamOutcome by_name = policy::parse_policy_stream(
      "apiVersion: topoguard.dev/v1alpha1\nkind: AlignmentPolicy\nmetadata: {name: ml}\n"
      "spec:\n  match: {namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: ml}}}\n",
      "ml.yaml");
  ASSERT_TRUE(by_name.errors.empty()) << by_name.errors[0].to_string();
  const HandledReview denied =
      handle_admission(make_request(kUnaligned), policy::PolicySet(std::move(by_name.policies)),
                       {Mode::kValidate, FailureMode::kClosed});
  EXPECT_FALSE(denied.response.allowed);
  EXPECT_EQ(denied.response.audit_annotations.count("unknown"), 0U);
}

// Characters as the API server counts them (code points); -1 when `text` is not valid UTF-8.
long characters(std::string_view text) {
  long count = 0;
  for (std::size_t at = 0; at < text.size(); ++count) {
    const std::size_t length =
        static_cast<unsigned char>(text[at]) < 0x80 ? 1 : utf8_sequence_length(text, at);
    if (length == 0) {
      return -1;
    }
    at += length;
  }
  return count;
}

std::string repeated(std::string_view piece, int times) {
  std::string text;
  for (int i = 0; i < times; ++i) {
    text += piece;
  }
  return text;
}

// A warning that fits is sent as it is.
TEST(FitWarningTest, ShortTextUnchanged) {
  EXPECT_EQ(fit_warning("split-claims: a; fix it"), "split-claims: a; fix it");
  const std::string exactly = repeated("x", 256);
  EXPECT_EQ(fit_warning(exactly), exactly);
}

// A long description gives way to the fix: the clause after the last "; " is kept whole.
TEST(FitWarningTest, LongDescriptionKeepsTheFix) {
  const std::string fix = "; add constraint {requests: [gpu, nic], matchAttribute: "
                          "resource.kubernetes.io/pcieRoot}";
  const std::string warning = fit_warning("missing-pcie-alignment: " + repeated("word ", 80) + fix);
  EXPECT_EQ(characters(warning), 256);
  EXPECT_EQ(warning.substr(0, 24), "missing-pcie-alignment: ");
  ASSERT_GT(warning.size(), fix.size());
  EXPECT_EQ(warning.substr(warning.size() - fix.size() - 3), "..." + fix);
}

// The limit counts characters, not bytes, and a cut never splits one: 300 two-byte and 300
// three-byte characters keep 256 characters and stay valid UTF-8.
TEST(FitWarningTest, CountsCharactersAndCutsBetweenThem) {
  for (const std::string_view piece : {std::string_view("\u00e9"), std::string_view("\u20ac")}) {
    const std::string warning = fit_warning(repeated(piece, 300));
    EXPECT_EQ(characters(warning), 256) << piece;
    EXPECT_EQ(warning.size(), (256 - 3) * piece.size() + 3) << piece;
    EXPECT_EQ(warning.substr(warning.size() - 3), "...");
  }
  // The fix, too, is measured in characters.
  const std::string warning = fit_warning(repeated("\u00e9", 300) + "; fix " + repeated("\u20ac", 10));
  EXPECT_EQ(characters(warning), 256);
  EXPECT_EQ(warning.substr(warning.size() - 3 * 10 - 6), "; fix " + repeated("\u20ac", 10));
}

// A fix that would leave less than a quarter of the room to what it fixes is cut like any text.
TEST(FitWarningTest, OverlongFixIsCutAtTheEnd) {
  const std::string warning = fit_warning("short; " + repeated("f", 300));
  EXPECT_EQ(characters(warning), 256);
  EXPECT_EQ(warning.substr(0, 7), "short; ");
  EXPECT_EQ(warning.substr(warning.size() - 4), "f...");
}

// The API server drops a warning holding a control character or invalid UTF-8: they are escaped.
TEST(FitWarningTest, ControlsAndInvalidUtf8Escaped) {
  const std::string warning = fit_warning("name \x1b[2K\rforged\n \xff");
  EXPECT_EQ(warning, "name \\x1b[2K\\rforged\\n \\xff");
  EXPECT_GE(characters(warning), 0);
}

// A warn finding whose message runs past 120 characters keeps its fix in the warning.
TEST(HandlerWarningTest, LongWarningKeepsItsFix) {
  policy::PolicyStreamOutcome parsed = policy::parse_policy_stream(
      "apiVersion: topoguard.dev/v1alpha1\nkind: AlignmentPolicy\nmetadata: {name: soft}\n"
      "spec: {rules: {missing-pcie-alignment: {action: warn}}}\n",
      "soft.yaml");
  ASSERT_TRUE(parsed.errors.empty()) << parsed.errors[0].to_string();
  Json object = Json::parse(kUnaligned);
  Json& requests = object["spec"]["spec"]["devices"]["requests"];
  requests[0]["name"] = "gpu-for-the-inference-server-with-a-long-name";
  requests[1]["name"] = "nic-for-the-inference-server-with-a-long-name";
  const HandledReview handled =
      handle_admission(make_request(object.dump()), policy::PolicySet(std::move(parsed.policies)),
                       {Mode::kValidate, FailureMode::kClosed});
  ASSERT_EQ(handled.response.warnings.size(), 1U);
  const std::string& warning = handled.response.warnings[0];
  EXPECT_GT(warning.size(), 120U);
  EXPECT_LE(characters(warning), 256);
  EXPECT_NE(warning.find("; add constraint {requests: [gpu-for-the-inference-server-with-a-long-"
                         "name, nic-for-the-inference-server-with-a-long-name], matchAttribute: "
                         "resource.kubernetes.io/pcieRoot}"),
            std::string::npos)
      << warning;
}

// Warn findings become warnings of at most 256 characters, 4096 in total, each text once.
TEST(HandlerWarningTest, WarningsAreBounded) {
  Json object = Json::parse(kMultiDevice);
  Json& requests = object["spec"]["spec"]["devices"]["requests"];
  Json& constraints = object["spec"]["spec"]["devices"]["constraints"];
  requests = Json::array();
  constraints = Json::array();
  // 16 pairs (the API's 32 requests) judged by four policies: 64 findings.
  for (int i = 0; i < 16; ++i) {
    const std::string gpu = "gpu-" + std::to_string(i) + "-with-a-rather-long-request-name";
    const std::string nic = "nic-" + std::to_string(i) + "-with-a-rather-long-request-name";
    requests.push_back({{"name", gpu}, {"exactly", {{"deviceClassName", "gpu.nvidia.com"},
                                                   {"count", 2}}}});
    requests.push_back({{"name", nic}, {"exactly", {{"deviceClassName", "dranet.net"},
                                                   {"count", 2}}}});
    constraints.push_back(
        {{"requests", {gpu, nic}}, {"matchAttribute", "resource.kubernetes.io/pcieRoot"}});
  }
  std::string four;
  for (int i = 0; i < 4; ++i) {
    four += "---\napiVersion: topoguard.dev/v1alpha1\nkind: AlignmentPolicy\nmetadata: {name: p" +
            std::to_string(i) + "}\nspec: {}\n";
  }
  policy::PolicyStreamOutcome parsed = policy::parse_policy_stream(four, "four.yaml");
  ASSERT_TRUE(parsed.errors.empty()) << parsed.errors[0].to_string();
  const policy::PolicySet policies(std::move(parsed.policies));
  const HandledReview handled = handle_admission(make_request(object.dump()), policies,
                                                 {Mode::kValidate, FailureMode::kClosed});
  ASSERT_TRUE(has_rule(handled.outcome, policy::RuleId::kMultiDeviceAlignment));
  ASSERT_GT(handled.outcome.findings.size(), 40U);
  std::size_t total = 0;
  for (const auto& warning : handled.response.warnings) {
    EXPECT_LE(characters(warning), 256) << warning;
    total += static_cast<std::size_t>(characters(warning));
  }
  EXPECT_LE(total, 4096U);
  // The four policies' identical warnings are sent once.
  EXPECT_EQ(handled.response.warnings.size(), 16U);
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
    EXPECT_LE(characters(handled.response.warnings[0]), 256);
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

// UPDATE semantics for workloads: only what the change brings is denied.
class HandlerUpdateTest : public ::testing::Test {
 protected:
  // device-plugin-pairing at deny, so a workload has something to deny in the webhook.
  static const policy::PolicySet& strict() {
    static const policy::PolicySet set = [] {
      policy::PolicyStreamOutcome parsed = policy::parse_policy_stream(R"(
apiVersion: topoguard.dev/v1alpha1
kind: AlignmentPolicy
metadata: {name: strict}
spec:
  rules:
    device-plugin-pairing: {action: deny}
)", "strict.yaml");
      EXPECT_TRUE(parsed.errors.empty());
      return policy::PolicySet(std::move(parsed.policies));
    }();
    return set;
  }

  // A Deployment whose container asks for the given extended resources.
  static Json deployment(int replicas, const Json& limits) {
    Json container = {{"name", "server"}, {"image", "vllm"}, {"resources", {{"limits", limits}}}};
    Json pod_template = {{"spec", {{"containers", Json::array({std::move(container)})}}}};
    return Json{{"apiVersion", "apps/v1"},
                {"kind", "Deployment"},
                {"metadata", {{"name", "vllm"}, {"namespace", "ml"}}},
                {"spec", {{"replicas", replicas}, {"template", std::move(pod_template)}}}};
  }

  static const Json& paired() {
    static const Json limits = {{"nvidia.com/gpu", 1}, {"rdma/ib", 1}};
    return limits;
  }

  static HandledReview update(Json object, Json old_object) {
    AdmissionRequest request;
    request.uid = "uid-1";
    request.operation = "UPDATE";
    request.namespace_name = "ml";
    request.kind.group = "apps";
    request.kind.kind = "Deployment";
    request.object = std::move(object);
    request.old_object = std::move(old_object);
    return handle_admission(request, strict(), {Mode::kValidate, FailureMode::kClosed});
  }
};

TEST_F(HandlerUpdateTest, CreateOfTheViolationIsDenied) {
  AdmissionRequest request;
  request.uid = "uid-1";
  request.operation = "CREATE";
  request.namespace_name = "ml";
  request.object = deployment(1, paired());
  const HandledReview handled =
      handle_admission(request, strict(), {Mode::kValidate, FailureMode::kClosed});
  EXPECT_FALSE(handled.response.allowed);
}

TEST_F(HandlerUpdateTest, ScalingAWorkloadThatAlreadyViolatesIsAllowedWithAWarning) {
  const HandledReview handled = update(deployment(3, paired()), deployment(1, paired()));
  EXPECT_TRUE(handled.response.allowed) << handled.response.status.message;
  EXPECT_EQ(handled.outcome.decision, Decision::kAllow);
  ASSERT_EQ(handled.response.warnings.size(), 1U);
  EXPECT_NE(handled.response.warnings[0].find("existing violation"), std::string::npos)
      << handled.response.warnings[0];
  EXPECT_TRUE(has_rule(handled.outcome, policy::RuleId::kDevicePluginPairing));
}

TEST_F(HandlerUpdateTest, AViolationTheUpdateBringsIsDenied) {
  const HandledReview handled =
      update(deployment(1, paired()), deployment(1, Json{{"nvidia.com/gpu", 1}}));
  EXPECT_FALSE(handled.response.allowed);
  EXPECT_EQ(handled.outcome.decision, Decision::kDeny);
}

TEST_F(HandlerUpdateTest, MetadataOnlyChangeIsNeverJudged) {
  Json old_object = deployment(1, paired());
  old_object["metadata"]["finalizers"] = Json::array({"example.com/keep"});
  old_object["status"] = Json{{"replicas", 1}};
  const HandledReview handled = update(deployment(1, paired()), old_object);
  EXPECT_TRUE(handled.response.allowed);
  EXPECT_EQ(handled.outcome.decision, Decision::kSkip);
}

// Removing the last finalizer of an object being deleted: allowed whatever its spec says (and
// whatever the old object was, even one that cannot be read).
TEST_F(HandlerUpdateTest, FinalizerRemovalDuringDeletionIsNeverJudged) {
  Json object = deployment(1, paired());
  object["metadata"]["deletionTimestamp"] = "2026-12-04T10:00:00Z";
  const HandledReview handled = update(object, Json(nullptr));
  EXPECT_TRUE(handled.response.allowed);
  EXPECT_EQ(handled.outcome.decision, Decision::kSkip);
}

// Without an old object to compare with, an UPDATE is judged like a CREATE.
TEST_F(HandlerUpdateTest, UpdateWithoutOldObjectIsJudgedInFull) {
  const HandledReview handled = update(deployment(1, paired()), Json(nullptr));
  EXPECT_FALSE(handled.response.allowed);
}

// A first try with a small CEL budget decides what it can read within it exactly as the full
// budget does, and says so when it cannot (answering with the failure mode meanwhile).
TEST(HandlerFirstTryTest, SmallBudgetDecidesOrAsksForTheFullOne) {
  const auto with_selector = [](const std::string& expression) {
    Json object = Json::parse(kUnaligned);
    object["spec"]["spec"]["devices"]["requests"][0]["exactly"]["selectors"] =
        Json::array({{{"cel", {{"expression", expression}}}}});
    return make_request(object.dump());
  };
  std::string range;
  for (int i = 0; i < 90; ++i) {
    range += (i == 0 ? "" : ",") + std::to_string(i);
  }
  const AdmissionRequest cheap = with_selector(R"(device.driver == "gpu.nvidia.com")");
  const AdmissionRequest costly =
      with_selector("[[" + range + "]].all(l, l.all(a, l.all(b, l.all(c, true))))");
  for (const Mode mode : {Mode::kValidate, Mode::kMutate}) {
    const HandledReview full = handle_admission(cheap, builtin(), {mode, FailureMode::kClosed});
    const HandledReview first =
        handle_admission(cheap, builtin(), {mode, FailureMode::kClosed, 50'000});
    EXPECT_FALSE(first.outcome.needs_full_budget);
    EXPECT_EQ(first.response.allowed, full.response.allowed);
    EXPECT_EQ(first.response.patch, full.response.patch);
    EXPECT_EQ(first.outcome.decision, full.outcome.decision);

    AdmissionRequest handed_over = costly;
    const HandledReview undecided = handle_admission(
        std::move(handed_over), builtin(), {mode, FailureMode::kClosed, 50'000});
    EXPECT_TRUE(undecided.outcome.needs_full_budget);
    EXPECT_FALSE(undecided.response.allowed);  // the failure mode's answer, never a silent allow
    EXPECT_EQ(undecided.outcome.decision, Decision::kErrorDeny);
    const HandledReview decided =
        handle_admission(costly, builtin(), {mode, FailureMode::kClosed});
    EXPECT_FALSE(decided.outcome.needs_full_budget);
    EXPECT_NE(decided.outcome.decision, Decision::kErrorDeny) << decided.response.status.message;
  }
}

}  // namespace
}  // namespace topoguard::admission
