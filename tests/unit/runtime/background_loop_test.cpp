#include "topoguard/runtime/background_loop.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>

#include "eventually.h"

namespace topoguard::runtime {
namespace {

using std::chrono::hours;
using std::chrono::steady_clock;
using topoguard::testing::eventually;

// The first turn runs at once; a poke runs the next one before its (long) wait is over, and
// says so; stop() ends the wait and runs the finish on the loop's thread.
TEST(BackgroundLoopTest, PokeRunsATurnAndStopRunsTheFinish) {
  std::atomic<int> turns{0};
  std::atomic<int> poked_turns{0};
  std::atomic<bool> finished{false};
  BackgroundLoop loop;
  loop.start(
      [&](bool poked, std::stop_token) {
        poked_turns += poked ? 1 : 0;
        ++turns;
        return std::chrono::nanoseconds(hours(1));
      },
      [&] { finished = true; });
  ASSERT_TRUE(eventually([&] { return turns == 1; }));
  EXPECT_EQ(poked_turns, 0);
  loop.poke();
  ASSERT_TRUE(eventually([&] { return turns == 2; }));
  EXPECT_EQ(poked_turns, 1);
  EXPECT_TRUE(loop.stop());
  EXPECT_TRUE(finished);
  EXPECT_EQ(turns, 2);
  EXPECT_TRUE(loop.stop());  // idempotent
}

// A step that does not heed the stop request keeps the loop past stop()'s deadline: stop()
// answers false at the deadline instead of waiting for it, and true once the step has ended.
TEST(BackgroundLoopTest, StopHonoursItsDeadline) {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<bool> in_step{false};
  BackgroundLoop loop;
  loop.start([&](bool, std::stop_token) {
    in_step = true;
    released.wait();  // ignores the stop token on purpose
    return std::chrono::nanoseconds(hours(1));
  });
  ASSERT_TRUE(eventually([&] { return in_step.load(); }));
  EXPECT_FALSE(loop.stop(steady_clock::now() + std::chrono::milliseconds(20)));
  release.set_value();
  EXPECT_TRUE(loop.stop(steady_clock::now() + hours(1)));
}

// A loop never started stops at once.
TEST(BackgroundLoopTest, StopBeforeStartIsImmediate) {
  BackgroundLoop loop;
  EXPECT_TRUE(loop.stop(steady_clock::now()));
}

}  // namespace
}  // namespace topoguard::runtime
