// The webhook's request path without a transport: body bytes in, HTTP status + body out. Used by
// the HTTPS server (wrapped in its metrics and logging decorators) and by `topoguard review`, so
// both answer through the same code. Decorators have the same shape as the endpoint they wrap.
// Endpoints are immutable after construction and safe to call concurrently.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "topoguard/admission/admission_handler.h"
#include "topoguard/admission/admission_review.h"
#include "topoguard/admission/feasibility_lane.h"
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

struct ReviewReply {
  int http_status = 200;
  std::string body;        // an AdmissionReview when http_status is 200, else an error body
  std::string http_error;  // the reason of a non-200 status
  RequestSummary request;
  ReviewOutcome outcome;
};

// The one deadline of a review (from the API server's ?timeout=) and the one answer it gets:
// the decision when it is ready in time, else the failure-mode answer. A server that must
// answer by the deadline from another thread than the deciding one shares this with it;
// whichever side settles first gives the answer, and the deciding side's reply (what metrics
// and the request log record) is always the answer the client got. Thread-safe.
class ReviewDeadline {
 public:
  ReviewDeadline(std::chrono::steady_clock::time_point at, FailureMode failure_mode)
      : at_(at), failure_mode_(failure_mode) {}

  [[nodiscard]] std::chrono::steady_clock::time_point at() const { return at_; }
  // The deciding side, once the body is read: whom a failure-mode answer is for.
  void read(const RequestSummary& request);
  // The deciding side, with its reply: that reply when it is first and in time, else the
  // failure-mode answer (the one already given, if the other side settled first).
  [[nodiscard]] ReviewReply settle(ReviewReply decided);
  // The answering side, at the deadline: the failure-mode answer to send, or nullopt when the
  // decision settled first (its answer is on its way).
  [[nodiscard]] std::optional<ReviewReply> fall_back();
  // The failure-mode answer has been given: deciding would be wasted work.
  [[nodiscard]] bool fell_back() const;

 private:
  enum class State { kOpen, kDecided, kFellBack };
  void fall_back_locked();

  const std::chrono::steady_clock::time_point at_;
  const FailureMode failure_mode_;
  mutable std::mutex mutex_;
  State state_ = State::kOpen;       // guarded by mutex_
  bool read_ = false;                // guarded by mutex_
  RequestSummary request_;           // guarded by mutex_
  ReviewReply fallback_;             // guarded by mutex_; set in kFellBack
};

struct ReviewCall {
  std::string_view body;
  // nullptr: no deadline (the review CLI).
  std::shared_ptr<ReviewDeadline> deadline;
  // Below cel::kRequestCostBudget, a first try (HandlerOptions::cel_budget): a review it cannot
  // decide comes back with outcome.needs_full_budget set and the deadline not settled, to be
  // decided again from `body` with the full budget.
  std::uint64_t cel_budget = cel::kRequestCostBudget;
};

using ReviewEndpoint = std::function<ReviewReply(const ReviewCall&)>;
// Returns the current policy snapshot; nullptr when none is loaded.
using PolicySource = std::function<policy::PolicySetPtr()>;

// What the decision knows of the cluster besides the object: DeviceClasses, claims, templates and
// the cluster state (a watch cache's snapshot), kept alive by the pointer; nullptr when nothing
// current is to be had (no cache, not synced yet, stale): the object is then judged alone, and
// what needs the cluster is unknown.
using InventorySource = std::function<std::shared_ptr<const engine::Inventory>()>;

// parse -> handle_admission -> serialise. Malformed bodies get 400 with a JSON error body.
// Without `inventory`, every object is judged alone (admission_inventory()). With `lane`, each
// review of a claim or template checked against the cluster gets the feasibility steps its
// requester's share allows (none: feasibility unknown, the verdict given all the same);
// without it, options.feasibility_steps.
[[nodiscard]] ReviewEndpoint make_review_endpoint(PolicySource policies, HandlerOptions options,
                                                  InventorySource inventory = nullptr,
                                                  std::shared_ptr<FeasibilityLane> lane = nullptr);

// Answers 413 with a JSON error body when the body is larger than `limit` bytes (for callers
// without an HTTP reader that enforces the limit, such as `topoguard review`).
[[nodiscard]] ReviewEndpoint with_body_limit(std::size_t limit, ReviewEndpoint next);

// Parses the API server's ?timeout= value ("10s", "1m30s", "500ms"); nullopt when malformed.
[[nodiscard]] std::optional<std::chrono::milliseconds> parse_timeout(std::string_view text);

}  // namespace topoguard::admission
