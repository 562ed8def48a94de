#include "topoguard/common/duration.h"

#include <gtest/gtest.h>

#include <chrono>

namespace topoguard {
namespace {

using namespace std::chrono_literals;

// What Go's time.ParseDuration reads, and what the flags need.
TEST(DurationTest, ReadsGoDurations) {
  EXPECT_EQ(*parse_duration("0"), 0ns);
  EXPECT_EQ(*parse_duration("30s"), 30s);
  EXPECT_EQ(*parse_duration("5m"), 5min);
  EXPECT_EQ(*parse_duration("1h30m"), 90min);
  EXPECT_EQ(*parse_duration("8760h"), 8760h);
  EXPECT_EQ(*parse_duration("250ms"), 250ms);
  EXPECT_EQ(*parse_duration("1.5s"), 1500ms);
  EXPECT_EQ(*parse_duration("2us"), 2us);
  EXPECT_EQ(*parse_duration("2\u00b5s"), 2us);
  EXPECT_EQ(*parse_duration("+10s"), 10s);
  EXPECT_EQ(*parse_duration("1h0m0.5s"), 3600500ms);
}

TEST(DurationTest, RefusesWhatIsNotADuration) {
  for (const char* bad :
       {"", "30", "s", "-5s", "5d", "1.2.3s", "5 s", "5s ", "h5", ".s", "9999999999h"}) {
    const auto parsed = parse_duration(bad);
    ASSERT_FALSE(parsed.has_value()) << bad;
    EXPECT_NE(parsed.error().message.find("is not a duration"), std::string::npos) << bad;
  }
}

TEST(DurationTest, FormatsAsGoDoes) {
  EXPECT_EQ(format_duration(0ns), "0s");
  EXPECT_EQ(format_duration(30s), "30s");
  EXPECT_EQ(format_duration(90min), "1h30m0s");
  EXPECT_EQ(format_duration(250ms), "250ms");
  EXPECT_EQ(format_duration(1500ms), "1.5s");
  EXPECT_EQ(format_duration(8760h), "8760h0m0s");
  for (const std::chrono::nanoseconds value :
       std::initializer_list<std::chrono::nanoseconds>{1ns, 90min, 1500ms, 8760h, 61s}) {
    EXPECT_EQ(*parse_duration(format_duration(value)), value);
  }
}

}  // namespace
}  // namespace topoguard
