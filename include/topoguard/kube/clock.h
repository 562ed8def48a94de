// Time for the Kubernetes client: the steady clock for intervals, the wall clock for credential
// expiry, and waits that end early when a stop is requested. Injected everywhere the client
// waits (rate limit, Retry-After, backoff, token refresh), so tests run on virtual time and never
// sleep for real. Implementations are thread-safe.
#pragma once

#include <chrono>
#include <memory>
#include <stop_token>

namespace topoguard::kube {

class Clock {
 public:
  virtual ~Clock() = default;

  [[nodiscard]] virtual std::chrono::steady_clock::time_point now() const = 0;
  [[nodiscard]] virtual std::chrono::system_clock::time_point wall_now() const = 0;
  // Waits `duration`, or less when `stop` is requested; false when stopped.
  virtual bool sleep_for(std::chrono::nanoseconds duration, std::stop_token stop) = 0;
};

using ClockPtr = std::shared_ptr<Clock>;

// The process's clocks and real waits.
[[nodiscard]] ClockPtr real_clock();

}  // namespace topoguard::kube
