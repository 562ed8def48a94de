#include <gtest/gtest.h>

#include "note_name.h"
#include "topoguard/cel/value.h"

namespace topoguard::cel {
namespace {

struct QuantityCase {
  std::string_view note;
  std::string left;
  std::string right;
  int order;
};

class QuantityOrderTest : public ::testing::TestWithParam<QuantityCase> {};

// Quantities compare exactly, whatever their suffixes.
TEST_P(QuantityOrderTest, ComparesExactly) {
  const auto left = Quantity::parse(GetParam().left);
  const auto right = Quantity::parse(GetParam().right);
  ASSERT_TRUE(left && right);
  EXPECT_EQ(left->compare(*right), GetParam().order);
  EXPECT_EQ(right->compare(*left), -GetParam().order);
}

INSTANTIATE_TEST_SUITE_P(
    Cel, QuantityOrderTest,
    ::testing::Values(QuantityCase{"binary_vs_decimal", "1Gi", "1G", 1},
                      QuantityCase{"same_value", "1.5Gi", "1536Mi", 0},
                      QuantityCase{"exponent", "1e3", "1k", 0},
                      QuantityCase{"negative_exponent", "1e-3", "1m", 0},
                      QuantityCase{"negative", "-1", "1m", -1},
                      QuantityCase{"exa", "1E", "1e18", 0},
                      QuantityCase{"trailing_dot", "1.", "1", 0},
                      QuantityCase{"leading_dot", ".5", "500m", 0},
                      QuantityCase{"plus_sign", "+2", "2", 0},
                      QuantityCase{"micro_nano", "1u", "999n", 1},
                      QuantityCase{"big", "8Ei", "9223372036854775807", 1}),
    testing::NoteName());

// Texts that are not quantities are refused.
TEST(CelQuantity, RejectsInvalid) {
  for (const char* text : {"", "-", ".", "1 G", "1Gb", "1e", "1e+", "e3", "1.2.3", "1e99999", "0x10"}) {
    EXPECT_FALSE(Quantity::parse(text)) << text;
  }
}

// Integers round-trip; fractions and overflows do not convert.
TEST(CelQuantity, AsInteger) {
  EXPECT_EQ(Quantity::parse("2Ki")->as_integer(), 2048);
  EXPECT_EQ(Quantity::parse("-9223372036854775808")->as_integer(),
            std::numeric_limits<std::int64_t>::min());
  EXPECT_FALSE(Quantity::parse("9223372036854775808")->as_integer());
  EXPECT_FALSE(Quantity::parse("1m")->as_integer());
  EXPECT_EQ(Quantity::from_integer(-5).compare(*Quantity::parse("-5")), 0);
}

// Steps are counted exactly, rounding up, in units of 10^-9: capacity policies compute with them.
TEST(CelQuantity, StepsOfRoundUp) {
  const auto steps = [](const char* amount, const char* step) {
    return Quantity::parse(amount)->steps_of(*Quantity::parse(step));
  };
  EXPECT_EQ(steps("1.3", "500m"), 3u);
  EXPECT_EQ(steps("1.5", "500m"), 3u);
  EXPECT_EQ(steps("0", "100m"), 0u);
  EXPECT_EQ(steps("1Gi", "0.5Gi"), 2u);
  EXPECT_EQ(steps("1Gi", "1G"), 2u);
  EXPECT_EQ(steps("1n", "1"), 1u);
  EXPECT_EQ(steps("8Ei", "1n"), std::nullopt);  // past uint64 steps
  EXPECT_EQ(steps("1", "0"), std::nullopt);
  EXPECT_EQ(steps("-1", "1"), std::nullopt);
  EXPECT_EQ(steps("1e30", "1"), std::nullopt);  // past 38 digits of nanos
}

// Multiplication is exact, and refuses negatives and results past 38 digits of nanos.
TEST(CelQuantity, Times) {
  EXPECT_EQ(Quantity::parse("500m")->times(3)->compare(*Quantity::parse("1.5")), 0);
  EXPECT_EQ(Quantity::parse("0.5Gi")->times(2)->compare(*Quantity::parse("1Gi")), 0);
  EXPECT_EQ(Quantity::parse("7")->times(0)->sign(), 0);
  EXPECT_FALSE(Quantity::parse("-1")->times(2));
  EXPECT_FALSE(Quantity::parse("1e28")->times(100));
  EXPECT_TRUE(Quantity::parse("1e28")->times(9));
}

// Decimal places ignore trailing zeros and suffixes that make a value whole.
TEST(CelQuantity, DecimalPlaces) {
  EXPECT_EQ(Quantity::parse("2Gi")->decimal_places(), 0);
  EXPECT_EQ(Quantity::parse("0.5")->decimal_places(), 1);
  EXPECT_EQ(Quantity::parse("100m")->decimal_places(), 1);
  EXPECT_EQ(Quantity::parse("1500u")->decimal_places(), 4);
  EXPECT_EQ(Quantity::parse("1.5k")->decimal_places(), 0);
  EXPECT_EQ(Quantity::parse("0")->decimal_places(), 0);
  EXPECT_EQ(Quantity::parse("1n")->decimal_places(), 9);
}

// Semantic versions follow semver.org precedence.
TEST(CelVersion, Precedence) {
  const std::vector<std::string> ordered = {"1.0.0-alpha",      "1.0.0-alpha.1", "1.0.0-alpha.beta",
                                            "1.0.0-beta",       "1.0.0-beta.2",  "1.0.0-beta.11",
                                            "1.0.0-rc.1",       "1.0.0",         "2.0.0",
                                            "2.1.0",            "2.1.1"};
  for (std::size_t i = 0; i + 1 < ordered.size(); ++i) {
    const auto lower = Version::parse(ordered[i]);
    const auto higher = Version::parse(ordered[i + 1]);
    ASSERT_TRUE(lower && higher) << ordered[i];
    EXPECT_LT(lower->compare(*higher), 0) << ordered[i] << " < " << ordered[i + 1];
    EXPECT_GT(higher->compare(*lower), 0);
  }
}

// Strict parsing refuses what normalisation accepts.
TEST(CelVersion, StrictAndNormalized) {
  for (const char* text : {"1", "1.2", "v1.2.3", "01.2.3", "1.2.3-01", "1.2.3-", "1.2.3+", "a.b.c"}) {
    EXPECT_FALSE(Version::parse(text)) << text;
  }
  EXPECT_EQ(Version::parse("v1", true)->compare(*Version::parse("1.0.0")), 0);
  EXPECT_EQ(Version::parse("1.02.3", true)->minor, 2U);
}

}  // namespace
}  // namespace topoguard::cel
