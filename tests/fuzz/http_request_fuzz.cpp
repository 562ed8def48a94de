// libFuzzer target for the event loop's HTTP/1.1 request reader (Boost.Beast's parser plus the
// webhook's own checks): arbitrary bytes, fed once whole and once in pieces (sizes taken from the
// input's first byte) as they arrive from a socket, keeping what the reader has not taken.
// Besides crashes and sanitizer reports it aborts when the two disagree (state, request, bytes
// consumed) or when a result breaks the reader's contract (consumed within the input, body
// within the limit, error statuses 4xx/5xx with a message).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "topoguard/http/http_request_reader.h"

namespace {

using topoguard::http::HttpParseLimits;
using topoguard::http::HttpParseState;
using topoguard::http::HttpRequestReader;

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

struct Outcome {
  HttpParseState state = HttpParseState::kIncomplete;
  std::size_t consumed = 0;
};

// Feeds `input` `step` bytes at a time, as the event loop does: the bytes the reader did not
// take stay in front of the ones that arrive next.
Outcome feed(HttpRequestReader& reader, std::string_view input, std::size_t step) {
  Outcome outcome;
  std::string pending;
  std::size_t given = 0;
  while (outcome.state == HttpParseState::kIncomplete && given < input.size()) {
    const std::size_t more = std::min(step, input.size() - given);
    pending.append(input.substr(given, more));
    given += more;
    outcome.state = reader.parse(pending);
    outcome.consumed += reader.consumed();
    pending.erase(0, reader.consumed());
  }
  return outcome;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) {
    return 0;
  }
  const std::size_t step = 1 + data[0] % 64;
  const std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);

  HttpRequestReader whole(limits());
  HttpRequestReader pieces(limits());
  const Outcome at_once = feed(whole, input, input.size());
  const Outcome stepped = feed(pieces, input, step);
  if (at_once.state != stepped.state) {
    contract_broken("whole and piecewise parsing disagree on the state");
  }
  if (at_once.state == HttpParseState::kComplete) {
    if (at_once.consumed > input.size() || at_once.consumed != stepped.consumed) {
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
  } else if (at_once.state == HttpParseState::kError) {
    if (whole.error_status() != pieces.error_status() || whole.error_status() < 400 ||
        whole.error_status() > 599 || whole.error_message().empty()) {
      contract_broken("error status out of range, different, or without a message");
    }
  }
  return 0;
}
