// Incremental HTTP/1.1 request parsing for the webhook's event loop. The connection keeps its
// unconsumed bytes in one buffer that only grows at the end; parse() is called each time bytes
// arrive, remembers how far it got (headers, chunks) and never rescans a body. Strict where
// request smuggling lives (Content-Length vs Transfer-Encoding, obs-fold, bad lengths), lenient
// where real clients differ (bare LF line ends, empty lines before the request line).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace topoguard::server {

struct HttpRequest {
  std::string method;
  std::string path;   // origin-form path, without the query
  std::string query;  // after '?', still percent-encoded
  int minor_version = 1;
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
  std::string body;
  bool keep_alive = true;

  // The first header of that (lower-case) name, nullptr when absent.
  [[nodiscard]] const std::string* header(std::string_view lower_name) const;
  // The percent-decoded value of the first `name=` query parameter, nullopt when absent.
  [[nodiscard]] std::optional<std::string> query_param(std::string_view name) const;
};

struct HttpParseLimits {
  std::size_t max_header_bytes = 64 * 1024;  // request line + headers
  std::size_t max_headers = 128;
  std::size_t max_body_bytes = 4 * 1024 * 1024;
};

enum class HttpParseState { kIncomplete, kComplete, kError };

class HttpRequestParser {
 public:
  explicit HttpRequestParser(HttpParseLimits limits = {});

  // Parses the request at the start of `input`, which must be the same bytes as the previous
  // call plus any that arrived since. After kComplete, request() and consumed() describe it;
  // after kError, error_status() and error_message() do. Call reset() before the next request.
  HttpParseState parse(std::string_view input);

  // True while the headers are complete, asked for "Expect: 100-continue" and the body is
  // still missing: the client waits for an interim response before sending it.
  [[nodiscard]] bool awaits_continue() const;
  // The path of the request being parsed once its request line is known, else empty.
  [[nodiscard]] const std::string& path() const { return request_.path; }

  [[nodiscard]] HttpRequest& request() { return request_; }
  [[nodiscard]] std::size_t consumed() const { return offset_; }
  [[nodiscard]] int error_status() const { return error_status_; }
  [[nodiscard]] const std::string& error_message() const { return error_message_; }

  void reset();

 private:
  enum class Stage { kHead, kFixedBody, kChunkSize, kChunkData, kTrailers, kDone, kFailed };

  HttpParseState fail(int status, std::string message);
  HttpParseState parse_head(std::string_view input);
  HttpParseState parse_chunks(std::string_view input);
  bool parse_request_line(std::string_view line);
  bool parse_header_line(std::string_view line);
  HttpParseState finish_head();

  HttpParseLimits limits_;
  Stage stage_ = Stage::kHead;
  std::size_t offset_ = 0;       // bytes of input used so far
  std::size_t scanned_ = 0;      // head bytes already searched for the end of the headers
  std::size_t body_length_ = 0;  // Content-Length, or the size of the current chunk
  bool expect_continue_ = false;
  HttpRequest request_;
  int error_status_ = 0;
  std::string error_message_;
};

}  // namespace topoguard::server
