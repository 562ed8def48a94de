// Self-managed TLS (selftls::TlsController) against the fake API server: the Secret made once
// and reused across restarts and replicas, both webhook configurations carrying the CA and
// repaired after a re-apply, the served certificate verified by `openssl verify` for the
// Service's name, rotation with a clock moved forward, sampled all along for a moment when
// a caBundle does not trust the certificate served, and the annotated failurePolicy set only
// once the replica serves.
#include "topoguard/selftls/tls_controller.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <thread>

#include "eventually.h"
#include "fake_apiserver.h"
#include "test_clock.h"
#include "topoguard/common/base64.h"
#include "topoguard/kube/objects.h"

namespace topoguard::selftls {
namespace {

using namespace std::chrono_literals;

const kube::ResourceRef kSecrets{"", "v1", "secrets", "topoguard"};
const kube::ResourceRef kValidating{"admissionregistration.k8s.io", "v1",
                                    "validatingwebhookconfigurations", ""};
const kube::ResourceRef kMutating{"admissionregistration.k8s.io", "v1",
                                  "mutatingwebhookconfigurations", ""};
const char* const kServiceName = "topoguard.topoguard.svc";

// The configurations as the manifests apply them: no caBundle.
Json configuration(const char* kind, int webhooks) {
  Json list = Json::array();
  for (int i = 0; i < webhooks; ++i) {
    list.push_back(
        {{"name", "w" + std::to_string(i) + ".topoguard.dev"},
         {"clientConfig",
          {{"service",
            {{"namespace", "topoguard"}, {"name", "topoguard"}, {"path", "/validate"}}}}},
         {"admissionReviewVersions", {"v1"}},
         {"sideEffects", "None"}});
  }
  return {{"apiVersion", "admissionregistration.k8s.io/v1"},
          {"kind", kind},
          {"metadata", {{"name", "topoguard"}}},
          {"webhooks", list}};
}

// One replica: a controller and the certificate it serves.
struct Replica {
  std::unique_ptr<TlsController> controller;
  std::mutex mutex;
  std::string served;  // guarded by mutex

  std::string serving() {
    std::lock_guard lock(mutex);
    return served;
  }
};

class TlsControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fake_.apply("ADDED", configuration("ValidatingWebhookConfiguration", 2));
    fake_.apply("ADDED", configuration("MutatingWebhookConfiguration", 1));
  }

  kube::ApiClientPtr client() {
    Result<kube::ApiClientPtr> made = kube::ApiClient::create(fake_.config());
    EXPECT_TRUE(made.has_value()) << made.error().to_string();
    return *made;
  }

  std::unique_ptr<Replica> replica(const std::string& identity, TlsPolicy policy = {}) {
    auto made = std::make_unique<Replica>();
    TlsControllerOptions options;
    options.identity = identity;
    options.policy = std::move(policy);
    options.retry_period = 1s;
    Replica* raw = made.get();
    made->controller = std::make_unique<TlsController>(client(), options, clock_,
                                                       [raw](const pki::PemPair& serving) {
                                                         std::lock_guard lock(raw->mutex);
                                                         raw->served = serving.cert_pem;
                                                         return true;
                                                       });
    made->controller->start();
    return made;
  }

  Json secret() { return kube::get_object(*api_, kSecrets, "topoguard-tls")->object; }
  std::string secret_data(const char* key) {
    return base64_decode(secret()["data"][key].get<std::string>()).value_or("");
  }
  // Every webhook's caBundle, decoded.
  std::vector<std::string> bundles() {
    std::vector<std::string> found;
    for (const auto& resource : {kValidating, kMutating}) {
      const Json object = kube::get_object(*api_, resource, "topoguard")->object;
      for (const Json& webhook : object["webhooks"]) {
        const Json& config = webhook["clientConfig"];
        found.push_back(
            config.contains("caBundle")
                ? base64_decode(config["caBundle"].get<std::string>()).value_or("")
                : "");
      }
    }
    return found;
  }
  // Empty when every webhook's caBundle trusts `served`, else why not.
  std::string distrust(const std::string& served, std::optional<Time> at = std::nullopt) {
    if (served.empty()) {
      return "nothing served";
    }
    for (const std::string& bundle : bundles()) {
      const Status verified = pki::verify_serving_certificate(served, bundle, kServiceName,
                                                              at.value_or(clock_->wall_now()));
      if (!verified) {
        return verified.error().message;
      }
    }
    return "";
  }
  int writes(const std::string& method, const std::string& path_part) {
    int found = 0;
    for (const Json& request : fake_.requests()) {
      const std::string path = request["path"];
      const int status = request["status"];
      found += request["method"] == method && path.find(path_part) != std::string::npos &&
                       status >= 200 && status < 300
                   ? 1
                   : 0;
    }
    return found;
  }

