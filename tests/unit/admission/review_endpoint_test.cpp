#include "topoguard/admission/review_endpoint.h"

#include <memory>
#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "note_name.h"
#include "topoguard/cluster/cluster_state.h"
#include "topoguard/policy/policy_loader.h"

namespace topoguard::admission {
namespace {

constexpr std::string_view kReview = R"({
  "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
  "request": {"uid": "u-7", "kind": {"group": "resource.k8s.io", "version": "v1",
              "kind": "ResourceClaimTemplate"},
    "operation": "CREATE", "namespace": "ml", "name": "gpu-nic",
    "object": {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
      "metadata": {"name": "gpu-nic"},
      "spec": {"spec": {"devices": {"requests": [
        {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}},
        {"name": "nic", "exactly": {"deviceClassName": "dranet.net"}}]}}}}}})";

PolicySource builtin_source() {
  Result<policy::PolicySet> loaded = policy::load_builtin_policies();
  EXPECT_TRUE(loaded.has_value());
  auto set = std::make_shared<const policy::PolicySet>(loaded ? std::move(*loaded)
                                                              : policy::PolicySet());
  return [set] { return set; };
}

// A well-formed request gets 200 and an AdmissionReview echoing the uid, plus the summary
// that logs and metrics use.
TEST(ReviewEndpointTest, AnswersWithAdmissionReview) {
  const ReviewEndpoint endpoint =
      make_review_endpoint(builtin_source(), {Mode::kMutate, FailureMode::kClosed});
  const ReviewReply reply = endpoint({kReview, {}});
  ASSERT_EQ(reply.http_status, 200) << reply.http_error;
  const Json body = Json::parse(reply.body);
  EXPECT_EQ(body["apiVersion"], "admission.k8s.io/v1");
  EXPECT_EQ(body["response"]["uid"], "u-7");
  EXPECT_EQ(body["response"]["patchType"], "JSONPatch");
  EXPECT_EQ(reply.request.kind, "ResourceClaimTemplate");
  EXPECT_EQ(reply.request.namespace_name, "ml");
  EXPECT_EQ(reply.request.operation, "CREATE");
  EXPECT_EQ(reply.outcome.decision, Decision::kPatch);
}

// With a cluster inventory, a Pod is judged with the template it names; when the source has
// none to give (cache stale or not synced), the Pod is judged alone and the audit annotation says
// the cluster was unknown.
TEST(ReviewEndpointTest, JudgesWithTheClusterInventoryWhenThereIsOne) {
  const Json claim_template = Json::parse(R"({
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
    "metadata": {"name": "pair", "namespace": "ml"},
    "spec": {"spec": {"devices": {"requests": [
      {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}},
      {"name": "nic", "exactly": {"deviceClassName": "dranet.net"}}]}}}})");
  auto inventory = std::make_shared<engine::Inventory>();
  inventory->add(claim_template);  // points into claim_template, which outlives it
  std::shared_ptr<const engine::Inventory> current(inventory);
  bool stale = false;
  const ReviewEndpoint endpoint = make_review_endpoint(
      builtin_source(), {Mode::kValidate, FailureMode::kClosed},
      [&]() -> std::shared_ptr<const engine::Inventory> { return stale ? nullptr : current; });
  const std::string pod_review = R"({
    "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
    "request": {"uid": "u-8", "kind": {"group": "", "version": "v1", "kind": "Pod"},
      "operation": "CREATE", "namespace": "ml", "name": "worker",
      "object": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "worker", "namespace": "ml"},
        "spec": {"resourceClaims": [{"name": "pair", "resourceClaimTemplateName": "pair"}],
          "containers": [{"name": "main", "image": "busybox",
                          "resources": {"claims": [{"name": "pair"}]}}]}}}})";
  const ReviewReply judged = endpoint({pod_review, {}});
  ASSERT_EQ(judged.http_status, 200) << judged.http_error;
  EXPECT_NE(judged.body.find("missing-pcie-alignment"), std::string::npos) << judged.body;
  EXPECT_EQ(judged.body.find("\"cluster\""), std::string::npos) << judged.body;

  stale = true;
  const ReviewReply alone = endpoint({pod_review, {}});
  ASSERT_EQ(alone.http_status, 200) << alone.http_error;
  EXPECT_EQ(alone.body.find("missing-pcie-alignment"), std::string::npos) << alone.body;
  const Json response = Json::parse(alone.body)["response"];
  EXPECT_TRUE(response["allowed"].get<bool>());
  EXPECT_NE(response["auditAnnotations"].value("cluster", "").find("unknown"), std::string::npos)
      << alone.body;
}

