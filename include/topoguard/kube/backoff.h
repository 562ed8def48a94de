// The reflector's wait between failed attempts, as client-go's: the base starts at 800 ms and
// doubles up to 30 s; each wait is the base stretched by a random jitter factor in
// [1, 1 + jitter) (jitter 1.0: up to twice the base, so reflectors that failed together do not
// retry together); the base goes back to 800 ms when the previous wait started longer ago than
// the reset period (2 min), i.e. after a healthy stretch. Not thread-safe: one per reflector.
#pragma once

#include <chrono>
#include <functional>

#include "topoguard/kube/clock.h"

namespace topoguard::kube {

struct BackoffOptions {
  std::chrono::nanoseconds initial = std::chrono::milliseconds(800);
  std::chrono::nanoseconds cap = std::chrono::seconds(30);
  double factor = 2.0;
  double jitter = 1.0;
  std::chrono::nanoseconds reset_after = std::chrono::minutes(2);
};

class Backoff {
 public:
  // `uniform` returns values in [0, 1); nullptr: a random generator seeded per instance.
  Backoff(BackoffOptions options, ClockPtr clock, std::function<double()> uniform = nullptr);

  // The next wait (and starts it: the reset period counts from now).
  [[nodiscard]] std::chrono::nanoseconds next();
  // The base goes back to its initial value.
  void reset();

 private:
  BackoffOptions options_;
  ClockPtr clock_;
  std::function<double()> uniform_;
  std::chrono::nanoseconds base_;
  std::chrono::steady_clock::time_point last_start_;
  bool started_ = false;
};

}  // namespace topoguard::kube
