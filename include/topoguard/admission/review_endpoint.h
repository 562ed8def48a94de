// The webhook's request path without a transport: body bytes in, HTTP status + body out. Used by
// the HTTPS server (wrapped in its metrics and logging decorators) and by `topoguard review`, so
// both answer through the same code. Decorators have the same shape as the endpoint they wrap.
// Endpoints are immutable after construction and safe to call concurrently.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "topoguard/admission/admission_handler.h"
#include "topoguard/policy/policy_set.h"

namespace topoguard::admission {

// Identity of the reviewed object, for logs and metrics (never the body).
struct RequestSummary {
  std::string uid;
  std::string kind;
  std::string namespace_name;
  std::string name;
  std::string operation;
  bool dry_run = false;
};

struct ReviewCall {
  std::string_view body;
  // From the API server's ?timeout= parameter: a decision ready after it is replaced by the
  // failure-mode answer (the API server has given up on us by then anyway).
  std::optional<std::chrono::steady_clock::time_point> deadline;
  // Called once the body has been read as an AdmissionReview, before the decision: a server
  // that must answer on time without the decision learns the uid to answer for.
  std::function<void(const RequestSummary&)> on_read = nullptr;
};

struct ReviewReply {
  int http_status = 200;
  std::string body;        // an AdmissionReview when http_status is 200, else an error body
  std::string http_error;  // the reason of a non-200 status
  RequestSummary request;
  ReviewOutcome outcome;
};

using ReviewEndpoint = std::function<ReviewReply(const ReviewCall&)>;
// Returns the current policy snapshot; nullptr when none is loaded.
using PolicySource = std::function<policy::PolicySetPtr()>;

// parse -> handle_admission -> serialise. Malformed bodies get 400 with a JSON error body.
[[nodiscard]] ReviewEndpoint make_review_endpoint(PolicySource policies, HandlerOptions options);

// Answers 413 with a JSON error body when the body is larger than `limit` bytes.
[[nodiscard]] ReviewEndpoint with_body_limit(std::size_t limit, ReviewEndpoint next);

// Parses the API server's ?timeout= value ("10s", "1m30s", "500ms"); nullopt when malformed.
[[nodiscard]] std::optional<std::chrono::milliseconds> parse_timeout(std::string_view text);

}  // namespace topoguard::admission
