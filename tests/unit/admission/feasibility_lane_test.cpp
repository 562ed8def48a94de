// The feasibility lane: shares per requester (one review at a time each, a bucket of steps
// refilled over time), a few places for requesters over their share, and never a wait. Time is given, not
// read, so nothing here sleeps.
#include "topoguard/admission/feasibility_lane.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

namespace topoguard::admission {
namespace {

using std::chrono::milliseconds;

FeasibilityLaneOptions small_lane() {
  FeasibilityLaneOptions options;
  options.steps_per_review = 1'000;
  options.max_concurrent = 2;
  options.max_per_requester = 1;
  options.burst_reviews = 2;
  options.refill_reviews_per_second = 1;
  return options;
}

const FeasibilityLane::Clock::time_point kStart{};

TEST(FeasibilityLaneTest, RequesterIsTheUsernameElseTheNamespace) {
  EXPECT_EQ(requester_key("alice", "ml"), "user:alice");
  EXPECT_EQ(requester_key("", "ml"), "namespace:ml");
  EXPECT_NE(requester_key("ml", ""), requester_key("", "ml"));
}

// One review per requester in the lane at a time: a second one of the same requester gets no
// share while the first holds its place, another requester gets its own.
TEST(FeasibilityLaneTest, OneReviewPerRequesterAtATime) {
  FeasibilityLane lane(small_lane());
  FeasibilityLane::Ticket first = lane.enter("user:a", kStart);
  EXPECT_EQ(first.steps(), 1'000u);
  EXPECT_EQ(lane.enter("user:a", kStart).steps(), 0u);
  EXPECT_EQ(lane.enter("user:b", kStart).steps(), 1'000u);
  first = FeasibilityLane::Ticket();  // leaves the lane, nothing spent
  EXPECT_EQ(lane.enter("user:a", kStart).steps(), 1'000u);
}

// Spends one review's steps of `requester`'s bucket (it is then over its share of two).
void spend_one(FeasibilityLane& lane, const std::string& requester) {
  FeasibilityLane::Ticket ticket = lane.enter(requester, kStart);
  ASSERT_EQ(ticket.steps(), 1'000u);
  ticket.spend(1'000);
}

// Requesters over their share (they spent lately) hold max_concurrent places at most: past them
// they get no share at once, and a place given back is taken again. A requester within its
// share enters however full the lane is: the others filling it never refuse it.
TEST(FeasibilityLaneTest, RequestersOverTheirShareHoldAFewPlaces) {
  FeasibilityLane lane(small_lane());
  for (const std::string requester : {"user:a", "user:b", "user:c"}) {
    spend_one(lane, requester);
  }
  FeasibilityLane::Ticket a = lane.enter("user:a", kStart);
  FeasibilityLane::Ticket b = lane.enter("user:b", kStart);
  ASSERT_EQ(a.steps(), 1'000u);
  ASSERT_EQ(b.steps(), 1'000u);
  EXPECT_EQ(lane.enter("user:c", kStart).steps(), 0u);
  FeasibilityLane::Ticket honest = lane.enter("user:honest", kStart);
  EXPECT_EQ(honest.steps(), 1'000u);
  FeasibilityLane::Ticket other = lane.enter("namespace:ml", kStart);
  EXPECT_EQ(other.steps(), 1'000u);
  EXPECT_EQ(lane.enter("user:c", kStart).steps(), 0u);
  { FeasibilityLane::Ticket moved = std::move(b); }
  EXPECT_EQ(lane.enter("user:c", kStart).steps(), 0u);  // four in the lane still
  honest = FeasibilityLane::Ticket();
  other = FeasibilityLane::Ticket();
  EXPECT_EQ(lane.enter("user:c", kStart).steps(), 1'000u);
}

// The places of requesters over their share go round: one refused for want of a place is in
// line, and a place that frees is kept for the first in line, however quickly the others ask
// again, until its turn has passed unused.
TEST(FeasibilityLaneTest, RequestersOverTheirShareTakeTurns) {
  FeasibilityLaneOptions options = small_lane();
  options.max_concurrent = 1;
  FeasibilityLane lane(options);
  for (const std::string requester : {"user:a", "user:b", "user:c"}) {
    spend_one(lane, requester);
  }
  FeasibilityLane::Ticket a = lane.enter("user:a", kStart);
  ASSERT_EQ(a.steps(), 1'000u);
  EXPECT_EQ(lane.enter("user:b", kStart).steps(), 0u);  // in line: b
  EXPECT_EQ(lane.enter("user:c", kStart).steps(), 0u);  // b, c
  a = FeasibilityLane::Ticket();
  EXPECT_EQ(lane.enter("user:a", kStart).steps(), 0u);  // b's turn; b, c, a
  EXPECT_EQ(lane.enter("user:c", kStart).steps(), 0u);
  FeasibilityLane::Ticket b = lane.enter("user:b", kStart);
  EXPECT_EQ(b.steps(), 1'000u);  // c, a
  b = FeasibilityLane::Ticket();
  EXPECT_EQ(lane.enter("user:b", kStart).steps(), 0u);  // c's turn; c, a, b
  EXPECT_EQ(lane.enter("user:a", kStart).steps(), 0u);
  FeasibilityLane::Ticket c = lane.enter("user:c", kStart);
  EXPECT_EQ(c.steps(), 1'000u);  // a, b
  c = FeasibilityLane::Ticket();
  // a's turn starts when b finds the place free, and passes unused.
  const auto later = kStart + options.turn_kept_for + milliseconds(1);
  EXPECT_EQ(lane.enter("user:b", kStart).steps(), 0u);
  EXPECT_EQ(lane.enter("user:b", later).steps(), 1'000u);
  // A requester within its share still enters at once.
  EXPECT_EQ(lane.enter("user:honest", later).steps(), 1'000u);
}

// A requester that spends its bucket gets no share until time refills it, and no other
// requester loses anything by it; steps a review did not spend go back to its requester.
TEST(FeasibilityLaneTest, BucketOfStepsPerRequester) {
  FeasibilityLane lane(small_lane());
  for (int i = 0; i < 2; ++i) {
    FeasibilityLane::Ticket ticket = lane.enter("user:hostile", kStart);
    ASSERT_EQ(ticket.steps(), 1'000u);
    ticket.spend(1'000);
  }
  EXPECT_EQ(lane.enter("user:hostile", kStart).steps(), 0u);
  EXPECT_EQ(lane.enter("user:honest", kStart).steps(), 1'000u);
  // Half a second refills half a review's steps: a share of what is there.
  EXPECT_EQ(lane.enter("user:hostile", kStart + milliseconds(500)).steps(), 500u);
  // Two seconds later the bucket is full again, and no fuller than its burst.
  {
    FeasibilityLane::Ticket ticket = lane.enter("user:hostile", kStart + milliseconds(10'000));
    EXPECT_EQ(ticket.steps(), 1'000u);
    ticket.spend(10);
  }
  for (int i = 0; i < 2; ++i) {
    FeasibilityLane::Ticket ticket = lane.enter("user:hostile", kStart + milliseconds(10'000));
    EXPECT_GE(ticket.steps(), 990u);
    ticket.spend(ticket.steps());
  }
  EXPECT_EQ(lane.enter("user:hostile", kStart + milliseconds(10'000)).steps(), 0u);
}

// Requesters with a full bucket and nothing in the lane are forgotten to make room; with no
// room to make, a new requester gets no share rather than more memory.
TEST(FeasibilityLaneTest, RememberedRequestersAreBounded) {
  FeasibilityLaneOptions options = small_lane();
  options.max_requesters = 2;
  options.max_concurrent = 10;
  FeasibilityLane lane(options);
  FeasibilityLane::Ticket a = lane.enter("user:a", kStart);
  FeasibilityLane::Ticket b = lane.enter("user:b", kStart);
  EXPECT_EQ(lane.enter("user:c", kStart).steps(), 0u);
  { FeasibilityLane::Ticket gone = std::move(b); }  // b leaves with a full bucket again
  EXPECT_EQ(lane.enter("user:c", kStart).steps(), 1'000u);
}

// A budget of 0 steps turns the checks off: no share for anyone.
TEST(FeasibilityLaneTest, ZeroStepsIsNoShare) {
  FeasibilityLaneOptions options = small_lane();
  options.steps_per_review = 0;
  FeasibilityLane lane(options);
  EXPECT_EQ(lane.enter("user:a", kStart).steps(), 0u);
}

}  // namespace
}  // namespace topoguard::admission