  testing::FakeApiServer fake_;
  std::shared_ptr<testing::TestClock> clock_ = std::make_shared<testing::TestClock>(true);
  kube::ApiClientPtr api_ = client();
};

// One replica makes the Secret and sets every caBundle; the certificate it serves verifies
// with `openssl verify` for the Service's name against the Secret's CA. A restart (another
// identity) reuses the Secret without writing it.
TEST_F(TlsControllerTest, SecretMadeOnceAndReusedAcrossRestarts) {
  auto first = replica("a");
  ASSERT_TRUE(testing::eventually([&] { return first->controller->ready(); }))
      << first->controller->status().not_ready_reason();
  const std::string ca = secret_data("ca.crt");
  EXPECT_EQ(secret()["type"], "kubernetes.io/tls");
  for (const char* key : {"ca.key", "tls.crt", "tls.key"}) {
    EXPECT_FALSE(secret_data(key).empty()) << key;
  }
  EXPECT_EQ(first->serving(), secret_data("tls.crt"));
  EXPECT_EQ(bundles(), (std::vector<std::string>{ca, ca, ca}));
  const TlsStatus status = first->controller->status();
  EXPECT_TRUE(status.leader);
  EXPECT_EQ(status.secret_writes, 1u);
  EXPECT_EQ(status.bundle_repairs, 3u);

  const auto& dir = fake_.dir();
  std::ofstream(dir.path() + "/ca.pem") << ca;
  std::ofstream(dir.path() + "/served.pem") << first->serving();
  for (const std::string name : {"topoguard.topoguard.svc", "topoguard.topoguard.svc.cluster.local",
                                 "other.topoguard.svc"}) {
    const std::string command = "openssl verify -CAfile " + dir.path() +
                                "/ca.pem -verify_hostname " + name + " -purpose sslserver " +
                                dir.path() + "/served.pem >/dev/null 2>&1";
    EXPECT_EQ(std::system(command.c_str()) == 0, name != "other.topoguard.svc") << name;
  }
  first->controller->stop();

  auto restarted = replica("b");
  ASSERT_TRUE(testing::eventually([&] { return restarted->controller->ready(); }));
  EXPECT_EQ(secret_data("ca.crt"), ca);
  EXPECT_EQ(restarted->serving(), first->serving());
  EXPECT_EQ(restarted->controller->status().secret_writes, 0u);
  EXPECT_EQ(writes("POST", "/secrets"), 1);
  EXPECT_EQ(writes("PUT", "/secrets"), 0);
}

// Three replicas started together: one writer, one Secret, all serving the same certificate.
TEST_F(TlsControllerTest, ReplicasShareOneSecret) {
  std::vector<std::unique_ptr<Replica>> replicas;
  for (const char* identity : {"r0", "r1", "r2"}) {
    replicas.push_back(replica(identity));
  }
  for (auto& one : replicas) {
    ASSERT_TRUE(testing::eventually([&] { return one->controller->ready(); }))
        << one->controller->status().not_ready_reason();
  }
  int leaders = 0;
  for (auto& one : replicas) {
    EXPECT_EQ(one->serving(), secret_data("tls.crt"));
    leaders += one->controller->status().leader ? 1 : 0;
  }
  EXPECT_EQ(leaders, 1);
  EXPECT_EQ(writes("POST", "/secrets"), 1);
}

