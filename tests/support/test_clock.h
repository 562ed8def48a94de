// A Clock for the Kubernetes client's tests: waits return at once and move the clock forward by
// what was asked, and every wait is recorded. With `real_time` the clock also moves with real time
// (for tests that talk to a real server, whose exchanges take real time); a wait then still
// sleeps a moment for real, so that loops waiting on a server do not spin.
#pragma once

#include <algorithm>
#include <chrono>
#include <mutex>
#include <stop_token>
#include <thread>
#include <vector>

#include "topoguard/kube/clock.h"

namespace topoguard::testing {

// A duration in milliseconds, for comparing waits with figures.
inline double milliseconds_of(std::chrono::nanoseconds duration) {
  return std::chrono::duration<double, std::milli>(duration).count();
}

class TestClock final : public kube::Clock {
 public:
  explicit TestClock(bool real_time = false)
      : real_time_(real_time),
        steady_start_(std::chrono::steady_clock::now()),
        wall_start_(std::chrono::system_clock::now()) {}

  // Clock
  [[nodiscard]] std::chrono::steady_clock::time_point now() const override {
    std::lock_guard lock(mutex_);
    return steady_start_ + elapsed() + offset_;
  }
  [[nodiscard]] std::chrono::system_clock::time_point wall_now() const override {
    std::lock_guard lock(mutex_);
    return wall_start_ +
           std::chrono::duration_cast<std::chrono::system_clock::duration>(elapsed() + offset_);
  }
  bool sleep_for(std::chrono::nanoseconds duration, std::stop_token stop) override {
    {
      std::lock_guard lock(mutex_);
      sleeps_.push_back(duration);
      offset_ += duration;
    }
    if (real_time_) {
      std::this_thread::sleep_for(
          std::min<std::chrono::nanoseconds>(duration, std::chrono::milliseconds(5)));
    }
    return !stop.stop_requested();
  }

  // Moves the clock forward without a wait being recorded.
  void advance(std::chrono::nanoseconds duration) {
    std::lock_guard lock(mutex_);
    offset_ += duration;
  }
  [[nodiscard]] std::vector<std::chrono::nanoseconds> sleeps() const {
    std::lock_guard lock(mutex_);
    return sleeps_;
  }
  void clear_sleeps() {
    std::lock_guard lock(mutex_);
    sleeps_.clear();
  }

 private:
  [[nodiscard]] std::chrono::nanoseconds elapsed() const {
    return real_time_ ? std::chrono::steady_clock::now() - steady_start_
                      : std::chrono::nanoseconds::zero();
  }

  const bool real_time_;
  const std::chrono::steady_clock::time_point steady_start_;
  const std::chrono::system_clock::time_point wall_start_;
  mutable std::mutex mutex_;
  std::chrono::nanoseconds offset_{0};
  std::vector<std::chrono::nanoseconds> sleeps_;
};

}  // namespace topoguard::testing
