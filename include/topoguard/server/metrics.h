// The webhook's Prometheus metrics (text exposition format 0.0.4, names prefixed topoguard_),
// written by hand: a few counters, one histogram and gauges. All methods are thread-safe; the
// request path takes one short mutex per request.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>

#include "topoguard/admission/review_endpoint.h"

namespace topoguard::server {

// Histogram upper bounds in seconds: 100 µs .. 10 s.
inline constexpr std::array<double, 16> kLatencyBuckets{
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
    0.05,   0.1,     0.25,   0.5,   1.0,    2.5,   5.0,   10.0};

class Metrics {
 public:
  explicit Metrics(std::string version);

  // One admission request on `endpoint` ("mutate" / "validate"), including 400 and 413.
  void record_review(std::string_view endpoint, const admission::ReviewReply& reply,
                     double seconds);
  // Where a review was decided: on the event loop (up to 16 KiB) or the pool (larger).
  enum class DecisionThread { kEventLoop, kPool };
  void record_decision_thread(DecisionThread thread);
  void record_policy_reload(bool ok);
  void record_certificate_reload(bool ok);
  void set_certificate_not_after(std::int64_t seconds_since_epoch);

  [[nodiscard]] std::string render() const;

 private:
  struct Histogram {
    std::array<std::uint64_t, kLatencyBuckets.size()> buckets{};  // non-cumulative
    std::uint64_t count = 0;
    double sum = 0;
  };
  using RequestKey = std::tuple<std::string, std::string, std::string, std::string>;
  using FindingKey = std::pair<std::string, std::string>;

  const std::string version_;
  mutable std::mutex mutex_;
  std::map<RequestKey, std::uint64_t> requests_;  // endpoint, kind, operation, decision
  std::map<std::string, Histogram> latency_;      // by endpoint
  std::map<FindingKey, std::uint64_t> findings_;  // rule, action
  std::uint64_t patches_dropped_ = 0;
  std::uint64_t feasibility_steps_ = 0;
  std::array<std::uint64_t, 2> feasibility_unknown_{};  // budget ran out, no share
  std::array<std::atomic<std::uint64_t>, 2> decision_threads_{};  // event loop, pool
  std::array<std::uint64_t, 2> policy_reloads_{};       // ok, failed
  std::array<std::uint64_t, 2> certificate_reloads_{};  // ok, failed
  std::int64_t certificate_not_after_ = 0;
};

// Escapes a label value for the text format (backslash, double quote, newline).
[[nodiscard]] std::string escape_label_value(std::string_view value);

}  // namespace topoguard::server