// Someone re-applies the manifests (no caBundle): the writer restores it within seconds.
TEST_F(TlsControllerTest, ReappliedConfigurationIsRepaired) {
  auto one = replica("a");
  ASSERT_TRUE(testing::eventually([&] { return one->controller->ready(); }));
  const std::uint64_t repairs = one->controller->status().bundle_repairs;
  fake_.apply("MODIFIED", configuration("ValidatingWebhookConfiguration", 2));
  ASSERT_TRUE(testing::eventually(
      [&] { return one->controller->status().bundle_repairs == repairs + 2; }, 5s));
  EXPECT_TRUE(testing::eventually([&] { return distrust(one->serving()).empty(); }, 5s));
  EXPECT_TRUE(one->controller->ready());
}

// Moving from cert-manager: the Secret has the CA certificate but not its key. A new CA signs a
// new certificate, the Secret keeps its type, and the old CA stays trusted for the overlap, so
// replicas still serving the old certificate are not distrusted meanwhile.
TEST_F(TlsControllerTest, TakesOverASecretWithoutCaKey) {
  const Time now = clock_->wall_now();
  const pki::PemPair old_ca = *pki::make_ca("cert-manager-root", {now - 1h, now + 24h * 365});
  const pki::PemPair old_serving = *pki::issue_serving_certificate(
      old_ca, {kServiceName, "topoguard.topoguard.svc.cluster.local"}, {now - 1h, now + 24h * 90});
  const auto encoded = [](const std::string& text) { return base64_encode(text); };
  fake_.apply("ADDED", {{"apiVersion", "v1"},
                        {"kind", "Secret"},
                        {"metadata", {{"name", "topoguard-tls"}, {"namespace", "topoguard"}}},
                        {"type", "Opaque"},
                        {"data",
                         {{"ca.crt", encoded(old_ca.cert_pem)},
                          {"tls.crt", encoded(old_serving.cert_pem)},
                          {"tls.key", encoded(old_serving.key_pem)}}}});
  auto one = replica("a");
  ASSERT_TRUE(testing::eventually([&] { return one->controller->ready(); }))
      << one->controller->status().not_ready_reason();
  EXPECT_EQ(secret()["type"], "Opaque");
  EXPECT_NE(secret_data("ca.crt"), old_ca.cert_pem);
  EXPECT_EQ(secret_data("ca-previous.crt"), old_ca.cert_pem);
  EXPECT_EQ(distrust(old_serving.cert_pem), "");
  EXPECT_EQ(distrust(one->serving()), "");
}

// Lifetimes of days, the clock moved in steps: the serving certificate is renewed at two thirds
// of its life, the CA rotated through the bundles, the old CA retired after its overlap; a
// sampler checking every caBundle against the served certificate never finds one that does
// not trust it.
TEST_F(TlsControllerTest, RotationNeverLeavesAWindowOfDistrust) {
  TlsPolicy policy;
  policy.ca_lifetime = 24h * 30;
  policy.cert_lifetime = 24h * 3;
  policy.previous_overlap = 2h;
  auto one = replica("a", policy);
  ASSERT_TRUE(testing::eventually([&] { return one->controller->ready(); }));
  const std::string first_ca = secret_data("ca.crt");

  std::atomic<bool> stop{false};
  std::atomic<int> samples{0};
  std::atomic<int> distrusted{0};
  std::atomic<int> steps{0};
  std::shared_mutex clock_moves;
  const auto advance = [&](std::chrono::nanoseconds by) {
    std::unique_lock moving(clock_moves);
    clock_->advance(by);
    ++steps;
  };
  std::string first_distrust;
  std::thread sampler([&] {
    while (!stop) {
      // One sample sees one instant: the clock does not move during it.
      std::shared_lock instant(clock_moves);
      const Time now = clock_->wall_now();
      if (const std::string why = distrust(one->serving(), now); !why.empty()) {
        if (distrusted++ == 0) {
          first_distrust = why + " (step " + std::to_string(steps.load()) + ")";
        }
      }
      ++samples;
    }
  });
  std::vector<std::string> served_certificates{one->serving()};
  // Ten steps of 49 h: each passes two thirds of a serving certificate's life; the CA's two
  // thirds (480 h) fall in the tenth.
  for (int step = 0; step < 10; ++step) {
    advance(49h);
    one->controller->poke();
    ASSERT_TRUE(testing::eventually([&] {
      return one->serving() != served_certificates.back() && one->controller->ready();
    })) << step
        << ": " << one->controller->status().not_ready_reason();
    served_certificates.push_back(one->serving());
  }
  ASSERT_TRUE(testing::eventually([&] { return one->controller->status().ca_rotations == 1; }));
  EXPECT_NE(secret_data("ca.crt"), first_ca);
  EXPECT_EQ(secret_data("ca-previous.crt"), first_ca);
  // After the overlap the first CA leaves every bundle.
  advance(2h + 1min);
  one->controller->poke();
  ASSERT_TRUE(testing::eventually([&] {
    for (const std::string& bundle : bundles()) {
      if (bundle.find(first_ca) != std::string::npos) {
        return false;
      }
    }
    return one->controller->ready();
  }));
  stop = true;
  sampler.join();
  EXPECT_GT(samples.load(), 10);
  EXPECT_EQ(distrusted.load(), 0) << first_distrust;
  EXPECT_EQ(one->controller->status().errors, 0u) << one->controller->status().last_error;
}

