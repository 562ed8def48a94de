// `topoguard serve --kubeconfig` against the fake API server, end to end: not ready until the
// cache has synced; a Pod is judged with the ResourceClaimTemplate it names; a claim that no node
// can hold gets a warning at CREATE, and a ResourceSlice event that makes it possible takes the
// warning away within a second; a policy's namespaceSelector follows the cached Namespace's
// labels; /metrics shows the cache.
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <functional>
#include <string>

#include "dra_objects.h"
#include "ephemeral_certs.h"
#include "eventually.h"
#include "fake_apiserver.h"
#include "serve_process.h"
#include "topoguard/common/json.h"
#include "webhook_test_support.h"
#include "test_paths.h"

namespace topoguard::testing {
namespace {

using std::chrono::milliseconds;

Json device(const std::string& name, const std::string& root) {
  return {{"name", name},
          {"attributes", {{"resource.kubernetes.io/pcieRoot", {{"string", root}}}}}};
}

Json slice(const std::string& node, const std::string& driver, Json devices) {
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "ResourceSlice"},
          {"metadata", {{"name", node + "-" + driver}}},
          {"spec",
           {{"driver", driver},
            {"nodeName", node},
            {"pool", {{"name", node}, {"generation", 1}, {"resourceSliceCount", 1}}},
            {"devices", std::move(devices)}}}};
}

Json device_class(const std::string& name) {
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "DeviceClass"},
          {"metadata", {{"name", name}}},
          {"spec",
           {{"selectors",
             Json::array({{{"cel", {{"expression", "device.driver == \"" + name + "\""}}}}})}}}};
}

Json claim_template(const std::string& name, bool aligned) {
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "ResourceClaimTemplate"},
          {"metadata", {{"name", name}, {"namespace", "ml"}}},
          {"spec", {{"spec", dra_claim_spec(aligned)}}}};
}

Json claim(const std::string& name) {
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "ResourceClaim"},
          {"metadata", {{"name", name}, {"namespace", "ml"}}},
          {"spec", dra_claim_spec(true)}};
}

Json pod_using(const std::string& template_name) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", "worker"}, {"namespace", "ml"}}},
          {"spec",
           {{"resourceClaims",
             Json::array({{{"name", "pair"}, {"resourceClaimTemplateName", template_name}}})},
            {"containers",
             Json::array({{{"name", "main"},
                           {"image", "vllm/vllm-openai:v0.8.5"},
                           {"resources", {{"claims", Json::array({{{"name", "pair"}}})}}}}})}}}};
}

class ServeCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = make_temp_dir("topoguard-serve-cache");
    pki_ = make_test_pki();
    write_file(dir_ + "/tls.crt", pki_.server.cert);
    write_file(dir_ + "/tls.key", pki_.server.key);
    write_file(dir_ + "/ca.pem", pki_.ca.cert);
  }

  void write_kubeconfig(const std::string& token) {
    write_file(dir_ + "/kubeconfig",
               "apiVersion: v1\nkind: Config\ncurrent-context: fake\n"
               "clusters:\n- name: fake\n  cluster:\n    server: " + fake_.server() +
                   "\n    certificate-authority: " + fake_.ca_file() +
                   "\ncontexts:\n- name: fake\n  context: {cluster: fake, user: u}\n"
                   "users:\n- name: u\n  user:\n    token: " + token + "\n");
  }

  bool start_server() {
    return server_.start(test::topoguard_binary(),
                         {"--tls-cert", dir_ + "/tls.crt", "--tls-key", dir_ + "/tls.key",
                          "--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0",
                          "--kubeconfig", dir_ + "/kubeconfig"});
  }

  int readyz() {
    httplib::Client client("127.0.0.1", server_.metrics_port());
    auto answer = client.Get("/readyz");
    return answer ? answer->status : -1;
  }
  std::string metrics() {
    httplib::Client client("127.0.0.1", server_.metrics_port());
    auto answer = client.Get("/metrics");
    return answer ? answer->body : "";
  }
  // The AdmissionReview response to a CREATE of `object` on /validate.
  Json review(const Json& object) {
    httplib::SSLClient client("127.0.0.1", server_.port());
    client.set_ca_cert_path((dir_ + "/ca.pem").c_str());
    client.enable_server_certificate_verification(true);
    auto answer = client.Post("/validate?timeout=10s", review_body(object, "uid-1"),
                              "application/json");
    if (!answer || answer->status != 200) {
      ADD_FAILURE() << "review failed: " << (answer ? answer->body : "no answer");
      return Json();
    }
    return Json::parse(answer->body)["response"];
  }
  static std::string warnings_of(const Json& response) {
    std::string text;
    for (const Json& warning : response.value("warnings", Json::array())) {
      text += warning.get<std::string>() + "\n";
    }
    return text;
  }
  FakeApiServer fake_;
  std::string dir_;
  TestPki pki_;
  ServeProcess server_;
};

