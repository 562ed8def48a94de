#include "topoguard/kube/clock.h"

#include <condition_variable>
#include <mutex>

namespace topoguard::kube {

namespace {

class RealClock final : public Clock {
 public:
  // Clock
  [[nodiscard]] std::chrono::steady_clock::time_point now() const override {
    return std::chrono::steady_clock::now();
  }
  [[nodiscard]] std::chrono::system_clock::time_point wall_now() const override {
    return std::chrono::system_clock::now();
  }
  bool sleep_for(std::chrono::nanoseconds duration, std::stop_token stop) override {
    std::mutex mutex;
    std::condition_variable_any wakeup;
    std::unique_lock lock(mutex);
    wakeup.wait_for(lock, stop, duration, [] { return false; });
    return !stop.stop_requested();
  }
};

}  // namespace

ClockPtr real_clock() {
  static const ClockPtr clock = std::make_shared<RealClock>();
  return clock;
}

}  // namespace topoguard::kube
