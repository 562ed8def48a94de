// Boost assertions (debug builds only) go through assertion_failed below, see there.
#define BOOST_ENABLE_ASSERT_DEBUG_HANDLER

#include "topoguard/server/http_request_reader.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>

#include <boost/beast/core/buffers_range.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

namespace boost {

// Beast 1.81 asserts `n >= 5` in parse_chunk_header when a body whose first chunk is the last
// one gets its trailers in a later read; the code after the assert handles that case (the
// assert was corrected upstream in boostorg/beast#2861; found by tests/fuzz/http_request_fuzz).
// Every other Boost assertion aborts as assert() would.
void assertion_failed(char const* expr, char const* function, char const* file, long line) {
  if (std::string_view(expr) == "n >= 5" &&
      std::string_view(function).find("parse_chunk_header") != std::string_view::npos) {
    return;
  }
  std::fprintf(stderr, "%s:%ld: %s: Assertion `%s' failed.\n", file, line, function, expr);
  std::abort();
}

void assertion_failed_msg(char const* expr, char const* message, char const* function,
                          char const* file, long line) {
  std::fprintf(stderr, "%s:%ld: %s: Assertion `%s' failed: %s\n", file, line, function, expr,
               message);
  std::abort();
}

}  // namespace boost

namespace topoguard::server {
namespace {

namespace http = boost::beast::http;

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

std::string lowered(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), lower);
  return out;
}

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return lower(x) == lower(y);
         });
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') {
    return c - '0';
  }
  c = lower(c);
  if (c >= 'a' && c <= 'f') {
    return c - 'a' + 10;
  }
  return -1;
}

std::string percent_decode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+') {
      out += ' ';
    } else if (text[i] == '%' && i + 2 < text.size() && hex_value(text[i + 1]) >= 0 &&
               hex_value(text[i + 2]) >= 0) {
      out += static_cast<char>(hex_value(text[i + 1]) * 16 + hex_value(text[i + 2]));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

std::string_view to_view(boost::beast::string_view text) { return {text.data(), text.size()}; }

// "METHOD TARGET HTTP/d.d" with a version Beast refuses (anything but 1.0 and 1.1).
bool names_another_http_version(std::string_view input) {
  const std::string_view line = input.substr(0, input.find_first_of("\r\n"));
  const std::size_t version = line.rfind(" HTTP/");
  if (version == std::string_view::npos || line.find(' ') == version) {
    return false;
  }
  const std::string_view digits = line.substr(version + 6);
  return digits.size() == 3 && digits[0] >= '0' && digits[0] <= '9' && digits[1] == '.' &&
         digits[2] >= '0' && digits[2] <= '9' && digits != "1.0" && digits != "1.1";
}

}  // namespace

struct HttpRequestReader::Beast {
  // A Beast parser reads one message; the next request gets a fresh one.
  std::optional<http::request_parser<http::string_body>> parser;
  // Tells the reader how much chunk data follows a chunk-size line (Beast keeps a reference).
  std::function<void(std::uint64_t, boost::beast::string_view, boost::beast::error_code&)>
      on_chunk_header;
};

const std::string* HttpRequest::header(std::string_view lower_name) const {
  for (const auto& [name, value] : headers) {
    if (name == lower_name) {
      return &value;
    }
  }
  return nullptr;
}

std::optional<std::string> HttpRequest::query_param(std::string_view name) const {
  std::string_view rest = query;
  while (!rest.empty()) {
    const std::size_t amp = rest.find('&');
    const std::string_view pair = rest.substr(0, amp);
    const std::size_t eq = pair.find('=');
    if (percent_decode(pair.substr(0, eq)) == name) {
      return eq == std::string_view::npos ? std::string() : percent_decode(pair.substr(eq + 1));
    }
    if (amp == std::string_view::npos) {
      break;
    }
    rest.remove_prefix(amp + 1);
  }
  return std::nullopt;
}

HttpRequestReader::HttpRequestReader(HttpParseLimits limits)
    : limits_(limits), beast_(std::make_unique<Beast>()) {
  beast_->on_chunk_header = [this](std::uint64_t size, boost::beast::string_view,
                                   boost::beast::error_code&) { chunk_data_left_ = size; };
}

