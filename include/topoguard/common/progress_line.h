// A progress line on a terminal for runs that take a while: nothing for the first second (short
// runs print nothing at all), then "<label> N of M <unit>" redrawn in place at most ten times a
// second, and erased at the end so what follows starts on a clean line. The caller decides whether
// the stream is a terminal; the clock is passed in so that tests need not wait.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <iosfwd>
#include <string>

namespace topoguard {

class ProgressLine {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;

  static constexpr std::chrono::milliseconds kQuietFor{1000};
  static constexpr std::chrono::milliseconds kRedrawEvery{100};

  // Disabled, it writes nothing. The first second counts from construction.
  ProgressLine(std::ostream& out, bool enabled, std::string label, std::string unit,
               Clock clock = std::chrono::steady_clock::now);
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;
  ~ProgressLine();

  void update(std::size_t done, std::size_t total);
  // Erases the line if one was drawn; later updates draw nothing.
  void finish();

 private:
  std::ostream& out_;
  bool enabled_;
  const std::string label_;
  const std::string unit_;
  const Clock clock_;
  const std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_drawn_{};
  bool drawn_ = false;
};

}  // namespace topoguard
