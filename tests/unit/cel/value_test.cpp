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
