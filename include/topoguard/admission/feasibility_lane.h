// The webhook's lane for feasibility work, apart from verdicts: how many steps
// (cluster::StepBudget) each review may spend on feasibility, so that no requester holds more
// than its share. Feasibility is advisory: a review refused a share is still decided at once,
// its feasibility answered *unknown*; nothing here ever waits. Shares are per requester
// (userInfo.username, else the namespace): one review at a time per requester, and a bucket of
// steps per requester refilled at a fixed rate. A requester whose bucket still holds its share
// (it has spent little lately) always enters; the others, which have spent more, share a few
// places, so requesters that spend a lot can fill those places but never keep out one that
// does not. Those places go round: a requester over its share refused for want of a place is
// queued (without waiting), and a place that frees is kept for the first queued requester, for
// `turn_kept_for`, before the next in the queue or a newcomer may take it; so the requesters
// that spend most cannot take every place between them, whichever is quickest to ask again.
// The clock is the caller's (each call says what time it is). Thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace topoguard::admission {

// Steps one review's feasibility checks may take by default: a claim checked by node shape
// takes hundreds; 20,000 are a few milliseconds of CPU (docs/performance.md).
inline constexpr std::size_t kDefaultFeasibilitySteps = 20'000;

struct FeasibilityLaneOptions {
  std::size_t steps_per_review = kDefaultFeasibilitySteps;
  // Reviews of requesters over their share (below) doing feasibility work at once, counting
  // every review in the lane.
  std::size_t max_concurrent = 2;
  std::size_t max_per_requester = 1;  // reviews of one requester in the lane at once
  // A requester's bucket of steps: it holds at most `burst_reviews` reviews' steps and is
  // refilled with `refill_reviews_per_second` reviews' steps a second.
  double burst_reviews = 4;
  double refill_reviews_per_second = 4;
  // A requester whose bucket holds at least this many reviews' steps is within its share: it
  // enters however many reviews the lane holds (its own one at a time aside).
  double share_reviews = 2;
  // How long a place that frees is kept for the requester whose turn it is (see above).
  std::chrono::milliseconds turn_kept_for{500};
  // Requesters remembered; past it, those with a full bucket and nothing in the lane are
  // forgotten, and a new requester that still finds no room gets no share.
  std::size_t max_requesters = 4096;
};

// Who asks for a review, for shares: "user:<username>", else "namespace:<namespace>".
[[nodiscard]] std::string requester_key(std::string_view username, std::string_view namespace_name);

class FeasibilityLane {
 public:
  using Clock = std::chrono::steady_clock;

  // A review's share of the lane: steps() to spend; gives its place back, and the steps it did not
  // spend (spend()) back to its requester's bucket, when destroyed. Move-only.
  class Ticket {
   public:
    Ticket() = default;
    Ticket(Ticket&& other) noexcept;
    Ticket& operator=(Ticket&& other) noexcept;
    Ticket(const Ticket&) = delete;
    Ticket& operator=(const Ticket&) = delete;
    ~Ticket();

    // 0: no share (the requester has a review in the lane already, or its bucket is empty, or
    // it is over its share and the lane is full).
    [[nodiscard]] std::size_t steps() const { return steps_; }
    // How many of steps() the review spent.
    void spend(std::size_t spent) { spent_ = spent; }

   private:
    friend class FeasibilityLane;
    void release();

    FeasibilityLane* lane_ = nullptr;
    std::string requester_;
    std::size_t steps_ = 0;
    std::size_t spent_ = 0;
  };

  explicit FeasibilityLane(FeasibilityLaneOptions options);
  FeasibilityLane(const FeasibilityLane&) = delete;
  FeasibilityLane& operator=(const FeasibilityLane&) = delete;

  // A share for one review of `requester` (requester_key()) at time `now`; never blocks.
  [[nodiscard]] Ticket enter(const std::string& requester, Clock::time_point now);

  [[nodiscard]] const FeasibilityLaneOptions& options() const { return options_; }

 private:
  struct Requester {
    double tokens = 0;  // steps
    Clock::time_point refilled;
    std::size_t in_lane = 0;
    bool queued = false;  // in turns_
  };

  // A requester over its share refused for want of a place, for turns_; its turn runs from when
  // it was first seen first in line with a place free.
  struct Turn {
    std::string requester;
    std::optional<Clock::time_point> turn_since;
  };

  void leave(const std::string& requester, std::size_t unspent);
  void refill(Requester& requester, Clock::time_point now) const;
  void forget_idle(Clock::time_point now);
  // Whether `requester`, over its share, may take the free place at `now`: no one is in line, it
  // is first in line, or the first has let its turn pass (it is then dropped from the line).
  bool has_turn(const std::string& requester, Clock::time_point now);
  void queue(const std::string& requester, Requester& state);

  const FeasibilityLaneOptions options_;
  const double burst_steps_;
  const double refill_steps_per_second_;
  const double share_steps_;
  std::mutex mutex_;
  std::size_t in_lane_ = 0;                               // guarded by mutex_
  std::unordered_map<std::string, Requester> requesters_;  // guarded by mutex_
  std::deque<Turn> turns_;  // guarded by mutex_; each requester at most once, all remembered
};

}  // namespace topoguard::admission
