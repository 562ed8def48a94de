// Runs the components of a process (runtime::Component): starts them in the order they were
// added, answers readiness and metrics for all of them, and stops them in reverse order, so a
// component is started after and stopped before everything it uses.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "topoguard/common/result.h"
#include "topoguard/runtime/component.h"

namespace topoguard::runtime {

class Manager {
 public:
  Manager() = default;
  Manager(const Manager&) = delete;
  Manager& operator=(const Manager&) = delete;

  // Before start() only.
  void add(std::shared_ptr<Component> component);

  // Starts every component in order. When one fails, those already started are stopped in
  // reverse order (without a deadline) and its error is returned, prefixed with its name.
  [[nodiscard]] Status start();

  // The first not-ready reason of the components in order; "" when all are ready. From stop() on,
  // "shutting down". (Not "starting" before start() returns: the last component started may be
  // the one asked, as the webhook server answers /readyz, and it is ready once it serves.)
  [[nodiscard]] std::string not_ready_reason() const;

  // Every component's metrics, in order.
  [[nodiscard]] std::string metrics() const;

  // Stops the started components in reverse order, each by the same `deadline`; false when one
  // of them could not end by it (all are asked to stop all the same). Idempotent.
  bool stop(std::chrono::steady_clock::time_point deadline =
                std::chrono::steady_clock::time_point::max());

 private:
  enum class Phase { kIdle, kRunning, kStopping };

  mutable std::mutex mutex_;  // guards phase_; components_ is fixed once start() is called
  Phase phase_ = Phase::kIdle;
  std::vector<std::shared_ptr<Component>> components_;
};

}  // namespace topoguard::runtime
