// The webhook over real TLS on 127.0.0.1 with certificates made at test time: round trips for
// every rule, 400/413, health and metrics, certificate rotation and policy reload under
// traffic, mTLS, a curl call the way the API server makes it, and 64 keep-alive connections.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "note_name.h"
#include "webhook_server_fixture.h"

namespace topoguard::server {
namespace {

using topoguard::testing::review_body;
using topoguard::testing::write_file;

struct RuleCase {
  std::string_view note;
  Json object;
  std::string rule;
  bool denied_on_validate;  // deny action; otherwise a warning is expected
  bool fixable;             // mutate returns a patch that makes /validate allow
};

std::vector<RuleCase> rule_cases() {
  const Json gpu_nic = Json::array({request("gpu", "gpu.nvidia.com"), request("nic", "dranet.net")});
  Json v1beta1 = rct("v1beta1", Json::array({{{"name", "gpu"}, {"deviceClassName", "gpu.nvidia.com"}},
                                             {{"name", "efa"},
                                              {"deviceClassName", "efa.networking.k8s.aws"}}}));
  v1beta1["apiVersion"] = "resource.k8s.io/v1beta1";
  const Json pod = {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", {{"name", "plugin-pod"}}},
      {"spec",
       {{"containers",
         Json::array({{{"name", "c"},
                       {"image", "vllm"},
                       {"resources",
                        {{"limits", {{"nvidia.com/gpu", 1}, {"rdma/hca_shared_devices_a", 1}}}}}}})}}}};
  return {
      {"MissingPcieAlignment", rct("unaligned", gpu_nic), "missing-pcie-alignment", true, true},
      {"MissingPcieAlignmentV1beta1", v1beta1, "missing-pcie-alignment", true, true},
      {"NumaOnlyAlignment",
       rct("numa", gpu_nic,
           Json::array({{{"requests", {"gpu", "nic"}}, {"matchAttribute", "dra.net/numaNode"}}})),
       "numa-only-alignment", true, true},
      {"MultiDeviceAlignment",
       rct("two-by-two",
           Json::array({request("gpu", "gpu.nvidia.com", 2), request("nic", "dranet.net", 2)}),
           Json::array({{{"requests", {"gpu", "nic"}},
                         {"matchAttribute", "resource.kubernetes.io/pcieRoot"}}})),
       "multi-device-alignment", false, false},
      {"DevicePluginPairing", pod, "device-plugin-pairing", false, false},
  };
}

// Every rule the admission path can see (the webhook has no inventory of other objects, so
// split-claims and unresolved-claim need `topoguard audit`): /validate denies or warns, and on
// /mutate a fixable finding gets a patch that, applied with nlohmann's RFC 6902 patch(),
// re-reviews clean.
TEST_F(WebhookServerTest, RoundTripForEveryRule) {
  start();
  int uid = 0;
  for (const RuleCase& c : rule_cases()) {
    SCOPED_TRACE(std::string(c.note));
    const std::string id = "uid-" + std::to_string(++uid);
    const Json validated = review("/validate", review_body(c.object, id));
    EXPECT_EQ(validated.value("uid", ""), id);
    EXPECT_FALSE(validated.contains("patch"));
    const std::string findings = validated["auditAnnotations"].value("findings", "");
    EXPECT_NE(findings.find(c.rule), std::string::npos) << validated.dump();
    if (c.denied_on_validate) {
      EXPECT_EQ(validated.value("allowed", true), false);
      EXPECT_EQ(validated["status"].value("code", 0), 403);
      EXPECT_NE(validated["status"].value("message", "").find(c.rule), std::string::npos);
    } else {
      EXPECT_EQ(validated.value("allowed", false), true);
      ASSERT_TRUE(validated.contains("warnings")) << validated.dump();
      EXPECT_NE(validated["warnings"][0].get<std::string>().find(c.rule), std::string::npos);
    }

    const Json mutated = review("/mutate", review_body(c.object, id + "-m"));
    EXPECT_EQ(mutated.value("uid", ""), id + "-m");
    if (!c.fixable) {
      EXPECT_FALSE(mutated.contains("patch"));
      continue;
    }
    EXPECT_EQ(mutated.value("allowed", false), true) << mutated.dump();
    ASSERT_EQ(mutated.value("patchType", ""), "JSONPatch");
    const Json patch = Json::parse(topoguard::testing::base64_decode(mutated["patch"]));
    const Json patched = c.object.patch(patch);
    const Json again = review("/validate", review_body(patched, id + "-again"));
    EXPECT_EQ(again.value("allowed", false), true) << again.dump();
    EXPECT_EQ(again["auditAnnotations"].value("findings", "").find(c.rule), std::string::npos);
  }
}

// A template's UPDATE is never judged (its spec is immutable) nor patched; DELETE and unhandled
// kinds are allowed untouched.
TEST_F(WebhookServerTest, OperationsAndKinds) {
  start();
  const Json unaligned =
      rct("u", Json::array({request("gpu", "gpu.nvidia.com"), request("nic", "dranet.net")}));
  const Json update = review("/mutate", review_body(unaligned, "up", "UPDATE"));
  EXPECT_FALSE(update.contains("patch"));
  EXPECT_EQ(update.value("allowed", false), true);
  const Json configmap = {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "c"}}}};
  const Json skipped = review("/mutate", review_body(configmap, "cm"));
  EXPECT_EQ(skipped.value("allowed", false), true);
  EXPECT_FALSE(skipped.contains("patch"));
}