// The manifests register the webhook that is to fail closed with Ignore and annotate the policy
// it is to have: it becomes Fail only once its caBundle trusts the certificate served (sampled
// all along), the other webhook is left alone, a re-applied Ignore is set back, and an
// annotation that does not parse changes nothing and is reported once.
TEST_F(TlsControllerTest, AnnotatedFailurePolicySetOnceServing) {
  Json validating = configuration("ValidatingWebhookConfiguration", 2);
  for (Json& webhook : validating["webhooks"]) {
    webhook["failurePolicy"] = "Ignore";
  }
  validating["metadata"]["annotations"][kFailurePolicyAnnotation] =
      R"({"w0.topoguard.dev": "Fail"})";
  fake_.apply("MODIFIED", validating);
  const auto policies = [&] {
    std::vector<std::string> found;
    const Json object = kube::get_object(*api_, kValidating, "topoguard")->object;
    for (const Json& webhook : object["webhooks"]) {
      found.push_back(webhook.value("failurePolicy", ""));
    }
    return found;
  };

  std::atomic<bool> stop{false};
  std::atomic<int> samples{0};
  std::atomic<int> fail_before_trusted{0};
  std::thread sampler([&] {
    while (!stop) {
      // One object read: its failurePolicy and its caBundle are of the same moment.
      const Json object = kube::get_object(*api_, kValidating, "topoguard")->object;
      const Json& webhook = object["webhooks"][0];
      if (webhook.value("failurePolicy", "") == "Fail") {
        const std::string bundle =
            base64_decode(webhook["clientConfig"].value("caBundle", "")).value_or("");
        if (!pki::verify_serving_certificate(secret_data("tls.crt"), bundle, kServiceName,
                                             clock_->wall_now())) {
          ++fail_before_trusted;
        }
      }
      ++samples;
    }
  });
  auto one = replica("a");
  ASSERT_TRUE(testing::eventually([&] { return one->controller->ready(); }));
  // The counter moves once the controller has the server's answer, after the stored change.
  EXPECT_TRUE(testing::eventually(
      [&] { return one->controller->status().failure_policy_changes == 1; }, 5s));
  EXPECT_EQ(policies(), (std::vector<std::string>{"Fail", "Ignore"}));
  stop = true;
  sampler.join();
  EXPECT_GT(samples.load(), 0);
  EXPECT_EQ(fail_before_trusted.load(), 0);
  EXPECT_NE(render_tls_metrics(one->controller->status())
                .find("topoguard_tls_failure_policy_changes_total 1\n"),
            std::string::npos);

  fake_.apply("MODIFIED", validating);  // re-applied: Ignore, no caBundle
  EXPECT_TRUE(testing::eventually(
      [&] { return one->controller->status().failure_policy_changes == 2; }, 5s));
  EXPECT_EQ(policies(), (std::vector<std::string>{"Fail", "Ignore"}));

  validating["metadata"]["annotations"][kFailurePolicyAnnotation] =
      R"({"w0.topoguard.dev": "Maybe"})";
  fake_.apply("MODIFIED", validating);
  ASSERT_TRUE(testing::eventually([&] { return one->controller->status().errors == 1; }, 5s));
  EXPECT_NE(one->controller->status().last_error.find(kFailurePolicyAnnotation),
            std::string::npos);
  // Re-applied again: the check that repairs the caBundle reads the annotation again.
  const std::uint64_t repairs = one->controller->status().bundle_repairs;
  fake_.apply("MODIFIED", validating);
  ASSERT_TRUE(testing::eventually(
      [&] { return one->controller->status().bundle_repairs == repairs + 2; }, 5s));
  ASSERT_TRUE(testing::eventually([&] { return one->controller->ready(); }));
  EXPECT_EQ(policies(), (std::vector<std::string>{"Ignore", "Ignore"}));
  EXPECT_EQ(one->controller->status().errors, 1u);
}

