// Client-side rate limit of API requests: a token bucket of `burst` tokens refilled at `qps` per
// second (client-go's default is 5 QPS, burst 10). A request that finds the bucket empty
// reserves the next token and waits for it, so waiters are served in arrival order and the
// long-run rate never exceeds qps. Thread-safe: one bucket is shared by every request to a
// cluster.
#pragma once

#include <chrono>
#include <mutex>
#include <stop_token>

#include "topoguard/kube/clock.h"

namespace topoguard::kube {

struct RateLimit {
  double qps = 5.0;  // <= 0: no limit
  int burst = 10;
};

class TokenBucket {
 public:
  TokenBucket(RateLimit limit, ClockPtr clock);

  // Takes a token and returns how long the caller must wait before using it (zero when one was
  // there).
  [[nodiscard]] std::chrono::nanoseconds reserve();
  // reserve() and the wait; false when `stop` ended the wait.
  bool acquire(std::stop_token stop);

 private:
  const RateLimit limit_;
  const ClockPtr clock_;
  std::mutex mutex_;
  double tokens_;  // may go negative: tokens reserved ahead
  std::chrono::steady_clock::time_point last_;
};

}  // namespace topoguard::kube