HttpRequestReader::~HttpRequestReader() = default;

void HttpRequestReader::reset() {
  beast_->parser.reset();
  stage_ = Stage::kBlankLines;
  consumed_ = 0;
  blank_bytes_ = 0;
  head_scanned_ = 0;
  request_bytes_ = 0;
  first_chunk_ = true;
  chunk_data_left_ = 0;
  expect_continue_ = false;
  request_ = HttpRequest{};
  error_status_ = 0;
  error_message_.clear();
}

bool HttpRequestReader::awaits_continue() const { return expect_continue_ && stage_ == Stage::kBody; }

std::size_t HttpRequestReader::held_bytes() const {
  return stage_ == Stage::kBody ? beast_->parser->get().body().size() : 0;
}

HttpParseState HttpRequestReader::fail(int status, std::string message) {
  stage_ = Stage::kFailed;
  error_status_ = status;
  error_message_ = std::move(message);
  return HttpParseState::kError;
}

HttpParseState HttpRequestReader::parse(std::string_view input) {
  consumed_ = 0;
  if (stage_ == Stage::kFailed) {
    return HttpParseState::kError;
  }
  if (stage_ == Stage::kDone) {
    return HttpParseState::kComplete;
  }
  if (stage_ == Stage::kBlankLines) {
    // RFC 9112 section 2.2: empty lines before the request line are ignored, but they are
    // header bytes all the same (else a client could send them forever).
    while (consumed_ < input.size() && (input[consumed_] == '\r' || input[consumed_] == '\n')) {
      ++consumed_;
    }
    blank_bytes_ += consumed_;
    if (blank_bytes_ >= limits_.max_header_bytes) {
      return fail(431, "request line and headers exceed " +
                           std::to_string(limits_.max_header_bytes) + " bytes");
    }
    if (consumed_ == input.size()) {
      return HttpParseState::kIncomplete;
    }
    auto& parser = beast_->parser.emplace();
    parser.header_limit(std::numeric_limits<std::uint32_t>::max());  // read_head bounds it
    parser.body_limit(static_cast<std::uint64_t>(limits_.max_body_bytes));
    parser.eager(false);  // stop after the header: it is checked before any body is read
    parser.on_chunk_header(beast_->on_chunk_header);
    stage_ = Stage::kHead;
  }
  if (stage_ == Stage::kHead) {
    const HttpParseState head = read_head(input.substr(consumed_));
    if (head != HttpParseState::kComplete || stage_ == Stage::kDone) {
      return head;
    }
  }
  return read_body(input.substr(consumed_));
}

// Where the header ends (after its empty line, CRLF or bare LF), searching only bytes not
// searched before; npos while it has not arrived.
std::size_t HttpRequestReader::find_head_end(std::string_view input) {
  std::size_t at = head_scanned_;
  while (at < input.size()) {
    const std::size_t newline = input.find('\n', at);
    if (newline == std::string_view::npos) {
      at = input.size();
      break;
    }
    if (newline + 1 < input.size() && input[newline + 1] == '\n') {
      return newline + 2;
    }
    if (newline + 2 < input.size() && input[newline + 1] == '\r' && input[newline + 2] == '\n') {
      return newline + 3;
    }
    if (newline + 2 >= input.size()) {
      at = newline;  // the next bytes decide; look at this newline again
      break;
    }
    at = newline + 1;
  }
  head_scanned_ = at;
  return std::string_view::npos;
}

