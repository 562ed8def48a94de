// The growth exponent the benchmarks print: k in time = c * n^k, fitted by least squares on
// log-log axes (k near 1: linear, near 2: quadratic), and the times it is fitted to. Shared by
// every *_bench that reports one.
#pragma once

#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <span>
#include <vector>

#include <benchmark/benchmark.h>

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

// CPU and wall seconds per size of one benchmark family, from Google Benchmark's runs.
struct GrowthSeries {
  std::vector<GrowthPoint> cpu;
  std::vector<GrowthPoint> wall;

  // Records `run` at size `n` when it is the one time of its size: the run itself, or with
  // --benchmark_repetitions the median (errors and the other aggregates are left out).
  void add(double n, const benchmark::BenchmarkReporter::Run& run) {
    using Run = benchmark::BenchmarkReporter::Run;
    const bool single = run.run_type == Run::RT_Iteration && run.repetitions <= 1;
    const bool median = run.run_type == Run::RT_Aggregate && run.aggregate_name == "median";
    if (run.error_occurred || !(single || median)) {
      return;
    }
    const double unit = benchmark::GetTimeUnitMultiplier(run.time_unit);
    cpu.push_back({n, run.GetAdjustedCPUTime() / unit});
    wall.push_back({n, run.GetAdjustedRealTime() / unit});
  }
};

// A console reporter that also keeps each benchmark family's times by size (the run's
// complexity N), and prints the fitted CPU-time exponents at the end.
class ExponentReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      series_[run.run_name.function_name].add(static_cast<double>(run.complexity_n), run);
    }
    ConsoleReporter::ReportRuns(runs);
  }
  // "<family>: fitted exponent k (<what>)" for every family run at two sizes or more.
  void print_exponents(const char* what) const {
    for (const auto& [name, growth] : series_) {
      if (growth.cpu.size() >= 2) {
        std::printf("%s: fitted exponent %.2f (%s)\n", name.c_str(), fitted_exponent(growth.cpu),
                    what);
      }
    }
  }

 private:
  std::map<std::string, GrowthSeries> series_;
};

}  // namespace topoguard::bench
