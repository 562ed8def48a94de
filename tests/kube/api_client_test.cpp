// ApiClient against the fake API server (tests/kube/fake_apiserver.py): authentication (tokens,
// token files, client certificates, exec plugins) and its refresh on 401, typed Status errors,
// Retry-After, the rate limit, TLS name checks, streaming, cancellation and kept-alive
// connections.
#include "topoguard/kube/api_client.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "ephemeral_certs.h"
#include "eventually.h"
#include "fake_apiserver.h"
#include "test_clock.h"
#include "test_paths.h"

namespace topoguard::kube {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

const std::string kPlugin = test::source_dir() + "/tests/kube/exec_plugin.sh";

int count_lines(const std::string& path) {
  std::ifstream in(path);
  int lines = 0;
  for (std::string line; std::getline(in, line);) {
    ++lines;
  }
  return lines;
}

class ApiClientTest : public ::testing::Test {
 protected:
  ApiClientPtr client(ClientConfig config, ApiClientOptions options = {}) {
    Result<ApiClientPtr> made = ApiClient::create(std::move(config), std::move(options), clock_);
    EXPECT_TRUE(made.has_value()) << made.error().to_string();
    return made ? *made : nullptr;
  }
  // The fake's log of requests to `path`: their statuses and auth.
  std::vector<std::pair<int, std::string>> log_of(const std::string& path) {
    std::vector<std::pair<int, std::string>> entries;
    for (const Json& request : fake_.requests()) {
      if (request["path"] == path) {
        entries.emplace_back(request["status"].get<int>(), request["auth"].get<std::string>());
      }
    }
    return entries;
  }

  testing::FakeApiServer fake_;
  std::shared_ptr<testing::TestClock> clock_ = std::make_shared<testing::TestClock>(true);
};

// A bearer token reads a list; the body is the server's JSON.
TEST_F(ApiClientTest, GetWithBearerToken) {
  fake_.apply("ADDED",
              {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "a"}}}});
  ApiClientPtr api = client(fake_.config());
  Result<ApiResponse> response = api->get("/api/v1/namespaces", {{"limit", "10"}});
  ASSERT_TRUE(response.has_value()) << response.error().to_string();
  EXPECT_EQ(response->status, 200);
  EXPECT_FALSE(response->error.has_value());
  const Json list = Json::parse(response->body);
  EXPECT_EQ(list["kind"], "NamespaceList");
  EXPECT_EQ(list["items"][0]["metadata"]["name"], "a");
  EXPECT_EQ(log_of("/api/v1/namespaces"),
            (std::vector<std::pair<int, std::string>>{{200, "bearer:test-token"}}));
}

// A list sent with chunked transfer encoding in random pieces reads the same.
TEST_F(ApiClientTest, ChunkedListBody) {
  for (int i = 0; i < 30; ++i) {
    fake_.apply("ADDED", {{"apiVersion", "v1"},
                          {"kind", "Namespace"},
                          {"metadata", {{"name", "ns-" + std::to_string(i)}}}});
  }
  fake_.control("config", {{"listChunked", true}});
  ApiClientPtr api = client(fake_.config());
  Result<ApiResponse> response = api->get("/api/v1/namespaces", {});
  ASSERT_TRUE(response.has_value()) << response.error().to_string();
  EXPECT_EQ(Json::parse(response->body)["items"].size(), 30u);
}

// A non-2xx answer is a response with its Status parsed, not a transport error.
TEST_F(ApiClientTest, StatusBodyIsTyped) {
  ApiClientPtr api = client(fake_.config());
  Result<ApiResponse> response =
      api->get("/apis/k8s.cni.cncf.io/v1/network-attachment-definitions", {});
  ASSERT_TRUE(response.has_value()) << response.error().to_string();
  EXPECT_EQ(response->status, 404);
  ASSERT_TRUE(response->error.has_value());
  EXPECT_TRUE(response->error->from_body);
  EXPECT_EQ(response->error->code, 404);
  EXPECT_EQ(response->error->reason, "NotFound");
  EXPECT_EQ(response->error->message, "the server could not find the requested resource");
  EXPECT_EQ(response->error->to_string(),
            "404 NotFound: the server could not find the requested resource");
}

// A revoked static token is a 401 with its Status, asked once (retrying cannot help).
TEST_F(ApiClientTest, RevokedStaticToken) {
  ApiClientPtr api = client(fake_.config());
  fake_.control("tokens", {{"revoke", {"test-token"}}});
  Result<ApiResponse> response = api->get("/api/v1/nodes", {});
  ASSERT_TRUE(response.has_value());
  EXPECT_EQ(response->status, 401);
  EXPECT_EQ(response->error->reason, "Unauthorized");
  EXPECT_EQ(log_of("/api/v1/nodes").size(), 1u);
}

