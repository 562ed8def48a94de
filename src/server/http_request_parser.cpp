#include "topoguard/server/http_request_parser.h"

#include <algorithm>
#include <cstring>

namespace topoguard::server {
namespace {

constexpr std::size_t kMaxChunkSizeLine = 1024;
constexpr std::size_t kKeptBodyCapacity = 64 * 1024;

bool is_token_char(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
    return true;
  }
  return c != '\0' && std::strchr("!#$%&'*+-.^_`|~", c) != nullptr;
}

bool is_token(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), is_token_char);
}

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

std::string lowered(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), lower);
  return out;
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) {
    text.remove_prefix(1);
  }
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) {
    text.remove_suffix(1);
  }
  return text;
}

std::string_view without_cr(std::string_view line) {
  if (!line.empty() && line.back() == '\r') {
    line.remove_suffix(1);
  }
  return line;
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

// Decimal Content-Length: digits only, no sign, at most 18 digits (no overflow).
std::optional<std::size_t> parse_length(std::string_view text) {
  if (text.empty() || text.size() > 18) {
    return std::nullopt;
  }
  std::size_t value = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') {
      return std::nullopt;
    }
    value = value * 10 + static_cast<std::size_t>(c - '0');
  }
  return value;
}

// Hexadecimal chunk size, at most 15 digits (no overflow).
std::optional<std::size_t> parse_chunk_size(std::string_view text) {
  if (text.empty() || text.size() > 15) {
    return std::nullopt;
  }
  std::size_t value = 0;
  for (const char c : text) {
    const int digit = hex_value(c);
    if (digit < 0) {
      return std::nullopt;
    }
    value = value * 16 + static_cast<std::size_t>(digit);
  }
  return value;
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

// Calls `visit(token)` for each comma-separated, trimmed, lower-cased list element.
template <typename Visit>
void for_each_list_token(std::string_view list, Visit visit) {
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    const std::string_view item = trim(list.substr(0, comma));
    if (!item.empty()) {
      visit(lowered(item));
    }
    if (comma == std::string_view::npos) {
      break;
    }
    list.remove_prefix(comma + 1);
  }
}

}  // namespace

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

HttpRequestParser::HttpRequestParser(HttpParseLimits limits) : limits_(limits) {}

void HttpRequestParser::reset() {
  stage_ = Stage::kHead;
  offset_ = 0;
  scanned_ = 0;
  body_length_ = 0;
  expect_continue_ = false;
  // Cleared, not replaced: the next request on the connection reuses the body's capacity,
  // unless it is large (an idle connection should not keep megabytes).
  request_.method.clear();
  request_.path.clear();
  request_.query.clear();
  request_.minor_version = 1;
  request_.headers.clear();
  request_.body.clear();
  if (request_.body.capacity() > kKeptBodyCapacity) {
    request_.body.shrink_to_fit();
  }
  request_.keep_alive = true;
  error_status_ = 0;
  error_message_.clear();
}

bool HttpRequestParser::awaits_continue() const {
  return expect_continue_ && stage_ != Stage::kHead && stage_ != Stage::kDone &&
         stage_ != Stage::kFailed;
}

HttpParseState HttpRequestParser::fail(int status, std::string message) {
  stage_ = Stage::kFailed;
  error_status_ = status;
  error_message_ = std::move(message);
  return HttpParseState::kError;
}

HttpParseState HttpRequestParser::parse(std::string_view input) {
  if (stage_ == Stage::kFailed) {
    return HttpParseState::kError;
  }
  if (stage_ == Stage::kDone) {
    return HttpParseState::kComplete;
  }
  if (stage_ == Stage::kHead) {
    const HttpParseState head = parse_head(input);
    if (head != HttpParseState::kComplete) {
      return head;
    }
  }
  if (stage_ == Stage::kFixedBody) {
    if (input.size() - offset_ < body_length_) {
      return HttpParseState::kIncomplete;
    }
    request_.body.assign(input.substr(offset_, body_length_));
    offset_ += body_length_;
    stage_ = Stage::kDone;
    return HttpParseState::kComplete;
  }
  return parse_chunks(input);
}

