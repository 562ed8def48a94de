#include "topoguard/runtime/background_loop.h"

#include <utility>

namespace topoguard::runtime {

BackgroundLoop::~BackgroundLoop() { stop(); }  // also waits out a step that outlived a deadline

void BackgroundLoop::start(Step step, Finish finish) {
  step_ = std::move(step);
  finish_ = std::move(finish);
  thread_ = std::jthread([this](std::stop_token stop) { run(stop); });
}

bool BackgroundLoop::stop(std::chrono::steady_clock::time_point deadline) {
  if (!thread_.joinable()) {
    return true;
  }
  thread_.request_stop();  // also wakes wake_'s wait: it is given the stop token
  {
    std::unique_lock lock(mutex_);
    const auto finished = [this] { return finished_; };
    if (deadline == std::chrono::steady_clock::time_point::max()) {
      finished_changed_.wait(lock, finished);
    } else if (!finished_changed_.wait_until(lock, deadline, finished)) {
      return false;
    }
  }
  thread_.join();
  return true;
}

void BackgroundLoop::poke() {
  {
    std::lock_guard lock(mutex_);
    poked_ = true;
  }
  wake_.notify_all();
}

void BackgroundLoop::run(const std::stop_token& stop) {
  while (!stop.stop_requested()) {
    bool poked = false;
    {
      std::lock_guard lock(mutex_);
      poked = std::exchange(poked_, false);
    }
    const std::chrono::nanoseconds wait = step_(poked, stop);
    std::unique_lock lock(mutex_);
    wake_.wait_for(lock, stop, wait, [this] { return poked_; });
  }
  if (finish_) {
    finish_();
  }
  {
    std::lock_guard lock(mutex_);
    finished_ = true;
  }
  finished_changed_.notify_all();
}

}  // namespace topoguard::runtime