// Token rotation: the server revokes the old token and the file holds the new one; the client
// re-reads the file on the 401 and the request goes through.
TEST_F(ApiClientTest, TokenFileRotation) {
  fake_.control("tokens", {{"add", {"token-1", "token-2"}}});
  ClientConfig config = fake_.config("");
  config.token_file = fake_.dir().write("token", "token-1\n");
  ApiClientPtr api = client(config);
  ASSERT_EQ(api->get("/api/v1/nodes", {})->status, 200);
  fake_.dir().write("token", "token-2\n");
  fake_.control("tokens", {{"revoke", {"token-1"}}});
  Result<ApiResponse> rotated = api->get("/api/v1/nodes", {});
  ASSERT_TRUE(rotated.has_value());
  EXPECT_EQ(rotated->status, 200);
  EXPECT_EQ(
      log_of("/api/v1/nodes"),
      (std::vector<std::pair<int, std::string>>{
          {200, "bearer:token-1"}, {401, "bearer-rejected:token-1"}, {200, "bearer:token-2"}}));
}

// Past the refresh period the file is read again without waiting for a 401.
TEST_F(ApiClientTest, TokenFileReReadEveryMinute) {
  fake_.control("tokens", {{"add", {"token-1", "token-2"}}});
  ClientConfig config = fake_.config("");
  config.token_file = fake_.dir().write("token", "token-1");
  ApiClientPtr api = client(config);
  ASSERT_EQ(api->get("/api/v1/nodes", {})->status, 200);
  fake_.dir().write("token", "token-2");
  clock_->advance(seconds(61));
  ASSERT_EQ(api->get("/api/v1/nodes", {})->status, 200);
  EXPECT_EQ(log_of("/api/v1/nodes").back().second, "bearer:token-2");
}

// A client certificate signed by the cluster CA authenticates.
TEST_F(ApiClientTest, ClientCertificate) {
  ClientConfig config = fake_.config("");
  config.client_certificate_pem = fake_.client_cert_pem();
  config.client_key_pem = fake_.client_key_pem();
  ApiClientPtr api = client(config);
  ASSERT_EQ(api->get("/api/v1/nodes", {})->status, 200);
  EXPECT_EQ(log_of("/api/v1/nodes").back().second, "cert:topoguard-test");
}

ClientConfig with_plugin(ClientConfig config,
                         std::vector<std::pair<std::string, std::string>> env) {
  ExecConfig exec;
  exec.api_version = "client.authentication.k8s.io/v1";
  exec.command = kPlugin;
  exec.interactive_mode = "Never";
  exec.env = std::move(env);
  config.exec = std::move(exec);
  return config;
}

// An exec plugin's token is cached (one run for many requests) and the plugin runs again when
// the server answers 401.
TEST_F(ApiClientTest, ExecPluginTokenCachedAndRerunOn401) {
  fake_.control("tokens", {{"add", {"exec-1", "exec-2"}}});
  const std::string token = fake_.dir().write("exec-token", "exec-1");
  const std::string runs = fake_.dir().path() + "/runs";
  ApiClientPtr api =
      client(with_plugin(fake_.config(""), {{"EXEC_TOKEN_FILE", token}, {"EXEC_RUNS", runs}}));
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(api->get("/api/v1/nodes", {})->status, 200);
  }
  EXPECT_EQ(count_lines(runs), 1);
  fake_.dir().write("exec-token", "exec-2");
  fake_.control("tokens", {{"revoke", {"exec-1"}}});
  Result<ApiResponse> again = api->get("/api/v1/nodes", {});
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->status, 200);
  EXPECT_EQ(count_lines(runs), 2);
  EXPECT_EQ(log_of("/api/v1/nodes").back().second, "bearer:exec-2");
}

// An expired plugin credential is replaced before it is sent.
TEST_F(ApiClientTest, ExecPluginRunsAgainAfterExpiry) {
  fake_.control("tokens", {{"add", {"exec-1"}}});
  const std::string token = fake_.dir().write("exec-token", "exec-1");
  const std::string runs = fake_.dir().path() + "/runs";
  const std::time_t soon = std::chrono::system_clock::to_time_t(clock_->wall_now() + seconds(120));
  char expiry[32];
  std::strftime(expiry, sizeof(expiry), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&soon));
  ApiClientPtr api = client(
      with_plugin(fake_.config(""),
                  {{"EXEC_TOKEN_FILE", token}, {"EXEC_RUNS", runs}, {"EXEC_EXPIRY", expiry}}));
  ASSERT_EQ(api->get("/api/v1/nodes", {})->status, 200);
  ASSERT_EQ(api->get("/api/v1/nodes", {})->status, 200);
  EXPECT_EQ(count_lines(runs), 1);
  clock_->advance(seconds(180));
  ASSERT_EQ(api->get("/api/v1/nodes", {})->status, 200);
  EXPECT_EQ(count_lines(runs), 2);
}

