// libFuzzer target for the webhook port's HTTP/1.1 request parser: arbitrary bytes, fed once
// whole and once in pieces (sizes taken from the input's first byte), as they arrive from a
// socket. Besides crashes and sanitizer reports it aborts when the two disagree (state, request,
// bytes consumed) or when a result breaks the parser's contract (consumed within the input,
// body within the limit, error statuses 4xx/5xx with a message).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "topoguard/server/http_request_parser.h"

namespace {

using topoguard::server::HttpParseLimits;
using topoguard::server::HttpParseState;
using topoguard::server::HttpRequestParser;

[[noreturn]] void contract_broken(const char* what) {
  std::fprintf(stderr, "http_request_fuzz: contract broken: %s\n", what);
  std::abort();
}

HttpParseLimits limits() {
  HttpParseLimits small;
  small.max_header_bytes = 2048;
  small.max_headers = 16;
  small.max_body_bytes = 4096;
  return small;
}

// Parses `input` revealing `step` more bytes each call; returns the final state.
HttpParseState parse_in_steps(HttpRequestParser& parser, std::string_view input, std::size_t step) {
  HttpParseState state = HttpParseState::kIncomplete;
  for (std::size_t size = step; state == HttpParseState::kIncomplete; size += step) {
    state = parser.parse(input.substr(0, std::min(size, input.size())));
    if (size >= input.size()) {
      break;
    }
  }
  return state;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) {
    return 0;
  }
  const std::size_t step = 1 + data[0] % 64;
  const std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);

  HttpRequestParser whole(limits());
  HttpRequestParser pieces(limits());
  const HttpParseState at_once = whole.parse(input);
  const HttpParseState stepped = parse_in_steps(pieces, input, step);
  if (at_once != stepped) {
    contract_broken("whole and piecewise parsing disagree on the state");
  }
  if (at_once == HttpParseState::kComplete) {
    if (whole.consumed() > input.size() || whole.consumed() != pieces.consumed()) {
      contract_broken("consumed bytes differ or exceed the input");
    }
    if (whole.request().body != pieces.request().body ||
        whole.request().path != pieces.request().path ||
        whole.request().headers != pieces.request().headers ||
        whole.request().keep_alive != pieces.request().keep_alive) {
      contract_broken("whole and piecewise parsing built different requests");
    }
    if (whole.request().body.size() > limits().max_body_bytes) {
      contract_broken("body over the limit accepted");
    }
  } else if (at_once == HttpParseState::kError) {
    if (whole.error_status() != pieces.error_status() || whole.error_status() < 400 ||
        whole.error_status() > 599 || whole.error_message().empty()) {
      contract_broken("error status out of range, different, or without a message");
    }
  }
  return 0;
}
