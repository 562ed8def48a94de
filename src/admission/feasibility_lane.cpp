#include "topoguard/admission/feasibility_lane.h"

#include <algorithm>
#include <utility>

namespace topoguard::admission {

std::string requester_key(std::string_view username, std::string_view namespace_name) {
  return username.empty() ? "namespace:" + std::string(namespace_name)
                          : "user:" + std::string(username);
}

FeasibilityLane::Ticket::Ticket(Ticket&& other) noexcept
    : lane_(std::exchange(other.lane_, nullptr)),
      requester_(std::move(other.requester_)),
      steps_(std::exchange(other.steps_, 0)),
      spent_(std::exchange(other.spent_, 0)) {}

FeasibilityLane::Ticket& FeasibilityLane::Ticket::operator=(Ticket&& other) noexcept {
  if (this != &other) {
    release();
    lane_ = std::exchange(other.lane_, nullptr);
    requester_ = std::move(other.requester_);
    steps_ = std::exchange(other.steps_, 0);
    spent_ = std::exchange(other.spent_, 0);
  }
  return *this;
}

FeasibilityLane::Ticket::~Ticket() { release(); }

void FeasibilityLane::Ticket::release() {
  if (lane_ != nullptr) {
    lane_->leave(requester_, steps_ - std::min(spent_, steps_));
    lane_ = nullptr;
  }
}

FeasibilityLane::FeasibilityLane(FeasibilityLaneOptions options)
    : options_(options),
      burst_steps_(options.burst_reviews * static_cast<double>(options.steps_per_review)),
      refill_steps_per_second_(options.refill_reviews_per_second *
                               static_cast<double>(options.steps_per_review)),
      share_steps_(options.share_reviews * static_cast<double>(options.steps_per_review)) {}

void FeasibilityLane::refill(Requester& requester, Clock::time_point now) const {
  if (now <= requester.refilled) {
    return;
  }
  const double seconds = std::chrono::duration<double>(now - requester.refilled).count();
  requester.tokens = std::min(burst_steps_, requester.tokens + seconds * refill_steps_per_second_);
  requester.refilled = now;
}

void FeasibilityLane::forget_idle(Clock::time_point now) {
  for (auto it = requesters_.begin(); it != requesters_.end();) {
    refill(it->second, now);
    if (it->second.in_lane == 0 && it->second.tokens >= burst_steps_ && !it->second.queued) {
      it = requesters_.erase(it);  // it would come back exactly as a new one
    } else {
      ++it;
    }
  }
}

FeasibilityLane::Ticket FeasibilityLane::enter(const std::string& requester,
                                               Clock::time_point now) {
  Ticket ticket;
  if (options_.steps_per_review == 0) {
    return ticket;
  }
  std::lock_guard lock(mutex_);
  auto it = requesters_.find(requester);
  if (it == requesters_.end()) {
    if (requesters_.size() >= options_.max_requesters) {
      forget_idle(now);
      if (requesters_.size() >= options_.max_requesters) {
        return ticket;
      }
    }
    it = requesters_.emplace(requester, Requester{burst_steps_, now, 0}).first;
  }
  Requester& state = it->second;
  refill(state, now);
  if (state.in_lane >= options_.max_per_requester || state.tokens < 1) {
    return ticket;
  }
  const bool within_share = state.tokens >= share_steps_;
  if (!within_share) {
    if (in_lane_ >= options_.max_concurrent || !has_turn(requester, now)) {
      queue(requester, state);
      return ticket;
    }
    if (state.queued) {
      state.queued = false;
      turns_.pop_front();  // has_turn(): it was first in line
    }
  }
  const auto steps = static_cast<std::size_t>(
      std::min(state.tokens, static_cast<double>(options_.steps_per_review)));
  state.tokens -= static_cast<double>(steps);
  ++state.in_lane;
  ++in_lane_;
  ticket.lane_ = this;
  ticket.requester_ = requester;
  ticket.steps_ = steps;
  return ticket;
}

bool FeasibilityLane::has_turn(const std::string& requester, Clock::time_point now) {
  while (!turns_.empty() && turns_.front().requester != requester) {
    Turn& first = turns_.front();
    if (!first.turn_since) {
      first.turn_since = now;
    }
    if (now - *first.turn_since <= options_.turn_kept_for) {
      return false;
    }
    requesters_.at(first.requester).queued = false;
    turns_.pop_front();
  }
  return true;
}

void FeasibilityLane::queue(const std::string& requester, Requester& state) {
  if (!state.queued) {
    state.queued = true;
    turns_.push_back(Turn{requester, std::nullopt});
  }
}

void FeasibilityLane::leave(const std::string& requester, std::size_t unspent) {
  std::lock_guard lock(mutex_);
  --in_lane_;
  // A requester with a review in the lane is never forgotten.
  Requester& state = requesters_.at(requester);
  --state.in_lane;
  state.tokens = std::min(burst_steps_, state.tokens + static_cast<double>(unspent));
}

}  // namespace topoguard::admission