// kComplete here means "header done and accepted". Beast parses a header line by line when it
// is handed one in a single piece, but waits for all of it once it has asked for more: so
// that the outcome does not depend on how the bytes arrive, it is handed the whole header,
// up to its empty line (a bare-LF header is then refused by Beast at once, not by a timeout).
HttpParseState HttpRequestReader::read_head(std::string_view input) {
  const std::size_t limit = limits_.max_header_bytes - blank_bytes_;
  const std::size_t head_end = find_head_end(input.substr(0, std::min(input.size(), limit)));
  if (head_end == std::string_view::npos) {
    if (input.size() >= limit) {
      return fail(431, "request line and headers exceed " +
                           std::to_string(limits_.max_header_bytes) + " bytes");
    }
    return HttpParseState::kIncomplete;
  }
  auto& parser = *beast_->parser;
  boost::beast::error_code error;
  const std::size_t taken = parser.put(boost::asio::const_buffer(input.data(), head_end), error);
  consumed_ += taken;
  request_bytes_ += taken;
  if (error == http::error::need_more || (!error && !parser.is_header_done())) {
    return fail(400, "malformed header");
  }
  if (error) {
    return refuse(error, input.substr(0, head_end));
  }
  const HttpParseState checked = check_head(input.substr(0, taken));
  if (checked != HttpParseState::kComplete) {
    return checked;
  }
  if (parser.is_done()) {
    stage_ = Stage::kDone;
    return HttpParseState::kComplete;
  }
  parser.eager(true);
  stage_ = Stage::kBody;
  return HttpParseState::kComplete;
}

// Where the chunked body's next unit ends: the CRLF closing the previous chunk's data (Beast
// reads it with the next line), the chunk-size line, and for the last chunk its trailers up to
// the empty line. npos while it has not all arrived.
std::size_t HttpRequestReader::chunk_unit_end(std::string_view input) const {
  const std::size_t start = first_chunk_ ? 0 : 2;
  const std::size_t newline = input.size() < start ? std::string_view::npos : input.find('\n', start);
  if (newline == std::string_view::npos) {
    return std::string_view::npos;
  }
  std::size_t digits = start;
  while (digits < newline && hex_value(input[digits]) >= 0) {
    ++digits;
  }
  const std::string_view size = input.substr(start, digits - start);
  const bool last = !size.empty() && size.find_first_not_of('0') == std::string_view::npos;
  if (!last) {
    return newline + 1;
  }
  const std::size_t empty_line = input.find("\r\n\r\n", newline == 0 ? 0 : newline - 1);
  return empty_line == std::string_view::npos ? empty_line : empty_line + 4;
}

// A chunked body is handed to Beast one unit at a time (a chunk-size line, or chunk data, or
// the last chunk with its trailers), each only once complete: Beast 1.81 would otherwise read a
// chunk extension past its line end and count a chunk against the body limit once per retry,
// and the outcome would depend on how the bytes arrive. A unit longer than max_header_bytes, or
// framing that outgrows its allowance, is refused.
HttpParseState HttpRequestReader::read_body(std::string_view input) {
  auto& parser = *beast_->parser;
  // Chunk framing may not cost much more than the body itself (tiny chunks, long extensions).
  const std::size_t framing_limit = limits_.max_header_bytes + 2 * limits_.max_body_bytes;
  const bool chunked = parser.chunked();
  std::size_t at = 0;
  while (!parser.is_done() && at < input.size()) {
    const std::string_view rest = input.substr(at);
    const bool in_data = chunk_data_left_ > 0;
    std::size_t window = rest.size();
    if (chunked && in_data) {
      window = static_cast<std::size_t>(std::min<std::uint64_t>(window, chunk_data_left_));
    } else if (chunked) {
      const std::size_t unit = chunk_unit_end(rest);
      if (unit == std::string_view::npos ? rest.size() > limits_.max_header_bytes
                                         : unit > limits_.max_header_bytes) {
        consumed_ += at;
        return fail(400, "chunk-size line or trailers exceed " +
                             std::to_string(limits_.max_header_bytes) + " bytes");
      }
      if (unit == std::string_view::npos) {
        break;
      }
      window = unit;
    }
    boost::beast::error_code error;
    const std::size_t taken = parser.put(boost::asio::const_buffer(rest.data(), window), error);
    at += taken;
    request_bytes_ += taken;
    if (chunked && in_data) {
      chunk_data_left_ -= taken;
    } else if (chunked && taken > 0) {
      first_chunk_ = false;
    }
    if (error && error != http::error::need_more) {
      consumed_ += at;
      return refuse(error, rest);
    }
    if (request_bytes_ > framing_limit) {
      consumed_ += at;
      return fail(413, "chunked body exceeds the limit of " +
                           std::to_string(limits_.max_body_bytes) + " bytes");
    }
    if (error) {  // need_more
      if (chunked && !in_data) {
        consumed_ += at;
        return fail(400, "malformed chunk-size line or trailers");
      }
      break;
    }
    if (taken == 0) {
      break;
    }
  }
  consumed_ += at;
  if (parser.is_done()) {
    request_.body = std::move(parser.get().body());
    stage_ = Stage::kDone;
    return HttpParseState::kComplete;
  }
  return HttpParseState::kIncomplete;
}

