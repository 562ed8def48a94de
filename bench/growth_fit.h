// The growth exponent the benchmarks print: k in time = c * n^k, fitted by least squares on
// log-log axes (k near 1: linear, near 2: quadratic). Shared by every *_bench that reports one.
#pragma once

#include <cmath>
#include <span>

namespace topoguard::bench {

struct GrowthPoint {
  double n = 0;        // input size (documents, bytes, nodes, ...)
  double seconds = 0;  // time for that size
};

// The slope of log(seconds) over log(n); 0 without two distinct sizes.
[[nodiscard]] inline double fitted_exponent(std::span<const GrowthPoint> points) {
  const double count = static_cast<double>(points.size());
  double sx = 0;
  double sy = 0;
  double sxx = 0;
  double sxy = 0;
  for (const GrowthPoint& point : points) {
    const double x = std::log(point.n);
    const double y = std::log(point.seconds);
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  const double denominator = count * sxx - sx * sx;
  return denominator == 0 ? 0 : (count * sxy - sx * sy) / denominator;
}

}  // namespace topoguard::bench
