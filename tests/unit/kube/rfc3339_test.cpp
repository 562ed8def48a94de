#include "topoguard/kube/rfc3339.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string_view>

namespace topoguard::kube {
namespace {

// RFC 3339 times: Z or a numeric offset, optional fractions.
TEST(Rfc3339Test, ParsesKubernetesTimes) {
  using std::chrono::system_clock;
  const auto epoch_seconds = [](std::string_view text) {
    const auto parsed = parse_rfc3339(text);
    EXPECT_TRUE(parsed.has_value()) << text;
    return parsed
               ? std::chrono::duration_cast<std::chrono::milliseconds>(parsed->time_since_epoch())
                     .count()
               : -1;
  };
  EXPECT_EQ(epoch_seconds("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(epoch_seconds("2030-01-02T03:04:05Z"), 1893553445000);
  EXPECT_EQ(epoch_seconds("2030-01-02T03:04:05.250Z"), 1893553445250);
  EXPECT_EQ(epoch_seconds("2030-01-02T05:04:05+02:00"), 1893553445000);
  EXPECT_EQ(epoch_seconds("2030-01-01T23:04:05-04:00"), 1893553445000);
  for (const char* bad : {"2030-01-02", "2030-01-02T03:04:05", "2030-13-02T03:04:05Z",
                          "2030-01-02T03:04:05+0200", "2030-01-02 03:04:05Z", "x"}) {
    EXPECT_FALSE(parse_rfc3339(bad).has_value()) << bad;
  }
}

// What the API server writes: whole seconds for metav1.Time, microseconds for MicroTime, and
// both read back to the same instant.
TEST(Rfc3339Test, FormatsKubernetesTimes) {
  const auto time = std::chrono::system_clock::time_point(std::chrono::milliseconds(1893553445250));
  EXPECT_EQ(format_rfc3339(time), "2030-01-02T03:04:05Z");
  EXPECT_EQ(format_rfc3339_micro(time), "2030-01-02T03:04:05.250000Z");
  EXPECT_EQ(*parse_rfc3339(format_rfc3339_micro(time)), time);
  EXPECT_EQ(format_rfc3339(std::chrono::system_clock::time_point{}), "1970-01-01T00:00:00Z");
}

}  // namespace
}  // namespace topoguard::kube
