#include "topoguard/kube/rate_limiter.h"

#include <algorithm>
#include <utility>

namespace topoguard::kube {

TokenBucket::TokenBucket(RateLimit limit, ClockPtr clock)
    : limit_(limit),
      clock_(std::move(clock)),
      tokens_(static_cast<double>(std::max(limit.burst, 1))),
      last_(clock_->now()) {}

std::chrono::nanoseconds TokenBucket::reserve() {
  if (limit_.qps <= 0) {
    return std::chrono::nanoseconds::zero();
  }
  std::lock_guard lock(mutex_);
  const auto now = clock_->now();
  if (now > last_) {
    const double elapsed = std::chrono::duration<double>(now - last_).count();
    tokens_ =
        std::min(static_cast<double>(std::max(limit_.burst, 1)), tokens_ + elapsed * limit_.qps);
    last_ = now;
  }
  tokens_ -= 1.0;
  if (tokens_ >= 0) {
    return std::chrono::nanoseconds::zero();
  }
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::duration<double>(-tokens_ / limit_.qps));
}

bool TokenBucket::acquire(std::stop_token stop) {
  const auto wait = reserve();
  if (wait <= std::chrono::nanoseconds::zero()) {
    return !stop.stop_requested();
  }
  return clock_->sleep_for(wait, stop);
}

}  // namespace topoguard::kube
