#include "topoguard/runtime/manager.h"

#include <utility>

namespace topoguard::runtime {

void Manager::add(std::shared_ptr<Component> component) {
  components_.push_back(std::move(component));
}

Status Manager::start() {
  for (std::size_t started = 0; started < components_.size(); ++started) {
    if (Status status = components_[started]->start(); !status) {
      Error error = status.error();
      error.message = components_[started]->name() + ": " + error.message;
      while (started > 0) {
        components_[--started]->stop(std::chrono::steady_clock::time_point::max());
      }
      return error;
    }
  }
  std::lock_guard lock(mutex_);
  phase_ = Phase::kRunning;
  return Ok{};
}

std::string Manager::not_ready_reason() const {
  {
    std::lock_guard lock(mutex_);
    if (phase_ == Phase::kStopping) {
      return "shutting down";
    }
  }
  for (const auto& component : components_) {
    if (std::string reason = component->not_ready_reason(); !reason.empty()) {
      return reason;
    }
  }
  return "";
}

std::string Manager::metrics() const {
  std::string text;
  for (const auto& component : components_) {
    text += component->metrics();
  }
  return text;
}

bool Manager::stop(std::chrono::steady_clock::time_point deadline) {
  {
    std::lock_guard lock(mutex_);
    if (phase_ != Phase::kRunning) {
      return true;
    }
    phase_ = Phase::kStopping;
  }
  bool in_time = true;
  for (auto component = components_.rbegin(); component != components_.rend(); ++component) {
    in_time = (*component)->stop(deadline) && in_time;
  }
  return in_time;
}

}  // namespace topoguard::runtime
