#include "topoguard/kube/backoff.h"

#include <algorithm>
#include <random>
#include <utility>

namespace topoguard::kube {

Backoff::Backoff(BackoffOptions options, ClockPtr clock, std::function<double()> uniform)
    : options_(options),
      clock_(std::move(clock)),
      uniform_(std::move(uniform)),
      base_(options.initial) {
  if (!uniform_) {
    uniform_ = [engine = std::mt19937_64(std::random_device{}())]() mutable {
      return std::uniform_real_distribution<double>(0.0, 1.0)(engine);
    };
  }
}

std::chrono::nanoseconds Backoff::next() {
  const auto now = clock_->now();
  if (started_ && now - last_start_ > options_.reset_after) {
    base_ = options_.initial;
  }
  started_ = true;
  last_start_ = now;
  const std::chrono::nanoseconds current = base_;
  const auto grown = std::chrono::duration<double, std::nano>(base_) * options_.factor;
  base_ = std::min(options_.cap, std::chrono::duration_cast<std::chrono::nanoseconds>(grown));
  if (options_.jitter <= 0) {
    return current;
  }
  const double stretch = 1.0 + options_.jitter * std::clamp(uniform_(), 0.0, 1.0);
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::duration<double, std::nano>(current) * stretch);
}

void Backoff::reset() {
  base_ = options_.initial;
  started_ = false;
}

}  // namespace topoguard::kube
