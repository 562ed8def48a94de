#include "topoguard/http/http_request_reader.h"

#include <gtest/gtest.h>

#include "note_name.h"

namespace topoguard::http {
namespace {

// Feeds bytes the way the event loop does: what the reader did not take stays in front of the
// bytes that arrive next.
class Feeder {
 public:
  explicit Feeder(HttpRequestReader& reader) : reader_(reader) {}
  HttpParseState feed(std::string_view bytes) {
    pending_.append(bytes);
    const HttpParseState state = reader_.parse(pending_);
    consumed_ += reader_.consumed();
    pending_.erase(0, reader_.consumed());
    return state;
  }
  [[nodiscard]] std::size_t consumed() const { return consumed_; }

  // Feeds `input` one byte at a time: true when only the last byte completes the request.
  bool completes_only_at_the_last_byte(std::string_view input) {
    for (std::size_t at = 0; at + 1 < input.size(); ++at) {
      if (feed(input.substr(at, 1)) != HttpParseState::kIncomplete) {
        return false;
      }
    }
    return feed(input.substr(input.size() - 1)) == HttpParseState::kComplete;
  }

 private:
  HttpRequestReader& reader_;
  std::string pending_;
  std::size_t consumed_ = 0;
};

HttpParseLimits small_limits() {
  HttpParseLimits limits;
  limits.max_header_bytes = 256;
  limits.max_headers = 8;
  limits.max_body_bytes = 64;
  return limits;
}

struct CompleteCase {
  std::string_view note;
  std::string input;
  std::string method;
  std::string path;
  std::string query;
  std::string body;
  bool keep_alive;
  std::size_t consumed;  // bytes of input the request used
};

class CompleteRequestTest : public ::testing::TestWithParam<CompleteCase> {};

// Whole requests in one piece: method, path, query, body, keep-alive and the bytes consumed.
TEST_P(CompleteRequestTest, Parses) {
  const CompleteCase& c = GetParam();
  HttpRequestReader parser(small_limits());
  ASSERT_EQ(parser.parse(c.input), HttpParseState::kComplete) << parser.error_message();
  HttpRequest& request = parser.request();
  EXPECT_EQ(request.method, c.method);
  EXPECT_EQ(request.path, c.path);
  EXPECT_EQ(request.query, c.query);
  EXPECT_EQ(request.body, c.body);
  EXPECT_EQ(request.keep_alive, c.keep_alive);
  EXPECT_EQ(parser.consumed(), c.consumed);
}

const std::string kPost = "POST /mutate?timeout=10s HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello";

INSTANTIATE_TEST_SUITE_P(
    Requests, CompleteRequestTest,
    ::testing::Values(
        CompleteCase{"ContentLength", kPost, "POST", "/mutate", "timeout=10s", "hello", true,
                     kPost.size()},
        CompleteCase{"PipelinedLeavesTheNextRequest", kPost + "GET / HTTP/1.1\r\n\r\n", "POST",
                     "/mutate", "timeout=10s", "hello", true, kPost.size()},
        CompleteCase{"NoBody", "GET /healthz HTTP/1.1\r\n\r\n", "GET", "/healthz", "", "", true,
                     25},
        CompleteCase{"EmptyLinesBeforeRequestLine", "\r\n\r\nGET / HTTP/1.1\r\n\r\n", "GET", "/",
                     "", "", true, 22},
        CompleteCase{"ConnectionClose", "GET / HTTP/1.1\r\nConnection: Close\r\n\r\n", "GET",
                     "/", "", "", false, 37},
        CompleteCase{"Http10ClosesByDefault", "GET / HTTP/1.0\r\n\r\n", "GET", "/", "", "",
                     false, 18},
        CompleteCase{"Http10KeepAlive", "GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
                     "GET", "/", "", "", true, 42},
        CompleteCase{"AbsoluteFormTarget", "GET https://topoguard.svc:443/validate?a=b HTTP/1.1\r\n\r\n",
                     "GET", "/validate", "a=b", "", true, 55},
        CompleteCase{"Chunked",
                     "POST /v HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
                     "5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nTrailer: x\r\n\r\n",
                     "POST", "/v", "", "hello world", true, 92},
        CompleteCase{"SameContentLengthTwice",
                     "POST / HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok", "POST",
                     "/", "", "ok", true, 59}),
    topoguard::testing::NoteName());

struct ErrorCase {
  std::string_view note;
  std::string input;
  int status;
};

class RequestErrorTest : public ::testing::TestWithParam<ErrorCase> {};

// Malformed or oversized requests get the status the connection answers with before closing.
TEST_P(RequestErrorTest, Rejects) {
  const ErrorCase& c = GetParam();
  HttpRequestReader parser(small_limits());
  ASSERT_EQ(parser.parse(c.input), HttpParseState::kError);
  EXPECT_EQ(parser.error_status(), c.status) << parser.error_message();
  EXPECT_FALSE(parser.error_message().empty());
  // The error is sticky.
  EXPECT_EQ(parser.parse(c.input), HttpParseState::kError);
}

INSTANTIATE_TEST_SUITE_P(
    Requests, RequestErrorTest,
    ::testing::Values(
        ErrorCase{"GarbageRequestLine", "hello\r\n\r\n", 400},
        ErrorCase{"MissingVersion", "GET /\r\n\r\n", 400},
        ErrorCase{"Http2Preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 505},
        ErrorCase{"RelativeTarget", "GET mutate HTTP/1.1\r\n\r\n", 400},
        ErrorCase{"HeaderWithoutColon", "GET / HTTP/1.1\r\nHost x\r\n\r\n", 400},
        ErrorCase{"SpaceBeforeColon", "GET / HTTP/1.1\r\nHost : x\r\n\r\n", 400},
        ErrorCase{"ObsoleteFolding", "GET / HTTP/1.1\r\nA: b\r\n c\r\n\r\n", 400},
        ErrorCase{"NegativeLength", "POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400},
        ErrorCase{"ConflictingLengths",
                  "POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", 400},
        ErrorCase{"LengthAndChunked",
                  "POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
                  400},
        ErrorCase{"UnknownTransferCoding", "POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n",
                  501},
        ErrorCase{"UnknownExpectation", "POST / HTTP/1.1\r\nExpect: magic\r\n\r\n", 417},
        ErrorCase{"BodyOverLimit", "POST / HTTP/1.1\r\nContent-Length: 65\r\n\r\n", 413},
        ErrorCase{"ChunkedOverLimit",
                  "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n41\r\n", 413},
        ErrorCase{"LongChunkExtension",
                  "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1;" +
                      std::string(1100, 'x') + "\r\na\r\n0\r\n\r\n",
                  400},
        ErrorCase{"BadChunkSize", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
                  400},
        ErrorCase{"ChunkWithoutCrlf",
                  "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabXY\r\n", 400},
        ErrorCase{"BareLineFeeds", "GET /readyz HTTP/1.1\nHost: x\n\n", 400},
        ErrorCase{"NulInHeaderValue", std::string("GET / HTTP/1.1\r\nA: b\0c\r\n\r\n", 26), 400},
        ErrorCase{"BareCrInHeaderValue", "GET / HTTP/1.1\r\nA: b\rc\r\n\r\n", 400},
        ErrorCase{"TwoTransferEncodings",
                  "POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n",
                  501},
        ErrorCase{"BlankLinesCountAsHeaderBytes", std::string(300, '\n') + "GET / HTTP/1.1\r\n\r\n",
                  431},
        ErrorCase{"LongTrailers",
                  "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nT: " +
                      std::string(300, 't') + "\r\n\r\n",
                  400},
        ErrorCase{"HeadersOverLimit", "GET / HTTP/1.1\r\nA: " + std::string(300, 'a'), 431},
        ErrorCase{"TooManyHeaders",
                  "GET / HTTP/1.1\r\nA: 1\r\nB: 1\r\nC: 1\r\nD: 1\r\nE: 1\r\nF: 1\r\nG: 1\r\n"
                  "H: 1\r\nI: 1\r\n\r\n",
                  431}),
    topoguard::testing::NoteName());

// Bytes arriving one at a time give the same request as bytes arriving at once.
TEST(HttpRequestReaderTest, ByteByByteEqualsWhole) {
  const std::string_view input =
      "POST /mutate HTTP/1.1\r\nTransfer-Encoding: chunked\r\nX: y\r\n\r\n"
      "3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n";
  HttpRequestReader parser(small_limits());
  Feeder feeder(parser);
  ASSERT_TRUE(feeder.completes_only_at_the_last_byte(input)) << parser.error_message();
  EXPECT_EQ(parser.request().body, "abcde");
  EXPECT_EQ(feeder.consumed(), input.size());
  ASSERT_NE(parser.request().header("x"), nullptr);
  EXPECT_EQ(*parser.request().header("x"), "y");
}

// Empty lines before the request line may arrive in separate reads.
TEST(HttpRequestReaderTest, LeadingEmptyLinesAcrossReads) {
  const std::string_view input = "\r\n\r\nGET /healthz HTTP/1.1\r\n\r\n";
  HttpRequestReader parser(small_limits());
  Feeder feeder(parser);
  ASSERT_TRUE(feeder.completes_only_at_the_last_byte(input)) << parser.error_message();
  EXPECT_EQ(parser.request().path, "/healthz");
}

// "Expect: 100-continue" is reported while the body is missing, and not once it is there.
TEST(HttpRequestReaderTest, ExpectContinueUntilTheBodyArrives) {
  const std::string head = "POST /v HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n";
  HttpRequestReader parser(small_limits());
  Feeder feeder(parser);
  EXPECT_EQ(feeder.feed(head.substr(0, 10)), HttpParseState::kIncomplete);
  EXPECT_FALSE(parser.awaits_continue());
  EXPECT_EQ(feeder.feed(head.substr(10)), HttpParseState::kIncomplete);
  EXPECT_TRUE(parser.awaits_continue());
  EXPECT_EQ(parser.path(), "/v");
  EXPECT_EQ(parser.held_bytes(), 0U);
  EXPECT_EQ(feeder.feed("bo"), HttpParseState::kIncomplete);
  EXPECT_EQ(parser.held_bytes(), 2U);
  EXPECT_EQ(feeder.feed("dy"), HttpParseState::kComplete);
  EXPECT_EQ(parser.request().body, "body");
  EXPECT_FALSE(parser.awaits_continue());
}

// reset() makes the parser ready for the next request on the connection.
TEST(HttpRequestReaderTest, ResetParsesTheNextRequest) {
  HttpRequestReader parser(small_limits());
  ASSERT_EQ(parser.parse("GET /a HTTP/1.1\r\n\r\n"), HttpParseState::kComplete);
  parser.reset();
  ASSERT_EQ(parser.parse("GET /b HTTP/1.1\r\n\r\n"), HttpParseState::kComplete);
  EXPECT_EQ(parser.request().path, "/b");
  EXPECT_TRUE(parser.request().headers.empty());
}

struct QueryCase {
  std::string_view note;
  std::string query;
  std::string name;
  std::optional<std::string> value;
};

class QueryParamTest : public ::testing::TestWithParam<QueryCase> {};

// ?timeout= as the API server sends it, percent-decoded; the first occurrence wins.
TEST_P(QueryParamTest, Finds) {
  const QueryCase& c = GetParam();
  HttpRequest request;
  request.query = c.query;
  EXPECT_EQ(request.query_param(c.name), c.value);
}

INSTANTIATE_TEST_SUITE_P(
    Queries, QueryParamTest,
    ::testing::Values(QueryCase{"Plain", "timeout=10s", "timeout", "10s"},
                      QueryCase{"AmongOthers", "a=1&timeout=1m30s&b=2", "timeout", "1m30s"},
                      QueryCase{"PercentEncoded", "timeout=1%6D", "timeout", "1m"},
                      QueryCase{"FirstWins", "timeout=1s&timeout=2s", "timeout", "1s"},
                      QueryCase{"NoValue", "timeout", "timeout", ""},
                      QueryCase{"BrokenEscapeKept", "timeout=5%", "timeout", "5%"},
                      QueryCase{"Absent", "a=1", "timeout", std::nullopt},
                      QueryCase{"Empty", "", "timeout", std::nullopt}),
    topoguard::testing::NoteName());

}  // namespace
}  // namespace topoguard::http
