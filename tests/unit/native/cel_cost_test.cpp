// The static cost bound: cel-go's constants on hand-computed expressions, guards that bound what
// follows them, and errors for what has no known size.
#include "cel_cost.h"

#include <gtest/gtest.h>

namespace topoguard::native {
namespace {

std::map<std::string, ShapePtr> roots() {
  return {
      {"xs", Shape::list(10, Shape::scalar())},
      {"names", Shape::list(32, Shape::string(63))},
      {"s", Shape::string(99)},
      {"o", Shape::object({{"items", Shape::list(8, Shape::object({{"n", Shape::string(5)}}))}})},
      {"labels", Shape::map_of(Shape::string(63))}};
}

std::uint64_t cost_of(std::string_view expression) {
  const Result<CostEstimate> estimate = estimate_cost(expression, roots());
  EXPECT_TRUE(estimate.has_value()) << (estimate ? "" : estimate.error().message);
  return estimate ? estimate->cost : 0;
}

TEST(CelCostTest, LiteralsIdentifiersAndSelections) {
  EXPECT_EQ(cost_of("1"), 0u);
  EXPECT_EQ(cost_of("[1, 2]"), 10u);    // list creation
  EXPECT_EQ(cost_of("{'a': 1}"), 30u);  // map creation
  EXPECT_EQ(cost_of("o.items"), 2u);    // identifier + selection
  EXPECT_EQ(cost_of("has(o.items)"), 2u);
}

TEST(CelCostTest, StringFunctionsAreChargedByLength) {
  // matches: ceil(0.1 * (99 + 1)) * ceil(0.25 * 6) = 10 * 2, plus the identifier.
  EXPECT_EQ(cost_of("s.matches('^a+b$')"), 21u);
  // contains: ceil(0.1 * 99) * ceil(0.1 * 3) = 10, plus the identifier.
  EXPECT_EQ(cost_of("s.contains('abc')"), 11u);
  // ==: ceil(0.1 * min(99, 3)) = 1, plus the identifier.
  EXPECT_EQ(cost_of("s == 'abc'"), 2u);
  // + on strings: ceil(0.1 * (99 + 1)).
  EXPECT_EQ(cost_of("s + 'x'"), 11u);
}

TEST(CelCostTest, InChargesTheListButNotAMap) {
  EXPECT_EQ(cost_of("'a' in names"), 33u);  // 32 elements + identifier
  EXPECT_EQ(cost_of("'a' in labels"), 2u);  // a key lookup
  EXPECT_EQ(cost_of("labels['a']"), 2u);
}

TEST(CelCostTest, MacrosCostTheirExpansionPerElement) {
  // exists over 10: range 1, result 1, and per element 4 + (x == 1: 1 + 1).
  EXPECT_EQ(cost_of("xs.exists(x, x == 1)"), 62u);
  // all: per element 3 + predicate.
  EXPECT_EQ(cost_of("xs.all(x, x == 1)"), 52u);
  // map: range 1 + accumulator list 10 + result 1, per element 12 + transform (x: 1).
  EXPECT_EQ(cost_of("xs.map(x, x)"), 142u);
  // filter: per element 13 + predicate.
  EXPECT_EQ(cost_of("xs.filter(x, x == 1)"), 162u);
  // Nested: the inner macro's cost is charged for every outer element.
  EXPECT_EQ(cost_of("o.items.exists(i, xs.exists(x, x == 1))"), 2u + 1u + 8u * (4u + 62u));
}

TEST(CelCostTest, AMacroResultHasTheRangesSize) {
  // names.filter(...) holds at most 32 names: `in` it costs 32.
  const std::uint64_t filtered = cost_of("names.filter(n, n == 'a')");
  EXPECT_EQ(cost_of("'b' in names.filter(n, n == 'a')"), filtered + 32u);
}

TEST(CelCostTest, GuardsBoundWhatFollowsThem) {
  // size(xs) <= 2 && ...: the exists runs over at most 2 elements.
  EXPECT_EQ(cost_of("size(xs) <= 2 && xs.exists(x, x == 1)"), 3u + 2u + 2u * 6u);
  // size(xs) > 2 || ...: likewise, when the left side is false.
  EXPECT_EQ(cost_of("size(xs) > 2 || xs.exists(x, x == 1)"), 3u + 2u + 2u * 6u);
  // As the condition of ?:, for the branch it leads to.
  EXPECT_EQ(cost_of("size(xs) <= 2 ? xs.exists(x, x == 1) : false"), 3u + 2u + 2u * 6u);
  // Not past a variable that shadows the guarded one.
  EXPECT_EQ(cost_of("size(xs) <= 2 && o.items.exists(xs, true)"), 3u + 2u + 1u + 8u * 4u);
}

TEST(CelCostTest, UnknownSizesAreErrors) {
  EXPECT_FALSE(estimate_cost("unknown.field", roots()));
  EXPECT_FALSE(estimate_cost("o.missing", roots()));
  EXPECT_FALSE(estimate_cost("s.exists(x, true)", roots()));
  EXPECT_FALSE(estimate_cost("(", roots()));
}

}  // namespace
}  // namespace topoguard::native