// A node whose GPU and NIC sit on different PCIe roots, with their DeviceClasses: an aligned
// GPU + NIC claim is unsatisfiable there.
const char* root_of(const std::string& driver) {
  return driver == "dra.net" ? "pci0000:80" : "pci0000:00";
}

const cluster::ClusterState& split_roots_state() {
  static const cluster::ClusterState state = [] {
    cluster::ClusterStateBuilder builder;
    for (const auto& [name, driver] : {std::pair{"gpu.nvidia.com", "gpu.nvidia.com"},
                                       std::pair{"dranet.net", "dra.net"}}) {
      EXPECT_TRUE(builder.add(Json{
          {"apiVersion", "resource.k8s.io/v1"},
          {"kind", "DeviceClass"},
          {"metadata", {{"name", name}}},
          {"spec",
           {{"selectors", Json::array({{{"cel", {{"expression", std::string("device.driver == \"") +
                                                                   driver + "\""}}}}})}}}}));
      EXPECT_TRUE(builder.add(Json{
          {"apiVersion", "resource.k8s.io/v1"},
          {"kind", "ResourceSlice"},
          {"metadata", {{"name", std::string("n1-") + driver}}},
          {"spec",
           {{"driver", driver},
            {"nodeName", "n1"},
            {"pool", {{"name", "n1"}, {"generation", 1}, {"resourceSliceCount", 1}}},
            {"devices",
             Json::array({{{"name", "d0"},
                           {"attributes",
                            {{"resource.kubernetes.io/pcieRoot",
                              {{"string", root_of(driver)}}}}}}})}}}}));
    }
    return std::move(builder).finish();
  }();
  return state;
}

// With a feasibility lane, a requester with no share left gets its verdict all the same, its
// feasibility unknown (no warning, said in the audit annotations and the outcome) unless the
// same claim was checked before against the same cluster state; another requester's review is
// checked in full.
TEST(ReviewEndpointTest, FeasibilityLaneSharesPerRequester) {
  auto inventory = std::make_shared<engine::Inventory>();
  inventory->set_cluster_state(&split_roots_state());
  std::shared_ptr<const engine::Inventory> current(inventory);
  auto lane = std::make_shared<FeasibilityLane>(FeasibilityLaneOptions{});
  const ReviewEndpoint endpoint = make_review_endpoint(
      builtin_source(), {Mode::kValidate, FailureMode::kClosed}, [&] { return current; }, lane);
  const auto review_by = [](const std::string& username, const std::string& name = "pair") {
    return R"({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
      "request": {"uid": "u-9", "kind": {"group": "resource.k8s.io", "version": "v1",
                  "kind": "ResourceClaimTemplate"},
        "operation": "CREATE", "namespace": "ml", "name": ")" + name + R"(",
        "userInfo": {"username": ")" + username + R"(", "groups": ["system:authenticated"]},
        "object": {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
          "metadata": {"name": ")" + name + R"(", "namespace": "ml"},
          "spec": {"spec": {"devices": {"requests": [
            {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}},
            {"name": "nic", "exactly": {"deviceClassName": "dranet.net"}}],
            "constraints": [{"requests": ["gpu", "nic"],
                             "matchAttribute": "resource.kubernetes.io/pcieRoot"}]}}}}}})";
  };
  const ReviewReply checked = endpoint({review_by("bob"), {}});
  ASSERT_EQ(checked.http_status, 200) << checked.http_error;
  EXPECT_EQ(checked.outcome.decision, Decision::kAllow);
  EXPECT_NE(checked.body.find("unsatisfiable-alignment"), std::string::npos) << checked.body;
  EXPECT_GT(checked.outcome.feasibility_steps, 0u);
  EXPECT_FALSE(checked.outcome.feasibility_budget_exhausted);

  // Alice has a review in the lane already: this one gets no share.
  const FeasibilityLane::Ticket held =
      lane->enter(requester_key("alice", "ml"), FeasibilityLane::Clock::now());
  ASSERT_GT(held.steps(), 0u);
  const ReviewReply unchecked = endpoint({review_by("alice", "other-pair"), {}});
  ASSERT_EQ(unchecked.http_status, 200) << unchecked.http_error;
  EXPECT_EQ(unchecked.outcome.decision, Decision::kAllow);
  EXPECT_EQ(unchecked.body.find("unsatisfiable-alignment"), std::string::npos) << unchecked.body;
  EXPECT_TRUE(unchecked.outcome.feasibility_budget_exhausted);
  EXPECT_TRUE(unchecked.outcome.feasibility_no_share);
  const Json response = Json::parse(unchecked.body)["response"];
  EXPECT_NE(response["auditAnnotations"].value("feasibility", "").find("unknown"),
            std::string::npos)
      << unchecked.body;

  // Bob's claim again, from Alice without a share: checked before, it costs no step.
  const ReviewReply repeated = endpoint({review_by("alice"), {}});
  ASSERT_EQ(repeated.http_status, 200) << repeated.http_error;
  EXPECT_NE(repeated.body.find("unsatisfiable-alignment"), std::string::npos) << repeated.body;
  EXPECT_EQ(repeated.outcome.feasibility_steps, 0u);
  EXPECT_FALSE(repeated.outcome.feasibility_budget_exhausted);
}