// helm applies the configurations server-side. What the controller sets stays owned by no one,
// so applying the install revision again (a rollback: Ignore, no caBundle) does not conflict,
// leaves the caBundles, and the controller sets Fail again; nor does an upgrade's Fail.
TEST_F(TlsControllerTest, HelmApplyNeverConflictsWithWhatItSets) {
  Json validating = configuration("ValidatingWebhookConfiguration", 2);
  for (Json& webhook : validating["webhooks"]) {
    webhook["failurePolicy"] = "Ignore";
  }
  validating["metadata"]["annotations"][kFailurePolicyAnnotation] =
      R"({"w0.topoguard.dev": "Fail"})";
  const auto helm_apply = [&](const Json& object) {
    Result<kube::ObjectResponse> applied = kube::apply_object(
        *api_, kValidating, "topoguard", object, {.field_manager = "helm"});
    return applied && applied->ok() ? std::string()
                                    : (applied ? applied->describe() : applied.error().message);
  };
  const auto first_policy = [&] {
    return kube::get_object(*api_, kValidating, "topoguard")
        ->object["webhooks"][0]
        .value("failurePolicy", "");
  };
  const auto managers = [&] {
    std::vector<std::string> found;
    const Json object = kube::get_object(*api_, kValidating, "topoguard")->object;
    for (const Json& entry : object["metadata"].value("managedFields", Json::array())) {
      found.push_back(entry.value("manager", "") + "/" + entry.value("operation", ""));
    }
    return found;
  };
  ASSERT_EQ(helm_apply(validating), "");
  auto one = replica("a");
  ASSERT_TRUE(testing::eventually([&] { return one->controller->ready(); }));
  ASSERT_TRUE(testing::eventually([&] { return first_policy() == "Fail"; }, 5s));
  // (before-first-apply: what SetUp stored without an apply.)
  EXPECT_TRUE(testing::eventually(
      [&] {
        return managers() ==
               std::vector<std::string>{"helm/Apply", "before-first-apply/Update"};
      },
      5s))
      << ::testing::PrintToString(managers());

  EXPECT_EQ(helm_apply(validating), "");  // the install revision again
  // The counter moves once the controller has the server's answer, after the stored change.
  EXPECT_TRUE(testing::eventually(
      [&] { return one->controller->status().failure_policy_changes == 2; }, 5s));
  EXPECT_EQ(first_policy(), "Fail");
  EXPECT_TRUE(distrust(one->serving()).empty()) << "the apply emptied a caBundle";
  validating["webhooks"][0]["failurePolicy"] = "Fail";
  EXPECT_EQ(helm_apply(validating), "");  // an upgrade
  EXPECT_EQ(one->controller->status().errors, 0u) << one->controller->status().last_error;
}

}  // namespace
}  // namespace topoguard::selftls
