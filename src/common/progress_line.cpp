#include "topoguard/common/progress_line.h"

#include <ostream>
#include <utility>

namespace topoguard {

namespace {

// Carriage return, then erase to the end of the line (ECMA-48 EL).
constexpr const char* kEraseLine = "\r\033[K";

}  // namespace

ProgressLine::ProgressLine(std::ostream& out, bool enabled, std::string label, std::string unit,
                           Clock clock)
    : out_(out),
      enabled_(enabled),
      label_(std::move(label)),
      unit_(std::move(unit)),
      clock_(std::move(clock)),
      start_(enabled_ ? clock_() : std::chrono::steady_clock::time_point{}) {}

ProgressLine::~ProgressLine() { finish(); }

void ProgressLine::update(std::size_t done, std::size_t total) {
  if (!enabled_) {
    return;
  }
  const auto now = clock_();
  if (now - start_ < kQuietFor || (drawn_ && now - last_drawn_ < kRedrawEvery)) {
    return;
  }
  out_ << kEraseLine << label_ << ' ' << done << " of " << total << ' ' << unit_ << std::flush;
  last_drawn_ = now;
  drawn_ = true;
}

void ProgressLine::finish() {
  if (drawn_) {
    out_ << kEraseLine << std::flush;
  }
  drawn_ = false;
  enabled_ = false;
}

}  // namespace topoguard