// A plugin may answer with a client certificate, which the TLS connection then presents.
TEST_F(ApiClientTest, ExecPluginCertificate) {
  const std::string cert = fake_.dir().write("exec.crt", fake_.client_cert_pem());
  const std::string key = fake_.dir().write("exec.key", fake_.client_key_pem());
  ApiClientPtr api =
      client(with_plugin(fake_.config(""), {{"EXEC_CERT_FILE", cert}, {"EXEC_KEY_FILE", key}}));
  ASSERT_EQ(api->get("/api/v1/nodes", {})->status, 200);
  EXPECT_EQ(log_of("/api/v1/nodes").back().second, "cert:topoguard-test");
}

// 429 with Retry-After: the client waits as told (on its clock) and asks again.
TEST_F(ApiClientTest, RetryAfterIsHonoured) {
  ApiClientPtr api = client(fake_.config());
  fake_.control("throttle", {{"count", 2}, {"retryAfter", 3}, {"match", "/api/v1/nodes"}});
  Result<ApiResponse> response = api->get("/api/v1/nodes", {});
  ASSERT_TRUE(response.has_value());
  EXPECT_EQ(response->status, 200);
  const auto statuses = log_of("/api/v1/nodes");
  ASSERT_EQ(statuses.size(), 3u);
  EXPECT_EQ(statuses[0].first, 429);
  EXPECT_EQ(statuses[1].first, 429);
  int three_second_waits = 0;
  for (const auto sleep : clock_->sleeps()) {
    three_second_waits += sleep == seconds(3) ? 1 : 0;
  }
  EXPECT_EQ(three_second_waits, 2);
}

// Past max_retries the 429 comes back, with its Status and Retry-After; a 5xx with Retry-After
// is retried too, one without is not.
TEST_F(ApiClientTest, RetryAfterGivesUpAndServerErrors) {
  ApiClientOptions options;
  options.max_retries = 2;
  ApiClientPtr api = client(fake_.config(), options);
  fake_.control("throttle", {{"count", 5}, {"retryAfter", 1}, {"match", "/api/v1/nodes"}});
  Result<ApiResponse> throttled = api->get("/api/v1/nodes", {});
  ASSERT_TRUE(throttled.has_value());
  EXPECT_EQ(throttled->status, 429);
  EXPECT_EQ(throttled->error->reason, "TooManyRequests");
  EXPECT_EQ(throttled->retry_after, seconds(1));
  EXPECT_EQ(throttled->error->details["retryAfterSeconds"], 1);
  EXPECT_EQ(log_of("/api/v1/nodes").size(), 3u);

  fake_.control("throttle",
                {{"count", 1}, {"retryAfter", 2}, {"status", 503}, {"match", "/api/v1/pods"}});
  EXPECT_EQ(api->get("/api/v1/pods", {})->status, 200);
  EXPECT_EQ(log_of("/api/v1/pods").size(), 2u);
}

// The token bucket spaces requests: burst 1 at 2 QPS makes each further request wait 0.5 s.
TEST_F(ApiClientTest, RateLimit) {
  ApiClientOptions options;
  options.rate_limit = RateLimit{2.0, 1};
  ApiClientPtr api = client(fake_.config(), options);
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(api->get("/version", {})->status, 200);
  }
  const auto sleeps = clock_->sleeps();
  ASSERT_EQ(sleeps.size(), 2u);
  for (const auto sleep : sleeps) {
    EXPECT_GT(sleep, milliseconds(300));
    EXPECT_LE(sleep, milliseconds(500));
  }
}

// tls-server-name is the name checked in the server's certificate (and sent as SNI): the
// fake's certificate holds kubernetes.default.svc but not other.example.
TEST_F(ApiClientTest, TlsServerName) {
  ClientConfig config = fake_.config();
  config.tls_server_name = "kubernetes.default.svc";
  ASSERT_EQ(client(config)->get("/version", {})->status, 200);
  config.tls_server_name = "other.example";
  Result<ApiResponse> refused = client(config)->get("/version", {});
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error().message.find("other.example"), std::string::npos)
      << refused.error().message;
}

// A server certificate from another CA is refused; insecure-skip-tls-verify accepts it.
TEST_F(ApiClientTest, CertificateVerification) {
  ClientConfig config = fake_.config();
  config.ca_pem = testing::make_ca("some other CA").cert;
  Result<ApiResponse> refused = client(config)->get("/version", {});
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error().message.find("certificate"), std::string::npos)
      << refused.error().message;
  config.ca_pem.clear();
  config.insecure_skip_tls_verify = true;
  EXPECT_EQ(client(config)->get("/version", {})->status, 200);
}