// Finds the blank line that ends the headers (searching only bytes not searched before), then
// parses the request line and the header lines. kComplete here means "headers done".
HttpParseState HttpRequestParser::parse_head(std::string_view input) {
  // RFC 9112 section 2.2: ignore empty lines received before the request line (possibly over
  // several calls: nothing else has been seen while scanned_ has not passed offset_).
  if (scanned_ <= offset_) {
    while (offset_ < input.size() && (input[offset_] == '\r' || input[offset_] == '\n')) {
      ++offset_;
    }
    scanned_ = offset_;
  }
  std::size_t head_end = std::string_view::npos;
  std::size_t at = scanned_;
  while (at < input.size()) {
    const void* found = std::memchr(input.data() + at, '\n', input.size() - at);
    if (found == nullptr) {
      at = input.size();
      break;
    }
    const std::size_t newline = static_cast<std::size_t>(static_cast<const char*>(found) - input.data());
    if (newline + 1 < input.size() && input[newline + 1] == '\n') {
      head_end = newline + 2;
      break;
    }
    if (newline + 2 < input.size() && input[newline + 1] == '\r' && input[newline + 2] == '\n') {
      head_end = newline + 3;
      break;
    }
    if (newline + 2 >= input.size()) {
      at = newline;  // the next bytes decide; look at this newline again
      break;
    }
    at = newline + 1;
  }
  scanned_ = std::max(scanned_, at);
  if (head_end == std::string_view::npos) {
    if (input.size() - offset_ > limits_.max_header_bytes) {
      return fail(431, "request line and headers exceed " +
                           std::to_string(limits_.max_header_bytes) + " bytes");
    }
    return HttpParseState::kIncomplete;
  }
  if (head_end - offset_ > limits_.max_header_bytes) {
    return fail(431, "request line and headers exceed " +
                         std::to_string(limits_.max_header_bytes) + " bytes");
  }

  std::string_view head = input.substr(offset_, head_end - offset_);
  bool first = true;
  while (!head.empty()) {
    const std::size_t newline = head.find('\n');
    const std::string_view line = without_cr(head.substr(0, newline));
    head.remove_prefix(newline == std::string_view::npos ? head.size() : newline + 1);
    if (line.empty()) {
      break;
    }
    if (first ? !parse_request_line(line) : !parse_header_line(line)) {
      return HttpParseState::kError;
    }
    first = false;
  }
  offset_ = head_end;
  return finish_head();
}

bool HttpRequestParser::parse_request_line(std::string_view line) {
  const std::size_t first_space = line.find(' ');
  const std::size_t second_space =
      first_space == std::string_view::npos ? first_space : line.find(' ', first_space + 1);
  if (second_space == std::string_view::npos) {
    fail(400, "malformed request line");
    return false;
  }
  const std::string_view method = line.substr(0, first_space);
  std::string_view target = line.substr(first_space + 1, second_space - first_space - 1);
  const std::string_view version = line.substr(second_space + 1);
  if (!is_token(method) || target.empty()) {
    fail(400, "malformed request line");
    return false;
  }
  if (version == "HTTP/1.1") {
    request_.minor_version = 1;
  } else if (version == "HTTP/1.0") {
    request_.minor_version = 0;
  } else if (version.substr(0, 5) == "HTTP/") {
    fail(505, "HTTP version " + std::string(version.substr(5)) + " is not supported; use HTTP/1.1");
    return false;
  } else {
    fail(400, "malformed request line");
    return false;
  }
  // Absolute form (a client talking to a proxy): keep only the path and query.
  for (const std::string_view scheme : {"http://", "https://"}) {
    if (target.substr(0, scheme.size()) == scheme) {
      const std::size_t slash = target.find('/', scheme.size());
      target = slash == std::string_view::npos ? std::string_view("/") : target.substr(slash);
    }
  }
  if (target.front() != '/' && target != "*") {
    fail(400, "malformed request target");
    return false;
  }
  target = target.substr(0, target.find('#'));
  const std::size_t question = target.find('?');
  request_.method = std::string(method);
  request_.path = std::string(target.substr(0, question));
  request_.query = question == std::string_view::npos ? std::string()
                                                      : std::string(target.substr(question + 1));
  return true;
}

bool HttpRequestParser::parse_header_line(std::string_view line) {
  if (line.front() == ' ' || line.front() == '\t') {
    fail(400, "obsolete line folding in headers");
    return false;
  }
  const std::size_t colon = line.find(':');
  if (colon == std::string_view::npos || !is_token(line.substr(0, colon))) {
    fail(400, "malformed header line");
    return false;
  }
  if (request_.headers.size() >= limits_.max_headers) {
    fail(431, "more than " + std::to_string(limits_.max_headers) + " headers");
    return false;
  }
  request_.headers.emplace_back(lowered(line.substr(0, colon)),
                                std::string(trim(line.substr(colon + 1))));
  return true;
}

