#include "topoguard/kube/rate_limiter.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "test_clock.h"

namespace topoguard::kube {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;

// A full bucket lets `burst` requests through at once; the next ones reserve tokens ahead at
// 1/qps apart.
TEST(RateLimiterTest, BurstThenOneTokenPerInterval) {
  auto clock = std::make_shared<testing::TestClock>();
  TokenBucket bucket(RateLimit{2.0, 3}, clock);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(bucket.reserve(), nanoseconds::zero());
  }
  EXPECT_DOUBLE_EQ(testing::milliseconds_of(bucket.reserve()), 500);
  EXPECT_DOUBLE_EQ(testing::milliseconds_of(bucket.reserve()), 1000);
  EXPECT_DOUBLE_EQ(testing::milliseconds_of(bucket.reserve()), 1500);
}

// Time refills the bucket, never above its burst.
TEST(RateLimiterTest, RefillsUpToTheBurst) {
  auto clock = std::make_shared<testing::TestClock>();
  TokenBucket bucket(RateLimit{5.0, 10}, clock);
  for (int i = 0; i < 10; ++i) {
    ASSERT_EQ(bucket.reserve(), nanoseconds::zero());
  }
  clock->advance(milliseconds(400));  // two tokens back
  EXPECT_EQ(bucket.reserve(), nanoseconds::zero());
  EXPECT_EQ(bucket.reserve(), nanoseconds::zero());
  EXPECT_DOUBLE_EQ(testing::milliseconds_of(bucket.reserve()), 200);
  clock->advance(std::chrono::hours(1));
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(bucket.reserve(), nanoseconds::zero());
  }
  EXPECT_GT(bucket.reserve(), nanoseconds::zero());
}

// acquire() waits on the clock for its reserved token; the waits add up to the rate.
TEST(RateLimiterTest, AcquireWaitsOnTheClock) {
  auto clock = std::make_shared<testing::TestClock>();
  TokenBucket bucket(RateLimit{10.0, 1}, clock);
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(bucket.acquire({}));
  }
  const auto sleeps = clock->sleeps();
  ASSERT_EQ(sleeps.size(), 4u);
  for (const auto sleep : sleeps) {
    // Each waited after the previous one's wait had passed.
    EXPECT_DOUBLE_EQ(testing::milliseconds_of(sleep), 100);
  }
}

// qps <= 0 turns the limit off.
TEST(RateLimiterTest, ZeroQpsIsUnlimited) {
  auto clock = std::make_shared<testing::TestClock>();
  TokenBucket bucket(RateLimit{0.0, 1}, clock);
  for (int i = 0; i < 1000; ++i) {
    ASSERT_EQ(bucket.reserve(), nanoseconds::zero());
  }
}

// A stop ends the wait: acquire says so.
TEST(RateLimiterTest, StopEndsTheWait) {
  TokenBucket bucket(RateLimit{0.001, 1}, real_clock());
  ASSERT_TRUE(bucket.acquire({}));
  std::stop_source stop;
  std::thread stopper([&] {
    // Time is the subject: the stop comes while acquire waits for a token 1,000 s away (were
    // it to come first, acquire would answer false at once all the same).
    std::this_thread::sleep_for(milliseconds(20));
    stop.request_stop();
  });
  const auto began = std::chrono::steady_clock::now();
  EXPECT_FALSE(bucket.acquire(stop.get_token()));
  EXPECT_LT(std::chrono::steady_clock::now() - began, std::chrono::seconds(5));
  stopper.join();
}

// Many threads share one bucket: the tokens handed out match the rate (burst + qps * time).
TEST(RateLimiterTest, SharedAcrossThreads) {
  auto clock = std::make_shared<testing::TestClock>();
  TokenBucket bucket(RateLimit{100.0, 10}, clock);
  std::vector<std::thread> threads;
  std::atomic<int> immediate{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 25; ++i) {
        if (bucket.reserve() == nanoseconds::zero()) {
          ++immediate;
        }
      }
    });
  }
  for (auto& thread : threads) {
    thread.join();
  }
  EXPECT_EQ(immediate.load(), 10);
}

}  // namespace
}  // namespace topoguard::kube