// A bad CA or a client key of another certificate is refused at creation.
TEST_F(ApiClientTest, BadTlsConfigurationFailsAtCreate) {
  ClientConfig config = fake_.config();
  config.ca_pem = "not a certificate";
  EXPECT_FALSE(ApiClient::create(config, {}, clock_).has_value());
  config = fake_.config();
  config.client_certificate_pem = fake_.client_cert_pem();
  config.client_key_pem = testing::make_ca("x").key;
  EXPECT_FALSE(ApiClient::create(config, {}, clock_).has_value());
}

// A streamed watch delivers its bytes as they come and ends cleanly at timeoutSeconds.
TEST_F(ApiClientTest, StreamEndsCleanly) {
  fake_.control("config", {{"bookmarkInterval", 0.2}});
  ApiClientPtr api = client(fake_.config());
  std::string bytes;
  std::vector<std::size_t> pieces;
  Result<ApiResponse> response = api->stream(
      "/api/v1/namespaces",
      {{"watch", "true"}, {"allowWatchBookmarks", "true"}, {"timeoutSeconds", "1"}},
      [&](std::string_view piece) {
        bytes += piece;
        pieces.push_back(piece.size());
        return true;
      },
      seconds(10));
  ASSERT_TRUE(response.has_value()) << response.error().to_string();
  // The sink hears first, with no bytes, that the stream is open.
  ASSERT_GE(pieces.size(), 2u);
  EXPECT_EQ(pieces.front(), 0u);
  EXPECT_EQ(response->status, 200);
  EXPECT_FALSE(response->stopped);
  EXPECT_NE(bytes.find("\"BOOKMARK\""), std::string::npos);
}

// A stream cut before its chunked end is an error, not a clean end.
TEST_F(ApiClientTest, CutStreamIsAnError) {
  ApiClientPtr api = client(fake_.config());
  std::thread cutter([&] {
    EXPECT_TRUE(testing::eventually([&] { return fake_.state()["watches"] != 0; }));
    fake_.control("cut-watches");
  });
  Result<ApiResponse> response = api->stream(
      "/api/v1/namespaces", {{"watch", "true"}, {"timeoutSeconds", "30"}},
      [](std::string_view) { return true; }, seconds(60));
  cutter.join();
  ASSERT_FALSE(response.has_value());
  EXPECT_NE(response.error().message.find("the stream broke"), std::string::npos)
      << response.error().message;
}

// A stop request ends a stream that would otherwise wait for minutes.
TEST_F(ApiClientTest, StopEndsAStream) {
  ApiClientPtr api = client(fake_.config());
  std::stop_source stop;
  std::thread stopper([&] {
    // Once the stream is open (a stop before it would end the request, not the stream).
    EXPECT_TRUE(testing::eventually([&] { return fake_.state()["watches"] != 0; }));
    stop.request_stop();
  });
  const auto began = std::chrono::steady_clock::now();
  Result<ApiResponse> response = api->stream(
      "/api/v1/namespaces", {{"watch", "true"}, {"timeoutSeconds", "300"}},
      [](std::string_view) { return true; }, seconds(400), stop.get_token());
  stopper.join();
  EXPECT_FALSE(response.has_value());
  EXPECT_LT(std::chrono::steady_clock::now() - began, seconds(5));
}

// Requests reuse a kept-alive connection; when the server has closed it meanwhile, the request
// goes out again on a new one.
TEST_F(ApiClientTest, KeptAliveConnections) {
  ApiClientPtr api = client(fake_.config());
  ASSERT_EQ(api->get("/version", {})->status, 200);
  ASSERT_EQ(api->get("/version", {})->status, 200);
  std::vector<int> peers;
  for (const Json& request : fake_.requests()) {
    if (request["path"] == "/version") {
      peers.push_back(request["peer"].get<int>());
    }
  }
  ASSERT_EQ(peers.size(), 2u);
  EXPECT_EQ(peers[0], peers[1]);

  fake_.control("config", {{"idleTimeout", 0.3}});
  ApiClientPtr fresh = client(fake_.config());
  ASSERT_EQ(fresh->get("/version", {})->status, 200);  // on a connection with the short timeout
  int peer = 0;
  for (const Json& request : fake_.requests()) {
    peer = request["path"] == "/version" ? request["peer"].get<int>() : peer;
  }
  // The server's idle timeout passes and it closes the connection, which the client cannot see
  // until it uses it.
  ASSERT_TRUE(testing::eventually([&] {
    const Json closed = fake_.state()["closedPeers"];
    return std::find(closed.begin(), closed.end(), Json(peer)) != closed.end();
  }));
  Result<ApiResponse> after = fresh->get("/version", {});
  ASSERT_TRUE(after.has_value()) << after.error().to_string();
  EXPECT_EQ(after->status, 200);
}

}  // namespace
}  // namespace topoguard::kube