HttpParseState HttpRequestParser::finish_head() {
  std::optional<std::size_t> content_length;
  bool chunked = false;
  bool close = false;
  bool keep_alive = false;
  for (const auto& [name, value] : request_.headers) {
    if (name == "content-length") {
      const std::optional<std::size_t> length = parse_length(value);
      if (!length) {
        return fail(400, "invalid Content-Length \"" + value + "\"");
      }
      if (content_length && *content_length != *length) {
        return fail(400, "conflicting Content-Length headers");
      }
      content_length = length;
    } else if (name == "transfer-encoding") {
      if (lowered(value) != "chunked" || chunked) {
        return fail(501, "transfer coding \"" + value + "\" is not supported; use chunked");
      }
      chunked = true;
    } else if (name == "connection") {
      for_each_list_token(value, [&](const std::string& token) {
        close = close || token == "close";
        keep_alive = keep_alive || token == "keep-alive";
      });
    } else if (name == "expect") {
      if (lowered(value) != "100-continue") {
        return fail(417, "expectation \"" + value + "\" is not supported");
      }
      expect_continue_ = true;
    }
  }
  if (chunked && content_length) {
    return fail(400, "both Content-Length and Transfer-Encoding are set");
  }
  request_.keep_alive = !close && (request_.minor_version >= 1 || keep_alive);
  if (content_length && *content_length > limits_.max_body_bytes) {
    return fail(413, "body of " + std::to_string(*content_length) + " bytes exceeds the limit of " +
                         std::to_string(limits_.max_body_bytes) + " bytes");
  }
  body_length_ = content_length.value_or(0);
  stage_ = chunked ? Stage::kChunkSize : Stage::kFixedBody;
  return HttpParseState::kComplete;
}

HttpParseState HttpRequestParser::parse_chunks(std::string_view input) {
  // Chunk framing may not cost more than the body itself (tiny chunks with long extensions).
  const std::size_t framing_limit = limits_.max_header_bytes + 2 * limits_.max_body_bytes;
  while (true) {
    if (offset_ > framing_limit) {
      return fail(413, "chunked body exceeds the limit of " +
                           std::to_string(limits_.max_body_bytes) + " bytes");
    }
    // Line-based stages: where the current line ends, or the end of the input so far. A line
    // is judged too long by the same bound whether or not its end has arrived yet.
    const std::size_t newline =
        stage_ == Stage::kChunkData ? std::string_view::npos : input.find('\n', offset_);
    const std::size_t line_end = newline == std::string_view::npos ? input.size() : newline;
    switch (stage_) {
      case Stage::kChunkSize: {
        if (line_end - offset_ > kMaxChunkSizeLine) {
          return fail(400, "chunk size line too long");
        }
        if (newline == std::string_view::npos) {
          return HttpParseState::kIncomplete;
        }
        const std::string_view line = without_cr(input.substr(offset_, newline - offset_));
        const std::optional<std::size_t> size = parse_chunk_size(trim(line.substr(0, line.find(';'))));
        if (!size) {
          return fail(400, "invalid chunk size \"" + std::string(line.substr(0, 32)) + "\"");
        }
        offset_ = newline + 1;
        if (*size == 0) {
          stage_ = Stage::kTrailers;
          break;
        }
        if (request_.body.size() + *size > limits_.max_body_bytes) {
          return fail(413, "chunked body exceeds the limit of " +
                               std::to_string(limits_.max_body_bytes) + " bytes");
        }
        body_length_ = *size;
        stage_ = Stage::kChunkData;
        break;
      }
      case Stage::kChunkData: {
        const std::size_t after = offset_ + body_length_;
        if (input.size() <= after) {
          return HttpParseState::kIncomplete;
        }
        std::size_t next = 0;
        if (input[after] == '\n') {
          next = after + 1;
        } else if (input[after] == '\r') {
          if (input.size() <= after + 1) {
            return HttpParseState::kIncomplete;
          }
          if (input[after + 1] != '\n') {
            return fail(400, "chunk data not followed by CRLF");
          }
          next = after + 2;
        } else {
          return fail(400, "chunk data not followed by CRLF");
        }
        request_.body.append(input.substr(offset_, body_length_));
        offset_ = next;
        stage_ = Stage::kChunkSize;
        break;
      }
      case Stage::kTrailers: {
        if (line_end - offset_ > limits_.max_header_bytes) {
          return fail(431, "trailer line too long");
        }
        if (newline == std::string_view::npos) {
          return HttpParseState::kIncomplete;
        }
        const bool blank = without_cr(input.substr(offset_, newline - offset_)).empty();
        offset_ = newline + 1;  // trailer fields are read and ignored
        if (blank) {
          stage_ = Stage::kDone;
          return HttpParseState::kComplete;
        }
        break;
      }
      default:
        return fail(500, "parser in an unexpected state");
    }
  }
}

}  // namespace topoguard::server
