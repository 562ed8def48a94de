// `topoguard serve --self-managed-tls` end to end against the fake API server: the binary makes
// its Secret, sets both configurations' caBundles, becomes ready, and serves a certificate that
// curl and `openssl s_client` verify for the Service's name with the Secret's CA; a second
// replica serves the same certificate without writing the Secret; SIGTERM gives the Lease up.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <string>

#include "ephemeral_certs.h"
#include "eventually.h"
#include "fake_apiserver.h"
#include "serve_process.h"
#include "topoguard/common/json.h"
#include "topoguard/kube/base64.h"
#include "topoguard/kube/objects.h"
#include "webhook_test_support.h"
#include "test_paths.h"

namespace topoguard::testing {
namespace {

using std::chrono::milliseconds;

Json configuration(const char* kind) {
  return {{"apiVersion", "admissionregistration.k8s.io/v1"},
          {"kind", kind},
          {"metadata", {{"name", "topoguard"}}},
          {"webhooks",
           Json::array({{{"name", "claims.topoguard.dev"},
                         {"clientConfig",
                          {{"service", {{"namespace", "topoguard"}, {"name", "topoguard"}}}}},
                         {"admissionReviewVersions", {"v1"}},
                         {"sideEffects", "None"}}})}};
}

// The output of a shell command.
std::string run(const std::string& command) {
  std::string output;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) {
    return output;
  }
  std::array<char, 4096> buffer{};
  while (std::fgets(buffer.data(), buffer.size(), pipe) != nullptr) {
    output += buffer.data();
  }
  ::pclose(pipe);
  return output;
}

class ServeTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = make_temp_dir("topoguard-serve-tls");
    write_file(dir_ + "/kubeconfig",
               "apiVersion: v1\nkind: Config\ncurrent-context: fake\n"
               "clusters:\n- name: fake\n  cluster:\n    server: " +
                   fake_.server() + "\n    certificate-authority: " + fake_.ca_file() +
                   "\ncontexts:\n- name: fake\n  context: {cluster: fake, user: u}\n"
                   "users:\n- name: u\n  user:\n    token: test-token\n");
    fake_.apply("ADDED", configuration("ValidatingWebhookConfiguration"));
    fake_.apply("ADDED", configuration("MutatingWebhookConfiguration"));
    auto client = kube::ApiClient::create(fake_.config());
    ASSERT_TRUE(client.has_value());
    api_ = *client;
  }

  bool start(ServeProcess& server) {
    return server.start(test::topoguard_binary(),
                        {"--self-managed-tls", "--cluster-cache", "off", "--listen", "127.0.0.1:0",
                         "--metrics-listen", "127.0.0.1:0", "--kubeconfig", dir_ + "/kubeconfig"});
  }
  static std::string get(ServeProcess& server, const std::string& path) {
    httplib::Client client("127.0.0.1", server.metrics_port());
    auto answer = client.Get(path.c_str());
    return answer ? std::to_string(answer->status) + " " + answer->body : "none";
  }
  Json object(const kube::ResourceRef& resource, const std::string& name) {
    return kube::get_object(*api_, resource, name)->object;
  }
  std::string secret_data(const char* key) {
    const Json secret = object({"", "v1", "secrets", "topoguard"}, "topoguard-tls");
    return kube::base64_decode(secret["data"][key].get<std::string>()).value_or("");
  }
  // openssl s_client's verdict on the served certificate for the Service's name.
  std::string s_client(ServeProcess& server) {
    return run("openssl s_client -connect 127.0.0.1:" + std::to_string(server.port()) +
               " -servername topoguard.topoguard.svc -verify_hostname topoguard.topoguard.svc "
               "-CAfile " +
               dir_ + "/ca.pem -verify_return_error -showcerts </dev/null 2>&1");
  }

  FakeApiServer fake_;
  kube::ApiClientPtr api_;
  std::string dir_;
};

TEST_F(ServeTlsTest, MakesItsCertificateAndServesIt) {
  ServeProcess first;
  ASSERT_TRUE(start(first)) << first.log();
  ASSERT_TRUE(
      eventually([&] { return get(first, "/readyz").rfind("200", 0) == 0; }, milliseconds(20000)))
      << get(first, "/readyz") << first.log();
  const std::string ca = secret_data("ca.crt");
  ASSERT_FALSE(ca.empty());
  write_file(dir_ + "/ca.pem", ca);
  for (const char* kind : {"validatingwebhookconfigurations", "mutatingwebhookconfigurations"}) {
    const Json configuration =
        object({"admissionregistration.k8s.io", "v1", kind, ""}, "topoguard");
    EXPECT_EQ(kube::base64_decode(
                  configuration["webhooks"][0]["clientConfig"]["caBundle"].get<std::string>()),
              ca)
        << kind;
  }

  const std::string verdict = s_client(first);
  EXPECT_NE(verdict.find("Verify return code: 0 (ok)"), std::string::npos) << verdict;
  const std::string port = std::to_string(first.port());
  const std::string health =
      run("curl -sS --cacert " + dir_ + "/ca.pem --resolve topoguard.topoguard.svc:" + port +
          ":127.0.0.1 https://topoguard.topoguard.svc:" + port + "/healthz 2>&1");
  EXPECT_EQ(health, "ok\n");
  const std::string wrong_name =
      run("curl -sS --cacert " + dir_ + "/ca.pem --resolve other.topoguard.svc:" + port +
          ":127.0.0.1 https://other.topoguard.svc:" + port + "/healthz 2>&1");
  EXPECT_NE(wrong_name, "ok\n");

  const std::string metrics = get(first, "/metrics");
  EXPECT_NE(metrics.find("topoguard_tls_leader 1"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("topoguard_tls_ready 1"), std::string::npos);
  EXPECT_NE(metrics.find("topoguard_tls_secret_writes_total 1"), std::string::npos);
  EXPECT_NE(metrics.find("topoguard_tls_certificate_expiry_timestamp_seconds "), std::string::npos);

  // A second replica: ready, the same certificate, no Secret write of its own.
  ServeProcess second;
  ASSERT_TRUE(start(second)) << second.log();
  ASSERT_TRUE(
      eventually([&] { return get(second, "/readyz").rfind("200", 0) == 0; }, milliseconds(20000)))
      << get(second, "/readyz") << second.log();
  const std::string second_verdict = s_client(second);
  EXPECT_NE(second_verdict.find("Verify return code: 0 (ok)"), std::string::npos);
  EXPECT_NE(second_verdict.find(secret_data("tls.crt").substr(28, 200)), std::string::npos);
  EXPECT_NE(get(second, "/metrics").find("topoguard_tls_leader 0"), std::string::npos);
  EXPECT_EQ(secret_data("ca.crt"), ca);

  // SIGTERM: the writer gives the Lease up on its way out.
  const kube::ResourceRef leases{"coordination.k8s.io", "v1", "leases", "topoguard"};
  const std::string holder = object(leases, "topoguard-tls")["spec"]["holderIdentity"];
  EXPECT_FALSE(holder.empty());
  ASSERT_EQ(::kill(first.pid(), SIGTERM), 0);
  EXPECT_EQ(first.wait_exit(std::chrono::seconds(40)), 0) << first.log();
  // Released, or already taken by the second replica: not the first's any more.
  EXPECT_NE(object(leases, "topoguard-tls")["spec"]["holderIdentity"], holder);
  EXPECT_TRUE(eventually(
      [&] { return get(second, "/metrics").find("topoguard_tls_leader 1") != std::string::npos; },
      milliseconds(10000)));
}

}  // namespace
}  // namespace topoguard::testing