// A policy set in which gpu.nvidia.com is not a GPU class (and no driver names it).
policy::PolicySetPtr set_without_nvidia_class() {
  policy::PolicyStreamOutcome parsed = policy::parse_policy_stream(R"(
apiVersion: topoguard.dev/v1alpha1
kind: AlignmentPolicy
metadata: {name: amd-only}
spec:
  devices:
    gpu: {deviceClassNames: ['gpu\.amd\.com'], drivers: ['gpu\.amd\.com'], extendedResources: []}
)",
                                                                   "amd-only.yaml");
  EXPECT_TRUE(parsed.errors.empty()) << parsed.errors.front().to_string();
  return std::make_shared<const policy::PolicySet>(std::move(parsed.policies));
}

// The endpoint keeps what it works out about device classes from review to review (per thread
// and policy set): a new policy set is judged by its own rules at once, also when the sets
// alternate from one review to the next on one thread.
TEST(ReviewEndpointTest, FollowsThePolicySetOfEachReview) {
  const policy::PolicySetPtr builtin = builtin_source()();
  const policy::PolicySetPtr amd_only = set_without_nvidia_class();
  policy::PolicySetPtr current = builtin;
  const ReviewEndpoint endpoint = make_review_endpoint(
      [&current] { return current; }, {Mode::kMutate, FailureMode::kClosed});
  for (int round = 0; round < 3; ++round) {
    current = builtin;
    EXPECT_EQ(endpoint({kReview, {}}).outcome.decision, Decision::kPatch) << round;
    current = amd_only;
    EXPECT_EQ(endpoint({kReview, {}}).outcome.decision, Decision::kAllow) << round;
  }
  // A policy set loaded again (a reload with the same text) is a new set, judged the same.
  current = builtin_source()();
  EXPECT_EQ(endpoint({kReview, {}}).outcome.decision, Decision::kPatch);
}

// A malformed body is a 400 with a JSON error body naming the field.
TEST(ReviewEndpointTest, MalformedBodyIs400) {
  const ReviewEndpoint endpoint =
      make_review_endpoint(builtin_source(), {Mode::kValidate, FailureMode::kOpen});
  const ReviewReply reply =
      endpoint({R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"})", {}});
  EXPECT_EQ(reply.http_status, 400);
  const Json body = Json::parse(reply.body);
  EXPECT_EQ(body["code"], 400);
  EXPECT_EQ(body["field"], "/request");
}

// The body limit decorator answers 413 without calling the endpoint it wraps.
TEST(ReviewEndpointTest, BodyLimitIs413) {
  int calls = 0;
  const ReviewEndpoint counting = [&calls](const ReviewCall&) {
    ++calls;
    return ReviewReply{};
  };
  const ReviewEndpoint limited = with_body_limit(16, counting);
  EXPECT_EQ(limited({std::string(17, 'x'), {}}).http_status, 413);
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(limited({std::string(16, 'x'), {}}).http_status, 200);
  EXPECT_EQ(calls, 1);
}

struct EndpointFailureCase {
  std::string_view note;
  bool no_policies;
  bool deadline_passed;
  FailureMode failure_mode;
  bool allowed;
};

class EndpointFailureTest : public ::testing::TestWithParam<EndpointFailureCase> {};

// No policy loaded, or a decision after the request's deadline, is answered per failure mode.
TEST_P(EndpointFailureTest, AnswersPerFailureMode) {
  const EndpointFailureCase& c = GetParam();
  PolicySource source = c.no_policies ? PolicySource([] { return policy::PolicySetPtr(); })
                                      : builtin_source();
  const ReviewEndpoint endpoint =
      make_review_endpoint(std::move(source), {Mode::kValidate, c.failure_mode});
  ReviewCall call{kReview, {}};
  if (c.deadline_passed) {
    call.deadline = std::make_shared<ReviewDeadline>(
        std::chrono::steady_clock::now() - std::chrono::seconds(1), c.failure_mode);
  }
  const ReviewReply reply = endpoint(call);
  ASSERT_EQ(reply.http_status, 200);
  const Json body = Json::parse(reply.body);
  EXPECT_EQ(body["response"]["uid"], "u-7");
  EXPECT_EQ(body["response"]["allowed"], c.allowed);
  EXPECT_FALSE(reply.outcome.error.empty());
}

