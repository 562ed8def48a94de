// `topoguard serve` as a real process: SIGTERM while requests are in flight (bodies half sent)
// must finish every one of them, refuse new connections and exit 0.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "cpu_affinity.h"
#include "ephemeral_certs.h"
#include "serve_process.h"
#include "topoguard/common/json.h"
#include "webhook_test_support.h"
#include "test_paths.h"

namespace topoguard::server {
namespace {

namespace fs = std::filesystem;
using topoguard::testing::connect_loopback;
using topoguard::testing::RawTlsConnection;

class ServeBinaryTest : public ::testing::Test {
 protected:
  // A connection the server closed must fail the test's assertions, not kill the test process
  // (SSL_write writes with write(2), which raises SIGPIPE).
  static void SetUpTestSuite() { std::signal(SIGPIPE, SIG_IGN); }

  void SetUp() override {
    dir_ = topoguard::testing::make_temp_dir("topoguard-serve");
    pki_ = topoguard::testing::make_test_pki();
    topoguard::testing::write_file(dir_ + "/ca.pem", pki_.ca.cert);
    topoguard::testing::write_file(dir_ + "/tls.crt", pki_.server.cert);
    topoguard::testing::write_file(dir_ + "/tls.key", pki_.server.key);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Starts the binary and returns its webhook port.
  int start_server() {
    const bool started = server_.start(
        test::topoguard_binary(),
        {"--tls-cert", dir_ + "/tls.crt", "--tls-key", dir_ + "/tls.key", "--listen",
         "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0", "--shutdown-grace", "60",
         "--keep-alive-timeout", "60", "--read-timeout", "60"});
    return started ? server_.port() : -1;
  }

  std::string dir_;
  topoguard::testing::TestPki pki_;
  topoguard::testing::ServeProcess server_;
};

std::string request_head(std::size_t content_length) {
  return "POST /mutate?timeout=10s HTTP/1.1\r\nHost: topoguard.topoguard.svc\r\n"
         "Content-Type: application/json\r\nContent-Length: " +
         std::to_string(content_length) + "\r\n\r\n";
}

bool is_review_answer(const std::string& response, const std::string& uid) {
  return response.rfind("HTTP/1.1 200", 0) == 0 &&
         response.find("\"uid\":\"" + uid + "\"") != std::string::npos;
}

// SIGTERM with 16 requests in flight (TLS handshake done, body half sent) and one idle keep-alive
// connection: all 16 complete with 200, the idle connection still gets its next request answered,
// every answer after SIGTERM asks the client to close the connection, new connections are
// refused, and the process exits 0 well within its grace period.
TEST_F(ServeBinaryTest, SigtermDrainsInFlightRequests) {
  const int port = start_server();
  ASSERT_GT(port, 0) << server_.log();

  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx(SSL_CTX_new(TLS_client_method()),
                                                        SSL_CTX_free);
  SSL_CTX_load_verify_locations(ctx.get(), (dir_ + "/ca.pem").c_str(), nullptr);
  SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr);

  const Json object = Json::parse(R"({"apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceClaimTemplate", "metadata": {"name": "gpu-nic"},
    "spec": {"spec": {"devices": {"requests": [
      {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}},
      {"name": "nic", "exactly": {"deviceClassName": "dranet.net"}}]}}}})");

  // A keep-alive connection with one request answered before SIGTERM, idle at the signal.
  auto idle = std::make_unique<RawTlsConnection>(ctx.get(), port);
  ASSERT_TRUE(idle->connected());
  const std::string before = topoguard::testing::review_body(object, "keep-alive-before");
  ASSERT_TRUE(idle->send(request_head(before.size()) + before));
  const std::string first = idle->read_response();
  EXPECT_TRUE(is_review_answer(first, "keep-alive-before")) << first;
  EXPECT_EQ(first.find("Connection: close"), std::string::npos) << first;

  constexpr int kInFlight = 16;
  std::vector<std::unique_ptr<RawTlsConnection>> connections;
  std::vector<std::string> bodies;
  for (int i = 0; i < kInFlight; ++i) {
    bodies.push_back(topoguard::testing::review_body(object, "drain-" + std::to_string(i)));
    connections.push_back(std::make_unique<RawTlsConnection>(ctx.get(), port));
    ASSERT_TRUE(connections.back()->connected());
    const std::string& body = bodies.back();
    ASSERT_TRUE(
        connections.back()->send(request_head(body.size()) + body.substr(0, body.size() / 2)));
  }

  ASSERT_EQ(::kill(server_.pid(), SIGTERM), 0);
  // No fixed pause: wait (generously, for loaded sanitizer runs) until the listener is gone.
  bool refused = false;
  for (const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
       !refused && std::chrono::steady_clock::now() < deadline;) {
    const int probe = connect_loopback(port);
    refused = probe < 0;
    if (!refused) {
      ::close(probe);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  EXPECT_TRUE(refused) << "new connections must be refused while draining";
  ASSERT_TRUE(server_.running()) << "exited before finishing in-flight requests";

  int completed = 0;
  int asked_to_close = 0;
  for (int i = 0; i < kInFlight; ++i) {
    const std::string& body = bodies[static_cast<std::size_t>(i)];
    ASSERT_TRUE(connections[static_cast<std::size_t>(i)]->send(body.substr(body.size() / 2)))
        << "connection " << i << " was closed with its request half sent";
    const std::string response = connections[static_cast<std::size_t>(i)]->read_response();
    completed += is_review_answer(response, "drain-" + std::to_string(i)) ? 1 : 0;
    asked_to_close += response.find("Connection: close") != std::string::npos ? 1 : 0;
  }
  EXPECT_EQ(completed, kInFlight);
  EXPECT_EQ(asked_to_close, kInFlight);

  const std::string after = topoguard::testing::review_body(object, "keep-alive-after");
  ASSERT_TRUE(idle->send(request_head(after.size()) + after));
  const std::string second = idle->read_response();
  EXPECT_TRUE(is_review_answer(second, "keep-alive-after")) << second;
  EXPECT_NE(second.find("Connection: close"), std::string::npos) << second;

  // Clients honour "Connection: close"; the server then has nothing left to drain.
  idle.reset();
  connections.clear();
  EXPECT_EQ(server_.wait_exit(std::chrono::seconds(60)), 0) << server_.log();
}

// Without --threads the server sizes itself by the CPUs it may run on (a cpuset, `taskset`), not
// by the machine's: started on one CPU it runs two event loops and one decision thread, and says
// so in its "serving" line.
TEST_F(ServeBinaryTest, DefaultThreadsFollowTheAffinityMask) {
  // A child inherits the mask of the thread that forks it.
  bool started = false;
  std::thread on_one_cpu([&] {
    ASSERT_TRUE(topoguard::testing::pin_to_first_allowed_cpu());
    started = start_server() > 0;
  });
  on_one_cpu.join();
  ASSERT_TRUE(started) << server_.log();

  // start() returns once the "serving" line is read, so it is in the log.
  Json serving;
  std::istringstream log(server_.log());
  for (std::string line; std::getline(log, line);) {
    const Json entry = Json::parse(line, nullptr, false);
    if (entry.is_object() && entry.value("msg", "") == "serving") {
      serving = entry;
    }
  }
  ASSERT_TRUE(serving.is_object()) << server_.log();
  EXPECT_EQ(serving.value("event_loops", 0), 2) << serving.dump();
  EXPECT_EQ(serving.value("decision_threads", 0), 1) << serving.dump();
}

}  // namespace
}  // namespace topoguard::server