HttpParseState HttpRequestReader::refuse(const boost::beast::error_code& error,
                                         std::string_view input) {
  if (request_.path.empty()) {
    take_target();  // known once Beast has read the request line; answers and logs name it
  }
  if (error == http::error::header_limit) {
    return fail(431, "request line and headers exceed " +
                         std::to_string(limits_.max_header_bytes) + " bytes");
  }
  if (error == http::error::body_limit) {
    return fail(413, "body exceeds the limit of " + std::to_string(limits_.max_body_bytes) +
                         " bytes");
  }
  if (error == http::error::bad_version && names_another_http_version(input)) {
    return fail(505, "HTTP version is not supported; use HTTP/1.1");
  }
  return fail(400, "malformed request: " + error.message());
}

void HttpRequestReader::take_target() {
  std::string_view target = to_view(beast_->parser->get().target());
  // Absolute form (a client talking to a proxy): keep only the path and query.
  for (const std::string_view scheme : {"http://", "https://"}) {
    if (target.substr(0, scheme.size()) == scheme) {
      const std::size_t slash = target.find('/', scheme.size());
      target = slash == std::string_view::npos ? std::string_view("/") : target.substr(slash);
    }
  }
  target = target.substr(0, target.find('#'));
  const std::size_t question = target.find('?');
  request_.path = std::string(target.substr(0, question));
  request_.query =
      question == std::string_view::npos ? std::string() : std::string(target.substr(question + 1));
}

HttpParseState HttpRequestReader::check_head(std::string_view head) {
  const auto& message = beast_->parser->get();
  take_target();
  request_.method = std::string(to_view(message.method_string()));
  request_.minor_version = message.version() % 10;
  if (request_.path.empty() || (request_.path.front() != '/' && request_.path != "*")) {
    return fail(400, "malformed request target");
  }
  // Beast joins folded lines; a proxy in front might not, so folding is refused outright.
  for (std::size_t newline = head.find('\n'); newline != std::string_view::npos;
       newline = head.find('\n', newline + 1)) {
    if (newline + 1 < head.size() && (head[newline + 1] == ' ' || head[newline + 1] == '\t')) {
      return fail(400, "obsolete line folding in headers");
    }
  }
  std::size_t count = 0;
  std::size_t transfer_encodings = 0;
  for (const auto& field : message) {
    if (++count > limits_.max_headers) {
      return fail(431, "more than " + std::to_string(limits_.max_headers) + " headers");
    }
    const std::string_view value = to_view(field.value());
    request_.headers.emplace_back(lowered(to_view(field.name_string())), std::string(value));
    if (field.name() == http::field::transfer_encoding) {
      // Beast treats an unknown coding as "no body"; what follows would then be read as the
      // next request, so anything but one plain "chunked" is refused.
      if (++transfer_encodings > 1 || !equals_ignoring_case(value, "chunked")) {
        return fail(501, "transfer coding \"" + std::string(value) +
                             "\" is not supported; use chunked");
      }
    } else if (field.name() == http::field::expect) {
      if (!equals_ignoring_case(value, "100-continue")) {
        return fail(417, "expectation \"" + std::string(value) + "\" is not supported");
      }
      expect_continue_ = true;
    }
  }
  request_.keep_alive = beast_->parser->keep_alive();
  return HttpParseState::kComplete;
}

}  // namespace topoguard::server
