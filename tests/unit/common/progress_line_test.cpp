#include "topoguard/common/progress_line.h"

#include <sstream>

#include <gtest/gtest.h>

namespace topoguard {
namespace {

using std::chrono::milliseconds;
using TimePoint = std::chrono::steady_clock::time_point;

// A clock the test moves by hand.
struct FakeClock {
  TimePoint now{};
  ProgressLine::Clock function() {
    return [this] { return now; };
  }
};

// A run shorter than a second prints nothing at all, not even the erasing sequence.
TEST(ProgressLineTest, ShortRunPrintsNothing) {
  FakeClock clock;
  std::ostringstream out;
  {
    ProgressLine progress(out, true, "topoguard audit: evaluated", "resources", clock.function());
    progress.update(0, 10);
    clock.now += milliseconds(999);
    progress.update(9, 10);
  }
  EXPECT_EQ(out.str(), "");
}

// After a second the line appears, is redrawn in place at most every 100 ms, and is erased at
// the end.
TEST(ProgressLineTest, LongRunDrawsInPlaceThenErases) {
  FakeClock clock;
  std::ostringstream out;
  ProgressLine progress(out, true, "topoguard audit: evaluated", "resources", clock.function());
  clock.now += milliseconds(1000);
  progress.update(5, 10);
  EXPECT_EQ(out.str(), "\r\033[Ktopoguard audit: evaluated 5 of 10 resources");
  clock.now += milliseconds(99);
  progress.update(6, 10);
  EXPECT_EQ(out.str(), "\r\033[Ktopoguard audit: evaluated 5 of 10 resources");
  clock.now += milliseconds(1);
  progress.update(7, 10);
  EXPECT_EQ(out.str(),
            "\r\033[Ktopoguard audit: evaluated 5 of 10 resources"
            "\r\033[Ktopoguard audit: evaluated 7 of 10 resources");
  progress.finish();
  EXPECT_EQ(out.str().substr(out.str().size() - 4), "\r\033[K");
  // Finished, it stays quiet.
  const std::string finished = out.str();
  clock.now += milliseconds(5000);
  progress.update(10, 10);
  progress.finish();
  EXPECT_EQ(out.str(), finished);
}

// Disabled (not a terminal, or --quiet), it never writes, however long the run.
TEST(ProgressLineTest, DisabledNeverWrites) {
  FakeClock clock;
  std::ostringstream out;
  ProgressLine progress(out, false, "topoguard audit: evaluated", "resources", clock.function());
  clock.now += milliseconds(5000);
  progress.update(1, 2);
  progress.finish();
  EXPECT_EQ(out.str(), "");
}

}  // namespace
}  // namespace topoguard
