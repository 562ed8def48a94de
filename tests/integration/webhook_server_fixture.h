// The fixture of the in-process webhook tests: a temporary directory with a test PKI and the
// built-in policy, an HttpsServer on 127.0.0.1 port 0, and clients that trust the test CA.
#pragma once

#include <atomic>
#include <barrier>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "ephemeral_certs.h"
#include "eventually.h"
#include "topoguard/policy/policy_loader.h"
#include "topoguard/server/https_server.h"
#include "webhook_test_support.h"

namespace topoguard::server {

inline Json rct(const std::string& name, const Json& requests, const Json& constraints = nullptr) {
  Json object = {{"apiVersion", "resource.k8s.io/v1"},
                 {"kind", "ResourceClaimTemplate"},
                 {"metadata", {{"name", name}}},
                 {"spec", {{"spec", {{"devices", {{"requests", requests}}}}}}}};
  if (!constraints.is_null()) {
    object["spec"]["spec"]["devices"]["constraints"] = constraints;
  }
  return object;
}

inline Json request(const std::string& name, const std::string& device_class, int count = 1) {
  return {{"name", name}, {"exactly", {{"deviceClassName", device_class}, {"count", count}}}};
}

// The value of one series in a Prometheus text exposition, -1 when absent.
inline long long metric_value(const std::string& text, const std::string& series) {
  const std::size_t at = text.find("\n" + series + " ");
  if (at == std::string::npos) {
    return -1;
  }
  return std::stoll(text.substr(at + series.size() + 2));
}

using topoguard::testing::eventually;

class WebhookServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = topoguard::testing::make_temp_dir("topoguard-webhook");
    pki_ = topoguard::testing::make_test_pki();
    topoguard::testing::write_file(path("ca.pem"), pki_.ca.cert);
    topoguard::testing::write_file(path("tls.crt"), pki_.server.cert);
    topoguard::testing::write_file(path("tls.key"), pki_.server.key);
    topoguard::testing::write_file(path("client.crt"), pki_.client.cert);
    topoguard::testing::write_file(path("client.key"), pki_.client.key);
    std::filesystem::create_directory(path("policies"));
    topoguard::testing::write_file(path("policies/default.yaml"), std::string(policy::builtin_policy_text()));
    options_.listen = {"127.0.0.1", 0};
    options_.metrics_listen = {"127.0.0.1", 0};
    options_.tls_cert = path("tls.crt");
    options_.tls_key = path("tls.key");
    options_.policies = {path("policies")};
    options_.reload_interval = std::chrono::milliseconds(50);
    options_.shutdown_grace = std::chrono::seconds(5);
  }

  void TearDown() override {
    server_.reset();
    std::filesystem::remove_all(dir_);
  }

  std::string path(const std::string& name) const { return dir_ + "/" + name; }

  void start() {
    auto certs = CertReloader::create(options_.tls_cert, options_.tls_key);
    ASSERT_TRUE(certs.has_value()) << certs.error().to_string();
    auto policies = PolicyReloader::create(
        options_.policies,
        [](const std::vector<std::string>& paths) { return policy::load_policies(paths); });
    ASSERT_TRUE(policies.has_value()) << policies.error().to_string();
    metrics_ = std::make_shared<Metrics>("test");
    server_ = std::make_unique<HttpsServer>(options_, *certs, *policies, metrics_);
    const Status started = server_->start();
    ASSERT_TRUE(started.has_value()) << started.error().to_string();
  }

  std::unique_ptr<httplib::SSLClient> client(const std::string& ca = "") const {
    auto made = std::make_unique<httplib::SSLClient>("127.0.0.1", server_->port());
    made->set_ca_cert_path(ca.empty() ? path("ca.pem") : ca);
    made->enable_server_certificate_verification(true);
    made->set_connection_timeout(5, 0);
    made->set_read_timeout(10, 0);
    return made;
  }

  // POSTs a review and returns the AdmissionReview `response`; fails the test on anything else.
  Json review(const std::string& endpoint, const std::string& body) const {
    auto result = client()->Post(endpoint.c_str(), body, "application/json");
    EXPECT_TRUE(result) << httplib::to_string(result.error());
    if (!result) {
      return Json();
    }
    EXPECT_EQ(result->status, 200) << result->body;
    EXPECT_EQ(result->get_header_value("Content-Type"), "application/json");
    Json parsed = Json::parse(result->body, nullptr, false);
    EXPECT_EQ(parsed.value("apiVersion", ""), "admission.k8s.io/v1");
    return parsed.value("response", Json());
  }

  // Opens `connections` keep-alive connections that each POST one review, waits until all are
  // open, then sends `requests_each - 1` more on each; returns how many requests failed.
  int failed_keep_alive_requests(int connections, int requests_each) const {
    const std::string body = topoguard::testing::review_body(
        rct("u", Json::array({request("gpu", "gpu.nvidia.com"), request("nic", "dranet.net")})),
        "ka");
    std::atomic<int> ok{0};
    std::barrier all_connected(connections);
    std::vector<std::thread> workers;
    for (int i = 0; i < connections; ++i) {
      workers.emplace_back([&] {
        auto connection = client();
        connection->set_keep_alive(true);
        for (int r = 0; r < requests_each; ++r) {
          auto result = connection->Post("/mutate", body, "application/json");
          if (result && result->status == 200) {
            ++ok;
          }
          if (r == 0) {
            all_connected.arrive_and_wait();  // every connection is open and idle-held now
          }
        }
      });
    }
    for (auto& worker : workers) {
      worker.join();
    }
    return connections * requests_each - ok.load();
  }

  std::string metrics_text() const {
    httplib::Client plain("127.0.0.1", server_->metrics_port());
    auto result = plain.Get("/metrics");
    return result && result->status == 200 ? result->body : std::string();
  }

  std::string dir_;
  topoguard::testing::TestPki pki_;
  ServerOptions options_;
  std::shared_ptr<Metrics> metrics_;
  std::unique_ptr<HttpsServer> server_;
};

// A running webhook plus a TLS client context trusting its CA, for tests that write raw bytes.
class RawTlsServerTest : public WebhookServerTest {
 protected:
  static void SetUpTestSuite() { std::signal(SIGPIPE, SIG_IGN); }

  void SetUp() override {
    WebhookServerTest::SetUp();
    client_ctx_.reset(SSL_CTX_new(TLS_client_method()));
    SSL_CTX_load_verify_locations(client_ctx_.get(), path("ca.pem").c_str(), nullptr);
    SSL_CTX_set_verify(client_ctx_.get(), SSL_VERIFY_PEER, nullptr);
  }

  [[nodiscard]] std::unique_ptr<testing::RawTlsConnection> raw() const {
    return std::make_unique<testing::RawTlsConnection>(client_ctx_.get(), server_->port());
  }

  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> client_ctx_{nullptr, SSL_CTX_free};
};

}  // namespace topoguard::server