struct BadCase {
  std::string_view note;
  std::string path;
  std::string body;
  int status;
};

class BadRequestTest : public WebhookServerTest,
                       public ::testing::WithParamInterface<BadCase> {};

// Malformed reviews get 400, oversized bodies 413, unknown routes 404: always a JSON body.
TEST_P(BadRequestTest, AnswersWithJsonError) {
  options_.body_limit = 64 * 1024;
  start();
  const BadCase& c = GetParam();
  auto result = client()->Post(c.path.c_str(), c.body, "application/json");
  ASSERT_TRUE(result) << httplib::to_string(result.error());
  EXPECT_EQ(result->status, c.status) << result->body;
  const Json body = Json::parse(result->body, nullptr, false);
  ASSERT_TRUE(body.is_object()) << result->body;
  EXPECT_EQ(body.value("code", 0), c.status);
  EXPECT_FALSE(body.value("error", "").empty()) << result->body;
  EXPECT_TRUE(body.contains("message")) << result->body;
  // The server is still healthy afterwards.
  auto health = client()->Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
}

INSTANTIATE_TEST_SUITE_P(
    Bodies, BadRequestTest,
    ::testing::Values(
        BadCase{"NotJson", "/validate", "{nope", 400},
        BadCase{"WrongApiVersion", "/mutate",
                R"({"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview",
                    "request":{"uid":"u","operation":"CREATE"}})",
                400},
        BadCase{"MissingUid", "/validate",
                R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",
                    "request":{"operation":"CREATE"}})",
                400},
        BadCase{"MissingRequest", "/validate",
                R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"})", 400},
        BadCase{"TooLarge", "/validate", std::string(100 * 1024, ' '), 413},
        BadCase{"UnknownRoute", "/admit", "{}", 404}),
    topoguard::testing::NoteName());

// A ?timeout= that has passed when the decision is ready is answered per failure mode.
TEST_F(WebhookServerTest, ExpiredTimeoutFollowsFailureMode) {
  start();
  const Json aligned = rct("a", Json::array({request("gpu", "gpu.nvidia.com"),
                                             request("nic", "dranet.net")}),
                           Json::array({{{"requests", {"gpu", "nic"}},
                                         {"matchAttribute", "resource.kubernetes.io/pcieRoot"}}}));
  const Json expired = review("/validate?timeout=0s", review_body(aligned, "t0"));
  EXPECT_EQ(expired.value("allowed", true), false);
  EXPECT_EQ(expired["status"].value("code", 0), 500);
  const Json in_time = review("/validate?timeout=10s", review_body(aligned, "t10"));
  EXPECT_EQ(in_time.value("allowed", false), true);
}

