// HTTP/1.1 and TLS behaviour of the webhook port's event loop with real clients (curl, openssl
// s_client, a hand-driven TLS connection): pipelining, chunked bodies, Expect: 100-continue,
// HTTP/1.0, errors that close the connection, timeouts, protocol versions, many connections on
// one thread.
#include <atomic>
#include <csignal>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "webhook_server_fixture.h"

namespace topoguard::server {
namespace {

using topoguard::testing::RawTlsConnection;
using topoguard::testing::review_body;
using topoguard::testing::run_command;
using topoguard::testing::write_file;

class HttpProtocolTest : public RawTlsServerTest {
 protected:

  [[nodiscard]] std::string review(const std::string& uid) const {
    return review_body(
        rct("u", Json::array({request("gpu", "gpu.nvidia.com"), request("nic", "dranet.net")})),
        uid);
  }

  // curl the way the API server connects (CA bundle, service name as SNI) plus `arguments`;
  // prints the body and then the HTTP status on its own line.
  [[nodiscard]] topoguard::testing::CommandResult curl(const std::string& arguments) const {
    const std::string port = std::to_string(server_->port());
    return run_command("curl -sS --http1.1 --cacert " + path("ca.pem") +
                       " --resolve topoguard.topoguard.svc:" + port + ":127.0.0.1 " + arguments +
                       " -w '\\n%{http_code}' https://topoguard.topoguard.svc:" + port +
                       "/validate 2>&1");
  }
};

std::string post(const std::string& path, const std::string& body,
                 const std::string& extra_headers = "") {
  return "POST " + path + " HTTP/1.1\r\nHost: topoguard.topoguard.svc\r\n" + extra_headers +
         "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\n\r\n" + body;
}

bool answers(const std::string& response, const std::string& uid) {
  return response.rfind("HTTP/1.1 200 OK\r\n", 0) == 0 &&
         response.find("\"uid\":\"" + uid + "\"") != std::string::npos;
}

// Three requests in one TLS write are answered in order on the same connection.
TEST_F(HttpProtocolTest, PipelinedRequestsAnsweredInOrder) {
  start();
  auto connection = raw();
  ASSERT_TRUE(connection->connected());
  ASSERT_TRUE(connection->send(post("/validate", review("p1")) +
                               "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n" +
                               post("/mutate", review("p2"))));
  EXPECT_TRUE(answers(connection->read_response(), "p1"));
  const std::string health = connection->read_response();
  EXPECT_EQ(health.rfind("HTTP/1.1 200 OK\r\n", 0), 0U) << health;
  EXPECT_NE(health.find("\r\n\r\nok\n"), std::string::npos) << health;
  EXPECT_TRUE(answers(connection->read_response(), "p2"));
}

// Ten small reviews pipelined in one TLS record: more than one turn of the connection on the loop
// (it yields after four answers and resumes with the requests it has already read, with no new
// readiness event), all decided on the loop and answered in order.
TEST_F(HttpProtocolTest, PipelinedReviewsPastOneTurnAreAllAnswered) {
  start();
  auto connection = raw();
  ASSERT_TRUE(connection->connected());
  constexpr int kReviews = 10;
  std::string requests;
  for (int i = 0; i < kReviews; ++i) {
    requests += post("/validate", review("q" + std::to_string(i)));
  }
  ASSERT_LT(requests.size(), 16U * 1024);  // one TLS record: it arrives whole
  ASSERT_TRUE(connection->send(requests));
  for (int i = 0; i < kReviews; ++i) {
    EXPECT_TRUE(answers(connection->read_response(), "q" + std::to_string(i)));
  }
  const std::string text = metrics_text();
  EXPECT_EQ(metric_value(text, "topoguard_admission_decisions_total{thread=\"event_loop\"}"),
            kReviews)
      << text;
}

// A body sent in chunks (Transfer-Encoding: chunked, split across TLS records) is reassembled.
TEST_F(HttpProtocolTest, ChunkedBodyReassembled) {
  start();
  const std::string body = review("chunked");
  const std::size_t half = body.size() / 2;
  auto hex = [](std::size_t n) {
    char text[32];
    std::snprintf(text, sizeof(text), "%zx", n);
    return std::string(text);
  };
  auto connection = raw();
  ASSERT_TRUE(connection->send(
      "POST /validate HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" + hex(half) +
      "\r\n" + body.substr(0, half) + "\r\n"));
  ASSERT_TRUE(connection->send(hex(body.size() - half) + "\r\n" + body.substr(half) +
                               "\r\n0\r\n\r\n"));
  EXPECT_TRUE(answers(connection->read_response(), "chunked"));

  // curl streams a file from stdin the same way.
  write_file(path("review.json"), review("curl-chunked"));
  const auto result = curl("-H 'Transfer-Encoding: chunked' -H 'Content-Type: application/json' "
                           "--data-binary @- < " + path("review.json"));
  EXPECT_NE(result.output.find("\"uid\":\"curl-chunked\""), std::string::npos) << result.output;
  EXPECT_EQ(result.output.substr(result.output.rfind('\n') + 1), "200");
}

// Expect: 100-continue gets the interim response and then the answer; a declared length over
// the limit gets 413 before the body is sent.
TEST_F(HttpProtocolTest, ExpectContinue) {
  options_.body_limit = 64 * 1024;
  start();
  write_file(path("review.json"), review("expect"));
  const auto accepted = curl("-H 'Expect: 100-continue' -H 'Content-Type: application/json' "
                             "--data-binary @" + path("review.json"));
  EXPECT_NE(accepted.output.find("\"uid\":\"expect\""), std::string::npos) << accepted.output;
  EXPECT_EQ(accepted.output.substr(accepted.output.rfind('\n') + 1), "200");

  auto connection = raw();
  ASSERT_TRUE(connection->send(
      "POST /validate HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 1000000\r\n\r\n"));
  const std::string refused = connection->read_response();
  EXPECT_EQ(refused.rfind("HTTP/1.1 413 ", 0), 0U) << refused;
  EXPECT_NE(refused.find("Connection: close"), std::string::npos) << refused;
  EXPECT_NE(refused.find("\"code\":413"), std::string::npos) << refused;
}

// HTTP/1.0 without keep-alive: one answer, then the server closes.
TEST_F(HttpProtocolTest, Http10ClosesAfterTheResponse) {
  start();
  auto connection = raw();
  ASSERT_TRUE(connection->send("GET /readyz HTTP/1.0\r\n\r\n"));
  const std::string response = connection->read_response();
  EXPECT_EQ(response.rfind("HTTP/1.1 200 OK\r\n", 0), 0U) << response;
  EXPECT_NE(response.find("Connection: close"), std::string::npos) << response;
  EXPECT_TRUE(connection->closed_within(5));
}

// Wrong methods get 405 with Allow; malformed HTTP gets a JSON 400 and the connection closes;
// the server keeps serving others.
TEST_F(HttpProtocolTest, MethodAndSyntaxErrors) {
  start();
  auto connection = raw();
  ASSERT_TRUE(connection->send("GET /mutate HTTP/1.1\r\nHost: x\r\n\r\n"));
  const std::string wrong_method = connection->read_response();
  EXPECT_EQ(wrong_method.rfind("HTTP/1.1 405 ", 0), 0U) << wrong_method;
  EXPECT_NE(wrong_method.find("Allow: POST\r\n"), std::string::npos) << wrong_method;
  EXPECT_NE(wrong_method.find("\"code\":405"), std::string::npos) << wrong_method;

  ASSERT_TRUE(connection->send("NOT HTTP AT ALL\r\n\r\n"));
  const std::string malformed = connection->read_response();
  EXPECT_EQ(malformed.rfind("HTTP/1.1 400 ", 0), 0U) << malformed;
  EXPECT_NE(malformed.find("\"code\":400"), std::string::npos) << malformed;
  EXPECT_TRUE(connection->closed_within(5));

  auto other = raw();
  ASSERT_TRUE(other->send(post("/validate", review("after-errors"))));
  EXPECT_TRUE(answers(other->read_response(), "after-errors"));
}

// Request bytes buffered across connections are bounded: past the budget the sender gets 503
// and is closed, while the connection already holding most of the budget completes (a review
// decided on its event loop takes nothing more from the budget).
TEST_F(HttpProtocolTest, BufferedBytesAreBounded) {
  options_.max_buffered_bytes = 20 * 1024;
  start();
  std::string body = review("big");
  body.resize(16'000, ' ');  // trailing whitespace is still one JSON document
  const std::string request = post("/validate", body);
  auto first = raw();
  ASSERT_TRUE(first->send(request.substr(0, 12'000)));
  // The server has read it: the body bytes sent (12,000 less the header) count in the budget.
  ASSERT_TRUE(eventually([&] { return server_->buffered_bytes() >= 11'000; }));
  auto second = raw();
  ASSERT_TRUE(second->send(request.substr(0, 12'000)));
  const std::string refused = second->read_response();
  EXPECT_EQ(refused.rfind("HTTP/1.1 503 ", 0), 0U) << refused;
  EXPECT_NE(refused.find("Connection: close"), std::string::npos) << refused;
  ASSERT_TRUE(first->send(request.substr(12'000)));
  EXPECT_TRUE(answers(first->read_response(), "big"));
}

// Reviews decided off the event loop count in the same budget with what their decision builds
// (24 bytes per body byte): a 20 KB review does not fit a 256 KiB budget (503), an 8 KB one
// with a CEL selector (sent to the pool whatever its size) does, and is decided.
TEST_F(HttpProtocolTest, ReviewsBeingDecidedCountInTheByteBudget) {
  options_.max_buffered_bytes = 256 * 1024;
  start();
  std::string large = review("large");
  large.resize(20'000, ' ');
  auto connection = raw();
  ASSERT_TRUE(connection->send(post("/validate", large)));
  const std::string refused = connection->read_response();
  EXPECT_EQ(refused.rfind("HTTP/1.1 503 ", 0), 0U) << refused;

  Json selector_request = request("gpu", "gpu.nvidia.com");
  selector_request["exactly"]["selectors"] =
      Json::array({{{"cel", {{"expression", "device.driver == 'gpu.nvidia.com'"}}}}});
  std::string with_cel = review_body(
      rct("u", Json::array({selector_request, request("nic", "dranet.net")})), "cel");
  with_cel.resize(8'000, ' ');
  auto other = raw();
  ASSERT_TRUE(other->send(post("/validate", with_cel)));
  EXPECT_TRUE(answers(other->read_response(), "cel"));
}

// A client that stops halfway through its request is disconnected after the read timeout.
TEST_F(HttpProtocolTest, StalledRequestTimesOut) {
  options_.read_timeout = std::chrono::seconds(1);
  start();
  auto connection = raw();
  const std::string request = post("/validate", review("stalled"));
  ASSERT_TRUE(connection->send(request.substr(0, request.size() / 2)));
  EXPECT_TRUE(connection->closed_within(10));
}

// TLS 1.2 and 1.3 are served (ALPN picks http/1.1 over h2); TLS 1.1 and plain HTTP are not.
TEST_F(HttpProtocolTest, TlsVersionsAndAlpn) {
  start();
  const std::string connect = "openssl s_client -connect 127.0.0.1:" +
                              std::to_string(server_->port()) + " -CAfile " + path("ca.pem") +
                              " -servername topoguard.topoguard.svc";
  const auto tls13 = run_command("echo | " + connect + " -tls1_3 -alpn h2,http/1.1 2>&1");
  EXPECT_NE(tls13.output.find("New, TLSv1.3, Cipher is TLS_AES_"), std::string::npos) << tls13.output;
  EXPECT_NE(tls13.output.find("ALPN protocol: http/1.1"), std::string::npos) << tls13.output;
  EXPECT_NE(tls13.output.find("Verify return code: 0 (ok)"), std::string::npos) << tls13.output;
  const auto tls12 = run_command("echo | " + connect + " -tls1_2 2>&1");
  EXPECT_NE(tls12.output.find("New, TLSv1.2, Cipher is ECDHE-"), std::string::npos)
      << tls12.output;
  const auto tls11 = run_command("echo | " + connect + " -tls1_1 2>&1");
  EXPECT_NE(tls11.exit_code, 0) << tls11.output;
  EXPECT_NE(tls11.output.find("alert protocol version"), std::string::npos) << tls11.output;
  EXPECT_NE(tls11.output.find("Cipher is (NONE)"), std::string::npos) << tls11.output;

  const auto plain = run_command("curl -sS -m 5 http://127.0.0.1:" +
                                 std::to_string(server_->port()) + "/healthz 2>&1");
  EXPECT_NE(plain.exit_code, 0) << plain.output;
}

// One event-loop thread serves 128 concurrent keep-alive connections with no error.
TEST_F(HttpProtocolTest, ManyConnectionsOnOneThread) {
  options_.threads = 1;
  start();
  EXPECT_EQ(failed_keep_alive_requests(128, 3), 0);
}

}  // namespace
}  // namespace topoguard::server
