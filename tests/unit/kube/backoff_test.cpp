#include "topoguard/kube/backoff.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>

#include "test_clock.h"

namespace topoguard::kube {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using std::chrono::seconds;

// Without jitter the waits are 0.8 s doubling up to the 30 s cap, as client-go's reflector.
TEST(BackoffTest, DoublesFromEightHundredMillisecondsToThirtySeconds) {
  auto clock = std::make_shared<testing::TestClock>();
  Backoff backoff(BackoffOptions{}, clock, [] { return 0.0; });
  const double expected[] = {800, 1600, 3200, 6400, 12800, 25600, 30000, 30000};
  for (const double wait : expected) {
    EXPECT_DOUBLE_EQ(testing::milliseconds_of(backoff.next()), wait);
    clock->advance(seconds(1));
  }
}

// Jitter 1.0 stretches each wait by a factor in [1, 2): the random draw decides where.
TEST(BackoffTest, JitterStretchesUpToTwice) {
  auto clock = std::make_shared<testing::TestClock>();
  double draw = 0.5;
  Backoff backoff(BackoffOptions{}, clock, [&] { return draw; });
  EXPECT_DOUBLE_EQ(testing::milliseconds_of(backoff.next()), 1200);  // 800 * 1.5
  draw = 0.999;
  EXPECT_NEAR(testing::milliseconds_of(backoff.next()), 3198.4, 0.01);  // 1600 * 1.999
  draw = 0.0;
  EXPECT_DOUBLE_EQ(testing::milliseconds_of(backoff.next()), 3200);
}

// Real draws stay inside [base, 2 * base) for every step, the cap included.
TEST(BackoffTest, RandomJitterStaysInRange) {
  auto clock = std::make_shared<testing::TestClock>();
  Backoff backoff(BackoffOptions{}, clock);
  double base = 800;
  for (int i = 0; i < 50; ++i) {
    const double wait = testing::milliseconds_of(backoff.next());
    EXPECT_GE(wait, base);
    EXPECT_LT(wait, 2 * base);
    base = std::min(base * 2, 30000.0);
  }
}

// After a healthy stretch longer than the reset period (2 min since the last wait began) the
// base is back at 800 ms; a shorter gap keeps growing it.
TEST(BackoffTest, ResetsAfterAHealthyPeriod) {
  auto clock = std::make_shared<testing::TestClock>();
  Backoff backoff(BackoffOptions{}, clock, [] { return 0.0; });
  EXPECT_DOUBLE_EQ(testing::milliseconds_of(backoff.next()), 800);
  EXPECT_DOUBLE_EQ(testing::milliseconds_of(backoff.next()), 1600);
  clock->advance(seconds(119));
  EXPECT_DOUBLE_EQ(testing::milliseconds_of(backoff.next()), 3200);
  clock->advance(seconds(121));
  EXPECT_DOUBLE_EQ(testing::milliseconds_of(backoff.next()), 800);
  EXPECT_DOUBLE_EQ(testing::milliseconds_of(backoff.next()), 1600);
  backoff.reset();
  EXPECT_DOUBLE_EQ(testing::milliseconds_of(backoff.next()), 800);
}

}  // namespace
}  // namespace topoguard::kube