// Health on both ports; metrics in Prometheus text with the request just made.
TEST_F(WebhookServerTest, HealthReadinessAndMetrics) {
  start();
  EXPECT_TRUE(server_->ready());
  for (const char* route : {"/healthz", "/readyz"}) {
    auto tls = client()->Get(route);
    ASSERT_TRUE(tls);
    EXPECT_EQ(tls->status, 200);
    httplib::Client plain("127.0.0.1", server_->metrics_port());
    auto result = plain.Get(route);
    ASSERT_TRUE(result);
    EXPECT_EQ(result->status, 200);
  }
  const Json unaligned =
      rct("u", Json::array({request("gpu", "gpu.nvidia.com"), request("nic", "dranet.net")}));
  review("/validate", review_body(unaligned, "m1"));
  const std::string text = metrics_text();
  EXPECT_NE(text.find("topoguard_admission_requests_total{endpoint=\"validate\",kind=\""
                      "ResourceClaimTemplate\",operation=\"CREATE\",decision=\"deny\"} 1"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("topoguard_findings_total{rule=\"missing-pcie-alignment\",action=\"deny\"} 1"),
            std::string::npos);
  EXPECT_NE(text.find("topoguard_certificate_expiry_timestamp_seconds 1"), std::string::npos);
  EXPECT_NE(text.find("topoguard_build_info{version=\"test\"} 1"), std::string::npos);
}

// An unaligned GPU + NIC template whose GPU request has the CEL selector `expression`.
Json with_selector(const std::string& name, const std::string& expression) {
  Json selector_request = request("gpu", "gpu.nvidia.com");
  selector_request["exactly"]["selectors"] =
      Json::array({{{"cel", {{"expression", expression}}}}});
  return rct(name, Json::array({selector_request, request("nic", "dranet.net")}));
}

// The same with a selector of ~740,000 cost units: more than a first try on the event loop may
// spend, within what the pool may.
Json costly_cel() {
  std::string range;
  for (int i = 0; i < 90; ++i) {
    range += (i == 0 ? "" : ",") + std::to_string(i);
  }
  return with_selector("costly",
                       "[[" + range + "]].all(l, l.all(a, l.all(b, l.all(c, true))))");
}

// A review of at most 16 KiB is decided on the event loop (no hand-over); a larger one always
// goes to the pool. Both give the same verdicts.
TEST_F(WebhookServerTest, SmallReviewsOnTheLoopLargeOnesOnThePool) {
  start();
  const std::string loop_series = "topoguard_admission_decisions_total{thread=\"event_loop\"}";
  const std::string pool_series = "topoguard_admission_decisions_total{thread=\"pool\"}";
  Json unaligned =
      rct("u", Json::array({request("gpu", "gpu.nvidia.com"), request("nic", "dranet.net")}));
  constexpr int kReviews = 20;
  for (int i = 0; i < kReviews; ++i) {
    const Json response = review("/validate", review_body(unaligned, "small-" + std::to_string(i)));
    EXPECT_EQ(response.value("allowed", true), false);
  }
  std::string text = metrics_text();
  EXPECT_EQ(metric_value(text, loop_series), kReviews) << text;
  EXPECT_EQ(metric_value(text, pool_series), 0) << text;

  unaligned["metadata"]["annotations"] = {{"example.com/padding", std::string(20 * 1024, 'x')}};
  const Json large = review("/validate", review_body(unaligned, "large"));
  EXPECT_EQ(large.value("allowed", true), false);
  EXPECT_EQ(large.value("uid", ""), "large");
  text = metrics_text();
  EXPECT_EQ(metric_value(text, pool_series), 1) << text;
  EXPECT_EQ(metric_value(text, loop_series), kReviews) << text;

  // A small review with a CEL selector is tried on the loop with a small CEL budget: a cheap
  // selector is decided there, a costly one (its cost is not bounded by its size) on the pool,
  // with the same verdict as a cheap one.
  const Json cheap_cel = with_selector("cheap", "device.driver == 'gpu.nvidia.com'");
  const Json cheap = review("/validate", review_body(cheap_cel, "cheap"));
  EXPECT_EQ(cheap.value("uid", ""), "cheap");
  EXPECT_EQ(cheap.value("allowed", true), false);
  text = metrics_text();
  EXPECT_EQ(metric_value(text, pool_series), 1) << text;
  EXPECT_EQ(metric_value(text, loop_series), kReviews + 1) << text;

  const Json costly = review("/validate", review_body(costly_cel(), "costly"));
  EXPECT_EQ(costly.value("uid", ""), "costly");
  EXPECT_EQ(costly.value("allowed", true), false);
  EXPECT_EQ(costly["status"].value("message", ""), cheap["status"].value("message", ""));
  text = metrics_text();
  EXPECT_EQ(metric_value(text, pool_series), 2) << text;
  EXPECT_EQ(metric_value(text, loop_series), kReviews + 1) << text;
  // Each review counted once, the loop's unfinished try not at all.
  EXPECT_EQ(metric_value(text, "topoguard_admission_requests_total{endpoint=\"validate\",kind=\""
                               "ResourceClaimTemplate\",operation=\"CREATE\",decision=\"deny\"}"),
            kReviews + 3)
      << text;
}

// A pool review whose deadline has passed is answered with the failure mode (or 503, when the
// loop answers before the pool has read the uid), and the metrics count that answer, never the
// decision the client did not get.
TEST_F(WebhookServerTest, PoolReviewPastItsDeadlineIsCountedAsAnswered) {
  start();
  auto answer = client()->Post("/validate?timeout=0s", review_body(costly_cel(), "late"),
                               "application/json");
  ASSERT_TRUE(answer);
  std::string counted = "decision=\"error_deny\"} 1";
  if (answer->status == 200) {
    const Json response = Json::parse(answer->body)["response"];
    EXPECT_EQ(response.value("allowed", true), false);
    EXPECT_EQ(response["status"].value("code", 0), 500);
  } else {
    EXPECT_EQ(answer->status, 503) << answer->body;
    counted = "} 1";
  }
  EXPECT_TRUE(eventually([&] {
    const std::string text = metrics_text();
    return text.find("topoguard_admission_requests_total{endpoint=\"validate\"") !=
               std::string::npos &&
           text.find(counted) != std::string::npos;
  })) << metrics_text();
  const std::string text = metrics_text();
  EXPECT_EQ(text.find("decision=\"deny\""), std::string::npos) << text;
}

// Rotation to a certificate from another CA while requests flow (new handshakes and keep-alive
// connections): no request fails, and afterwards clients that trust only the new CA connect.
TEST_F(WebhookServerTest, CertificateRotationUnderTrafficLosesNothing) {
  const auto new_ca = topoguard::testing::make_ca("rotated CA");
  write_file(path("both-cas.pem"), pki_.ca.cert + new_ca.cert);
  write_file(path("new-ca.pem"), new_ca.cert);
  start();
  const std::string body = review_body(
      rct("u", Json::array({request("gpu", "gpu.nvidia.com"), request("nic", "dranet.net")})),
      "rot");
  std::atomic<bool> stop{false};
  std::atomic<int> ok{0};
  std::atomic<int> failed{0};
  std::vector<std::thread> workers;
  for (int i = 0; i < 4; ++i) {
    workers.emplace_back([&, i] {
      auto keep = client(path("both-cas.pem"));
      keep->set_keep_alive(true);
      while (!stop) {
        // Odd workers reconnect for every request, so handshakes happen during the swap.
        auto fresh = client(path("both-cas.pem"));
        auto result = (i % 2 == 0 ? keep : fresh)->Post("/mutate", body, "application/json");
        (result && result->status == 200 ? ok : failed)++;
      }
    });
  }
  // Certificate reloads with that result so far, from /metrics.
  const auto reloads = [&](const std::string& result) {
    const std::string text = metrics_text();
    const std::string key = "topoguard_certificate_reloads_total{result=\"" + result + "\"} ";
    const std::size_t at = text.find(key);
    return at == std::string::npos ? -1 : std::stoi(text.substr(at + key.size()));
  };
  // Some more requests have been answered (with the certificate served now).
  const auto requests_flow = [&] {
    const int before = ok;
    return eventually([&] { return ok >= before + 5; });
  };
  for (int round = 0; round < 3; ++round) {
    EXPECT_TRUE(requests_flow());
    const int failed_before = reloads("failed");
    const int reloaded_before = reloads("ok");
    const auto leaf = topoguard::testing::make_leaf(
        new_ca, "topoguard.topoguard.svc", {"DNS:localhost", "IP:127.0.0.1"}, false, 100 + round);
    // Key first, then certificate: the reloader sees a mismatched pair in between, refuses
    // it and keeps serving the old one.
    write_file(path("tls.key"), leaf.key);
    EXPECT_TRUE(eventually([&] { return reloads("failed") > failed_before; }));
    write_file(path("tls.crt"), leaf.cert);
    EXPECT_TRUE(eventually([&] { return reloads("ok") > reloaded_before; }));
  }
  EXPECT_TRUE(requests_flow());
  stop = true;
  for (auto& worker : workers) {
    worker.join();
  }
  EXPECT_EQ(failed.load(), 0);
  EXPECT_GT(ok.load(), 20);
  auto only_new = client(path("new-ca.pem"))->Get("/healthz");
  ASSERT_TRUE(only_new) << httplib::to_string(only_new.error());
  EXPECT_EQ(only_new->status, 200);
  EXPECT_FALSE(client(path("ca.pem"))->Get("/healthz"));
  EXPECT_GE(metric_value(metrics_text(), "topoguard_certificate_reloads_total{result=\"ok\"}"),
            1);
}

// A good policy change is applied without a restart; a broken one is counted and ignored.
TEST_F(WebhookServerTest, PolicyReloadGoodAndBad) {
  start();
  const std::string body = review_body(
      rct("u", Json::array({request("gpu", "gpu.nvidia.com"), request("nic", "dranet.net")})),
      "pol");
  EXPECT_EQ(review("/validate", body).value("allowed", true), false);

  std::string relaxed(policy::builtin_policy_text());
  const std::string deny = "missing-pcie-alignment: {action: deny, mutate: true}";
  ASSERT_NE(relaxed.find(deny), std::string::npos);
  relaxed.replace(relaxed.find(deny), deny.size(),
                  "missing-pcie-alignment: {action: warn, mutate: true}");
  write_file(path("policies/default.yaml"), relaxed);
  ASSERT_TRUE(eventually([&] { return review("/validate", body).value("allowed", false); }));

  write_file(path("policies/default.yaml"), "apiVersion: topoguard.dev/v1alpha1\nkind: [broken");
  ASSERT_TRUE(eventually([&] {
    return metric_value(metrics_text(), "topoguard_policy_reloads_total{result=\"failed\"}") >= 1;
  }));
  EXPECT_EQ(review("/validate", body).value("allowed", false), true);
  EXPECT_GE(metric_value(metrics_text(), "topoguard_policy_reloads_total{result=\"ok\"}"), 1);
  EXPECT_TRUE(server_->ready());
}

// With --client-ca, a client certificate from that CA is accepted and no certificate is refused.
TEST_F(WebhookServerTest, MutualTlsAcceptsAndRefuses) {
  options_.client_ca = path("ca.pem");
  start();
  httplib::SSLClient with_cert("127.0.0.1", server_->port(), path("client.crt"),
                               path("client.key"));
  with_cert.set_ca_cert_path(path("ca.pem"));
  with_cert.enable_server_certificate_verification(true);
  auto accepted = with_cert.Get("/healthz");
  ASSERT_TRUE(accepted) << httplib::to_string(accepted.error());
  EXPECT_EQ(accepted->status, 200);

  auto refused = client()->Get("/healthz");
  EXPECT_FALSE(refused);

  const auto stranger_ca = topoguard::testing::make_ca("stranger");
  const auto stranger = topoguard::testing::make_leaf(stranger_ca, "x", {}, true, 9);
  write_file(path("stranger.crt"), stranger.cert);
  write_file(path("stranger.key"), stranger.key);
  httplib::SSLClient wrong("127.0.0.1", server_->port(), path("stranger.crt"),
                           path("stranger.key"));
  wrong.set_ca_cert_path(path("ca.pem"));
  EXPECT_FALSE(wrong.Get("/healthz"));
}

// The API server's call: HTTPS to the service DNS name (SNI + name check) with the CA bundle.
TEST_F(WebhookServerTest, CurlWithServiceNameAndCaBundle) {
  start();
  write_file(path("review.json"),
             review_body(rct("u", Json::array({request("gpu", "gpu.nvidia.com"),
                                               request("nic", "dranet.net")})),
                         "curl-uid"));
  const std::string port = std::to_string(server_->port());
  const std::string command =
      "curl -sS --fail --http1.1 --tlsv1.2 --cacert " + path("ca.pem") +
      " --resolve topoguard.topoguard.svc:" + port + ":127.0.0.1" +
      " -H 'Content-Type: application/json' --data-binary @" + path("review.json") +
      " https://topoguard.topoguard.svc:" + port + "/validate?timeout=10s";
  const auto [exit_code, output] = topoguard::testing::run_command(command);
  EXPECT_EQ(exit_code, 0) << output;
  const Json response = Json::parse(output, nullptr, false);
  ASSERT_TRUE(response.is_object()) << output;
  EXPECT_EQ(response["response"].value("uid", ""), "curl-uid");
  EXPECT_EQ(response["response"].value("allowed", true), false);
}

// 64 keep-alive connections open at the same time are all served, with no error.
TEST_F(WebhookServerTest, SixtyFourKeepAliveConnections) {
  start();
  EXPECT_EQ(failed_keep_alive_requests(64, 10), 0);
}

}  // namespace
}  // namespace topoguard::server