INSTANTIATE_TEST_SUITE_P(
    Failures, EndpointFailureTest,
    ::testing::Values(
        EndpointFailureCase{"NoPolicyClosed", true, false, FailureMode::kClosed, false},
        EndpointFailureCase{"NoPolicyOpen", true, false, FailureMode::kOpen, true},
        EndpointFailureCase{"DeadlinePassedClosed", false, true, FailureMode::kClosed, false},
        EndpointFailureCase{"DeadlinePassedOpen", false, true, FailureMode::kOpen, true}),
    topoguard::testing::NoteName());

std::shared_ptr<ReviewDeadline> deadline_in(std::chrono::seconds from_now) {
  return std::make_shared<ReviewDeadline>(std::chrono::steady_clock::now() + from_now,
                                          FailureMode::kClosed);
}

// A decision settled in time is the answer; the fallback then has nothing to send.
TEST(ReviewDeadlineTest, DecisionFirstIsTheAnswer) {
  const ReviewEndpoint endpoint =
      make_review_endpoint(builtin_source(), {Mode::kValidate, FailureMode::kClosed});
  const auto deadline = deadline_in(std::chrono::seconds(60));
  const ReviewReply reply = endpoint({kReview, deadline});
  ASSERT_EQ(reply.http_status, 200);
  EXPECT_TRUE(reply.outcome.error.empty());
  EXPECT_FALSE(deadline->fall_back().has_value());
}

// When the fallback answers first, the deciding side skips the decision and returns exactly the
// answer the client got: what metrics and logs record agrees with it.
TEST(ReviewDeadlineTest, FallbackFirstIsWhatTheDecisionReports) {
  const ReviewEndpoint endpoint =
      make_review_endpoint(builtin_source(), {Mode::kValidate, FailureMode::kClosed});
  const auto deadline = deadline_in(std::chrono::seconds(60));
  deadline->read({"u-7", "ResourceClaim", "ml", "c", "CREATE", false});
  const std::optional<ReviewReply> sent = deadline->fall_back();
  ASSERT_TRUE(sent.has_value());
  EXPECT_EQ(sent->http_status, 200);
  EXPECT_EQ(Json::parse(sent->body)["response"]["allowed"], false);
  const ReviewReply recorded = endpoint({kReview, deadline});
  EXPECT_EQ(recorded.http_status, sent->http_status);
  EXPECT_EQ(recorded.body, sent->body);
  EXPECT_EQ(recorded.outcome.error, sent->outcome.error);
  EXPECT_FALSE(recorded.outcome.error.empty());
}

// A fallback before the body was read has no uid to answer for: 503, recorded as such.
TEST(ReviewDeadlineTest, FallbackBeforeReadingIs503) {
  const ReviewEndpoint endpoint =
      make_review_endpoint(builtin_source(), {Mode::kValidate, FailureMode::kOpen});
  const auto deadline = deadline_in(std::chrono::seconds(60));
  const std::optional<ReviewReply> sent = deadline->fall_back();
  ASSERT_TRUE(sent.has_value());
  EXPECT_EQ(sent->http_status, 503);
  EXPECT_EQ(endpoint({kReview, deadline}).http_status, 503);
}

struct TimeoutCase {
  std::string_view note;
  std::string_view text;
  long long milliseconds;  // -1: invalid
};

class TimeoutTest : public ::testing::TestWithParam<TimeoutCase> {};

// The API server's ?timeout= values (Go durations) parse; anything else is ignored.
TEST_P(TimeoutTest, Parses) {
  const auto parsed = parse_timeout(GetParam().text);
  if (GetParam().milliseconds < 0) {
    EXPECT_FALSE(parsed.has_value());
  } else {
    ASSERT_TRUE(parsed.has_value());
    EXPECT_EQ(parsed->count(), GetParam().milliseconds);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Values, TimeoutTest,
    ::testing::Values(TimeoutCase{"Seconds", "10s", 10000}, TimeoutCase{"Millis", "500ms", 500},
                      TimeoutCase{"Compound", "1m30s", 90000},
                      TimeoutCase{"Fraction", "1.5s", 1500}, TimeoutCase{"Empty", "", -1},
                      TimeoutCase{"NoUnit", "10", -1}, TimeoutCase{"BadUnit", "10x", -1},
                      TimeoutCase{"Garbage", "s", -1}),
    topoguard::testing::NoteName());

}  // namespace
}  // namespace topoguard::admission
