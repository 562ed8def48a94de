#include "topoguard/http/byte_budget.h"

#include <gtest/gtest.h>

namespace topoguard::http {
namespace {

constexpr std::size_t kKiB = 1024;

// Large holders may fill the budget up to its reserve; small ones may use the reserve too.
TEST(ByteBudgetTest, AnEighthIsKeptForSmallHolders) {
  ByteBudget budget(8 * 1024 * kKiB);  // reserve: 1 MiB
  std::size_t large = 0;
  EXPECT_TRUE(budget.update(large, 7 * 1024 * kKiB));
  EXPECT_FALSE(budget.update(large, 7 * 1024 * kKiB + 1)) << "a large holder took the reserve";
  EXPECT_EQ(budget.used(), 7 * 1024 * kKiB + 1);  // counted until the caller lets go
  EXPECT_TRUE(budget.update(large, 7 * 1024 * kKiB));
  std::size_t small = 0;
  EXPECT_TRUE(budget.update(small, 64 * kKiB));
  EXPECT_FALSE(budget.try_take(128 * kKiB)) << "a large holder took the reserve";
  EXPECT_TRUE(budget.try_take(16 * kKiB));
  budget.give_back(16 * kKiB);
  EXPECT_TRUE(budget.update(small, 0));
  EXPECT_TRUE(budget.update(large, 0));
  EXPECT_EQ(budget.used(), 0U);
}

// Past the whole limit even a small holder is refused, and try_take takes nothing then.
TEST(ByteBudgetTest, NothingPastTheLimit) {
  ByteBudget budget(256 * kKiB);
  std::size_t held = 0;
  EXPECT_TRUE(budget.update(held, 200 * kKiB));
  EXPECT_FALSE(budget.try_take(60 * kKiB));
  EXPECT_EQ(budget.used(), 200 * kKiB);
  EXPECT_TRUE(budget.try_take(56 * kKiB));
  EXPECT_EQ(budget.used(), 256 * kKiB);
}

// A burst is reported once, when use has gone above an eighth and come back below a 64th.
TEST(ByteBudgetTest, BurstEndsOnce) {
  ByteBudget budget(64 * 1024 * kKiB);
  std::size_t held = 0;
  EXPECT_FALSE(budget.burst_ended());
  ASSERT_TRUE(budget.update(held, 9 * 1024 * kKiB));
  EXPECT_FALSE(budget.burst_ended()) << "still holding the burst";
  ASSERT_TRUE(budget.update(held, 2 * 1024 * kKiB));
  EXPECT_FALSE(budget.burst_ended()) << "not yet below a 64th";
  ASSERT_TRUE(budget.update(held, 0));
  EXPECT_TRUE(budget.burst_ended());
  EXPECT_FALSE(budget.burst_ended());
}

}  // namespace
}  // namespace topoguard::http
