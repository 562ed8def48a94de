// A loop on a thread of its own, as the long-running parts of `serve` run theirs: a step, then a
// wait of the step's choosing that poke() or stop() cut short. The watcher of certificate and
// policy files, the self-managed TLS controller and the background report writer are such loops.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <stop_token>
#include <thread>

namespace topoguard::runtime {

class BackgroundLoop {
 public:
  // One turn of the loop: `poked` says poke() was called since the last turn. Returns how long
  // to wait before the next turn. Long steps should watch `stop`.
  using Step = std::function<std::chrono::nanoseconds(bool poked, std::stop_token stop)>;
  // Runs on the loop's thread once it leaves the loop (a Lease given up, say).
  using Finish = std::function<void()>;

  BackgroundLoop() = default;
  ~BackgroundLoop();  // stop() without a deadline
  BackgroundLoop(const BackgroundLoop&) = delete;
  BackgroundLoop& operator=(const BackgroundLoop&) = delete;

  // Starts the thread; the first turn runs at once. Once only.
  void start(Step step, Finish finish = nullptr);

  // Asks the loop to leave and waits for its thread until `deadline`: true when it has ended
  // (then it is joined) or never started, false when a step still runs at the deadline (the
  // destructor waits for it). Idempotent.
  bool stop(std::chrono::steady_clock::time_point deadline =
                std::chrono::steady_clock::time_point::max());

  // Runs the next turn now instead of after the wait.
  void poke();

 private:
  void run(const std::stop_token& stop);

  Step step_;
  Finish finish_;
  std::mutex mutex_;
  std::condition_variable_any wake_;
  bool poked_ = false;    // guarded by mutex_
  bool finished_ = false;  // guarded by mutex_
  std::condition_variable finished_changed_;
  std::jthread thread_;
};

}  // namespace topoguard::runtime
