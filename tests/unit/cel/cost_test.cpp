// The evaluator's cost and memory limits. Its own executable: it counts every allocation of the
// process (allocation_counter.h replaces operator new) to check the memory an evaluation takes.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <random>
#include <string>

#include "allocation_counter.h"
#include "cel_expression_generator.h"
#include "topoguard/cel/cel.h"

namespace topoguard::cel {
namespace {

// The most one evaluation may hold at once: the values it accounts, with room for what the
// accounting leaves out (vector growth, shared-pointer control blocks, temporaries).
constexpr std::int64_t kMemoryBound = 4 * static_cast<std::int64_t>(kMaxEvaluationBytes);

struct Measured {
  Evaluation evaluation;
  std::int64_t peak = 0;  // bytes above what was live before
};

Measured measure(const Program& program, CostBudget* budget = nullptr) {
  Activation device;
  device.driver = "gpu.nvidia.com";
  using topoguard::testing::AllocationCounter;
  const std::int64_t before = AllocationCounter::live_now();
  AllocationCounter::start();
  Measured measured;
  measured.evaluation = evaluate(program, device, budget);
  measured.peak = AllocationCounter::peak_now() - before;
  return measured;
}

Program compiled(const std::string& text) {
  auto program = compile(text);
  EXPECT_TRUE(program) << program.error().to_string();
  return *std::move(program);
}

// Issue 19's bomb: `[s].map(x, x+x)[0]` nested 16 times around a 1 KiB string doubles it 16
// times (64 MiB, built from 1 KiB in 16 steps of one unit each before a cost model charged
// by size).
std::string doubling_bomb(int levels) {
  std::string text = "\"" + std::string(1024, 'a') + "\"";
  for (int i = 0; i < levels; ++i) {
    text = "[" + text + "].map(x, x + x)[0]";
  }
  return "size(" + text + ") > 0";
}

TEST(CelCost, StringDoublingEndsUnknownWithinTheLimits) {
  const Program program = compiled(doubling_bomb(16));
  const Measured measured = measure(program);
  EXPECT_EQ(measured.evaluation.outcome, Outcome::kUnknown);
  EXPECT_LE(measured.evaluation.cost, kPerCallCostLimit + 1);
  EXPECT_LE(measured.peak, kMemoryBound);
  // The same expression always gets the same answer.
  const Measured again = measure(program);
  EXPECT_EQ(again.evaluation.outcome, measured.evaluation.outcome);
  EXPECT_EQ(again.evaluation.cost, measured.evaluation.cost);
  EXPECT_EQ(again.evaluation.message, measured.evaluation.message);
}

TEST(CelCost, FewDoublingsStayKnown) {
  const Measured measured = measure(compiled(doubling_bomb(3)));
  EXPECT_EQ(measured.evaluation.outcome, Outcome::kTrue);
  EXPECT_GT(measured.evaluation.cost, 1024 * 14 / 10);  // the concatenations are charged by size
}

// cel-go's runtime cost of a typical selector: device (1) + .driver (1) + == (1).
TEST(CelCost, SelectorCostsAsCelGoCountsIt) {
  EXPECT_EQ(measure(compiled(R"(device.driver == "gpu.nvidia.com")")).evaluation.cost, 3U);
  // [1,2,3] (10) + three iterations (1 each) of x (1) > 0 (1).
  EXPECT_EQ(measure(compiled("[1, 2, 3].all(x, x > 0)")).evaluation.cost, 10U + 3 * 3);
}

// A value named many times is shared, not copied: a list of 4,000 copies of a 1 KiB string
// created by doubling to 1 MiB holds one copy.
TEST(CelCost, NamingAValueAgainSharesIt) {
  std::string names;
  for (int i = 0; i < 4000; ++i) {
    names += i == 0 ? "x" : ", x";
  }
  std::string big = "\"" + std::string(1024, 'a') + "\"";
  for (int i = 0; i < 10; ++i) {
    big = "[" + big + "].map(y, y + y)[0]";
  }
  const Measured measured =
      measure(compiled("[" + big + "].all(x, size([" + names + "]) == 4000)"));
  EXPECT_EQ(measured.evaluation.outcome, Outcome::kTrue) << measured.evaluation.message;
  EXPECT_LE(measured.peak, kMemoryBound);
}

TEST(CelCost, DeepComparisonOfSharedListsIsCharged) {
  // Each level holds the one below 8 times over: 8^6 elements compared, few created.
  std::string list = "[1, 2, 3, 4, 5, 6, 7, 8]";
  std::string text;
  for (int i = 0; i < 6; ++i) {
    text = "[" + list + "].map(l, [l, l, l, l, l, l, l, l])[0]";
    list = text;
  }
  const Measured measured = measure(compiled("(" + list + " == " + list + ") || true"));
  EXPECT_EQ(measured.evaluation.outcome, Outcome::kUnknown);
  EXPECT_NE(measured.evaluation.message.find("cost limit"), std::string::npos);
}

// A limit reached anywhere makes the whole answer unknown, even behind `|| true`.
TEST(CelCost, ExhaustedEvaluationIsUnknownWhateverTheRest) {
  const Measured measured = measure(compiled("(" + doubling_bomb(16) + ") || true"));
  EXPECT_EQ(measured.evaluation.outcome, Outcome::kUnknown);
}

TEST(CelCost, SharedBudgetEndsLaterEvaluations) {
  const Program program = compiled("[1, 2, 3].all(x, x > 0)");
  CostBudget budget(25);
  const Measured first = measure(program, &budget);
  EXPECT_EQ(first.evaluation.outcome, Outcome::kTrue);
  EXPECT_FALSE(first.evaluation.budget_exhausted);
  EXPECT_EQ(budget.remaining(), 25U - 19);
  const Measured second = measure(program, &budget);
  EXPECT_EQ(second.evaluation.outcome, Outcome::kUnknown);
  EXPECT_TRUE(second.evaluation.budget_exhausted);
  EXPECT_EQ(budget.remaining(), 0U);
}

TEST(CelCost, RegexOverTheMemoryLimitIsUnknown) {
  std::string alternatives;
  for (int i = 0; i < 150; ++i) {
    alternatives += (i == 0 ? "" : "|") + ("a" + std::to_string(i) + "(b|c)*d{1,1000}");
  }
  ASSERT_LE(alternatives.size(), 4096U);
  const Measured literal = measure(compiled("\"zz\".matches(\"" + alternatives + "\")"));
  EXPECT_EQ(literal.evaluation.outcome, Outcome::kUnknown);
  EXPECT_NE(literal.evaluation.message.find("expands to more than"), std::string::npos)
      << literal.evaluation.message;
  EXPECT_LE(literal.evaluation.message.size(), 300U);
  // Built at run time, the same.
  const Measured built = measure(compiled("\"zz\".matches(\"" + alternatives + "\" + \"|x\")"));
  EXPECT_EQ(built.evaluation.outcome, Outcome::kUnknown);
  EXPECT_LE(built.peak, kMemoryBound);
}

TEST(CelCost, LongPatternIsUnknownAndQuotedShort) {
  const std::string pattern(5000, 'a');
  const Measured measured = measure(compiled("\"zz\".matches(\"" + pattern + "\")"));
  EXPECT_EQ(measured.evaluation.outcome, Outcome::kUnknown);
  EXPECT_NE(measured.evaluation.message.find("(5000 bytes)"), std::string::npos);
  EXPECT_LE(measured.evaluation.message.size(), 300U);
}

// Patterns built at run time are charged their compilation before RE2 sees them: a loop that
// compiles a new costly pattern each time stops at the limit after a few.
TEST(CelCost, PatternsCompiledInALoopAreCharged) {
  std::string costly;  // ~49,000 nodes: within the expansion limit, a long compilation
  for (int i = 0; i < 49; ++i) {
    costly += (i == 0 ? "" : "|") + ("a" + std::to_string(i) + "(b|c)*d{1,1000}");
  }
  std::string prefixes;
  for (int i = 0; i < 200; ++i) {
    prefixes += (i == 0 ? "\"p" : ", \"p") + std::to_string(i) + "\"";
  }
  const Measured measured =
      measure(compiled("[" + prefixes + "].all(x, !\"zz\".matches(x + \"" + costly + "\"))"));
  EXPECT_EQ(measured.evaluation.outcome, Outcome::kUnknown) << measured.evaluation.message;
  EXPECT_LE(measured.evaluation.cost, kPerCallCostLimit + 1);
}

TEST(CelCost, InvalidPatternIsStillAnError) {
  EXPECT_EQ(measure(compiled(R"("zz".matches("(a"))")).evaluation.outcome, Outcome::kError);
}

// The API server's limit on a selector's length (CELSelectorExpressionMaxLength).
constexpr std::size_t kSelectorLimit = 10 * 1024;

// Random expression trees of the amplifying shapes: every evaluation ends within its cost limit,
// under the memory bound, and the same every time.
TEST(CelCost, RandomExpressionsStayWithinTheLimits) {
  std::mt19937 random(20261204);
  std::int64_t largest_peak = 0;
  std::uint64_t largest_cost = 0;
  std::array<int, 4> outcomes{};
  int exhausted = 0;
  for (int i = 0; i < 400; ++i) {
    topoguard::testing::CelExpressionGenerator generator(
        [&random](unsigned bound) { return static_cast<unsigned>(random() % bound); });
    const std::string text = generator.expression(6);
    if (text.size() > kSelectorLimit) {
      continue;
    }
    auto program = compile(text);
    ASSERT_TRUE(program) << text << ": " << program.error().to_string();
    const Measured first = measure(*program);
    EXPECT_LE(first.evaluation.cost, kPerCallCostLimit + 1) << text;
    EXPECT_LE(first.peak, kMemoryBound) << text;
    const Measured second = measure(*program);
    EXPECT_EQ(second.evaluation.outcome, first.evaluation.outcome) << text;
    EXPECT_EQ(second.evaluation.cost, first.evaluation.cost) << text;
    largest_peak = std::max(largest_peak, first.peak);
    largest_cost = std::max(largest_cost, first.evaluation.cost);
    ++outcomes[static_cast<int>(first.evaluation.outcome)];
    exhausted += first.evaluation.message.find("limit") != std::string::npos ? 1 : 0;
  }
  // The generator reaches every outcome and the limits (a test that cannot fail otherwise).
  EXPECT_GT(outcomes[static_cast<int>(Outcome::kTrue)], 0);
  EXPECT_GT(outcomes[static_cast<int>(Outcome::kFalse)], 0);
  EXPECT_GT(outcomes[static_cast<int>(Outcome::kError)], 0);
  EXPECT_GT(exhausted, 0);
  RecordProperty("largest_cost", std::to_string(largest_cost));
  RecordProperty("exhausted", std::to_string(exhausted));
  RecordProperty("largest_peak_bytes", std::to_string(largest_peak));
}

}  // namespace
}  // namespace topoguard::cel
