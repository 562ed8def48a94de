// Incremental HTTP/1.1 request reading for the event loop, on Boost.Beast's request_parser (a
// well-kept, widely fuzzed parser) instead of hand-written parsing. The connection hands over the
// bytes it holds; the reader takes what it can (a whole header at once, body bytes as they
// come) and says how many it took, so the connection keeps only the rest. On top of Beast it
// adds what the webhook needs: blank lines before the request line count against the header
// limit, a header count limit, Transfer-Encoding other than "chunked" refused (501),
// obs-fold refused, Expect other than 100-continue refused (417), origin/absolute-form targets
// only, chunk framing bounded, and statuses for every refusal (400, 413, 417, 431, 501, 505).
// Beast itself refuses NUL, bare CR and bare LF in header values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace topoguard::http {

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
  std::size_t max_header_bytes = 64 * 1024;  // blank lines, request line and headers
  std::size_t max_headers = 128;
  std::size_t max_body_bytes = 4 * 1024 * 1024;
};

enum class HttpParseState { kIncomplete, kComplete, kError };

class HttpRequestReader {
 public:
  explicit HttpRequestReader(HttpParseLimits limits = {});
  ~HttpRequestReader();
  HttpRequestReader(const HttpRequestReader&) = delete;
  HttpRequestReader& operator=(const HttpRequestReader&) = delete;

  // Reads from `input`, the bytes received and not yet taken by an earlier call. consumed()
  // then says how many bytes of `input` this call took: the caller drops them and passes the
  // rest, with what arrives next, to the following call. After kComplete, request() is the
  // request; after kError, error_status() and error_message() say why. reset() before the
  // next request.
  HttpParseState parse(std::string_view input);
  [[nodiscard]] std::size_t consumed() const { return consumed_; }

  // True while the headers are complete, asked for "Expect: 100-continue" and the body is
  // still missing: the client waits for an interim response before sending it.
  [[nodiscard]] bool awaits_continue() const;
  // Body bytes the reader holds for the request in progress (they count against the server's
  // buffered-bytes budget like unread bytes do).
  [[nodiscard]] std::size_t held_bytes() const;
  // The path of the request being read once its request line is known, else empty.
  [[nodiscard]] const std::string& path() const { return request_.path; }

  [[nodiscard]] HttpRequest& request() { return request_; }
  [[nodiscard]] int error_status() const { return error_status_; }
  [[nodiscard]] const std::string& error_message() const { return error_message_; }

  void reset();

 private:
  struct Beast;
  enum class Stage { kBlankLines, kHead, kBody, kDone, kFailed };

  HttpParseState fail(int status, std::string message);
  std::size_t find_head_end(std::string_view input);
  HttpParseState read_head(std::string_view input);
  HttpParseState read_body(std::string_view input);
  [[nodiscard]] std::size_t chunk_unit_end(std::string_view input) const;
  HttpParseState check_head(std::string_view head);
  HttpParseState refuse(std::pair<int, std::string> refusal);  // status and reason
  void take_target();

  HttpParseLimits limits_;
  std::unique_ptr<Beast> beast_;
  Stage stage_ = Stage::kBlankLines;
  std::size_t consumed_ = 0;       // bytes of the last input taken
  std::size_t blank_bytes_ = 0;    // blank lines before the request line
  std::size_t head_scanned_ = 0;   // header bytes already searched for its empty line
  std::size_t request_bytes_ = 0;  // bytes of this request taken so far (framing included)
  bool first_chunk_ = true;           // no chunk-size line read yet
  std::uint64_t chunk_data_left_ = 0;  // of the current chunk
  bool expect_continue_ = false;
  HttpRequest request_;
  int error_status_ = 0;
  std::string error_message_;
};

}  // namespace topoguard::http