TEST_F(ServeCacheTest, JudgesWithTheClusterOnceSynced) {
  fake_.apply("ADDED", device_class("gpu.nvidia.com"));
  fake_.apply("ADDED", device_class("dra.net"));
  // node-a: its GPU and its NIC under different PCIe roots, so no aligned pair.
  fake_.apply("ADDED", slice("node-a", "gpu.nvidia.com", Json::array({device("gpu-0", "pci0000:10")})));
  fake_.apply("ADDED", slice("node-a", "dra.net", Json::array({device("nic-0", "pci0000:20")})));
  fake_.apply("ADDED", claim_template("unaligned", false));

  // The kubeconfig's token is not accepted yet: the cache cannot sync, the server is not ready.
  write_kubeconfig("late-token");
  ASSERT_TRUE(start_server()) << server_.log();
  ASSERT_TRUE(eventually([&] {
    for (const Json& request : fake_.requests()) {
      if (request["status"] == 401) {
        return true;  // the cache has been refused
      }
    }
    return false;
  }));
  EXPECT_EQ(readyz(), 503);
  fake_.control("tokens", {{"add", {"late-token"}}});
  ASSERT_TRUE(eventually([&] { return readyz() == 200; }, milliseconds(20000))) << server_.log();

  // The Pod is judged with the template it names: the template's missing constraint is its own.
  const Json pod_answer = review(pod_using("unaligned"));
  const std::string pod_text = pod_answer.dump();
  EXPECT_NE(pod_text.find("missing-pcie-alignment"), std::string::npos) << pod_text;
  EXPECT_NE(pod_text.find("unaligned"), std::string::npos) << pod_text;

  // No node can hold an aligned GPU + NIC pair: a warning at CREATE (default action warn).
  const Json before = review(claim("pair"));
  EXPECT_TRUE(before.value("allowed", false)) << before.dump();
  EXPECT_NE(warnings_of(before).find("unsatisfiable-alignment"), std::string::npos)
      << before.dump();

  // A NIC under the GPU's root appears: within a second the same claim is fine.
  fake_.apply("MODIFIED", slice("node-a", "dra.net",
                                Json::array({device("nic-0", "pci0000:20"),
                                             device("nic-1", "pci0000:10")})));
  const auto changed = std::chrono::steady_clock::now();
  ASSERT_TRUE(eventually(
      [&] {
        return warnings_of(review(claim("pair"))).find("unsatisfiable-alignment") ==
               std::string::npos;
      },
      milliseconds(5000)));
  EXPECT_LT(std::chrono::steady_clock::now() - changed, std::chrono::seconds(1));

  const std::string text = metrics();
  EXPECT_NE(text.find("topoguard_cluster_cache_synced 1"), std::string::npos) << text;
  EXPECT_NE(text.find("topoguard_cluster_cache_objects{resource=\"resourceslices.v1.resource.k8s.io\"} 2"),
            std::string::npos)
      << text;
}

Json namespace_labelled(const std::string& tier) {
  return {{"apiVersion", "v1"},
          {"kind", "Namespace"},
          {"metadata", {{"name", "ml"}, {"labels", {{"tier", tier}}}}}};
}

// A policy's namespaceSelector reads the cached Namespace's labels: a template in a namespace
// labelled tier=dev is not judged by the prod-only policy; once the namespace is relabelled
// tier=prod, the same template is denied.
TEST_F(ServeCacheTest, NamespaceSelectorFollowsTheNamespaceLabels) {
  fake_.apply("ADDED", namespace_labelled("dev"));
  write_file(dir_ + "/policy.yaml",
             "apiVersion: topoguard.dev/v1alpha1\nkind: AlignmentPolicy\n"
             "metadata: {name: prod-only}\n"
             "spec:\n  match: {namespaceSelector: {matchLabels: {tier: prod}}}\n");
  write_kubeconfig("test-token");
  ASSERT_TRUE(server_.start(test::topoguard_binary(),
                            {"--tls-cert", dir_ + "/tls.crt", "--tls-key", dir_ + "/tls.key",
                             "--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0",
                             "--kubeconfig", dir_ + "/kubeconfig", "--policies",
                             dir_ + "/policy.yaml"}))
      << server_.log();
  ASSERT_TRUE(eventually([&] { return readyz() == 200; }, milliseconds(20000))) << server_.log();
  const Json dev = review(claim_template("unaligned", false));
  EXPECT_TRUE(dev.value("allowed", false)) << dev.dump();

  fake_.apply("MODIFIED", namespace_labelled("prod"));
  ASSERT_TRUE(eventually([&] { return !review(claim_template("unaligned", false)).value("allowed", true); },
                         milliseconds(5000)))
      << server_.log();
}

// Without the cache (--cluster-cache=off) the same Pod is judged alone: its template is unknown.
TEST_F(ServeCacheTest, WithoutTheCacheAPodIsJudgedAlone) {
  fake_.apply("ADDED", claim_template("unaligned", false));
  write_kubeconfig("test-token");
  ASSERT_TRUE(server_.start(test::topoguard_binary(),
                            {"--tls-cert", dir_ + "/tls.crt", "--tls-key", dir_ + "/tls.key",
                             "--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0",
                             "--kubeconfig", dir_ + "/kubeconfig", "--cluster-cache", "off"}));
  EXPECT_EQ(readyz(), 200);
  const Json answer = review(pod_using("unaligned"));
  EXPECT_TRUE(answer.value("allowed", false));
  EXPECT_EQ(answer.dump().find("missing-pcie-alignment"), std::string::npos) << answer.dump();
  EXPECT_EQ(metrics().find("topoguard_cluster_cache"), std::string::npos);
}

}  // namespace
}  // namespace topoguard::testing
