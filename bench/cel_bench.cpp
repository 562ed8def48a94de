// CEL reader cost against expression size: parse + evaluate one selector, for several shapes
// at sizes from 64 to 4096 terms, with the exponent k of time ~ bytes^k fitted per shape
// (least squares on log-log) and printed after the runs. Linear input handling means k ~ 1.
// Then the hostile shapes the limits end (not fitted): limit/doubling/N, issue 19's
// `[s].map(x, x + x)[0]` nested N times around a 1 KiB string (N = 16 made 64 MiB before the
// cost model), and limit/nested_all, a comprehension that runs to the 1,000,000-unit limit.
//
//   build/bench/topoguard_cel_bench [--benchmark_min_time=0.2s]
#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "growth_fit.h"
#include "topoguard/cel/cel.h"

namespace {

namespace cel = topoguard::cel;

const cel::Activation& nic() {
  static const cel::Activation device = [] {
    cel::Activation nic_device;
    nic_device.driver = "dra.net";
    nic_device.attributes = cel::Attributes{
        {"dra.net", {{"numaNode", std::int64_t{1}}, {"rdma", true}, {"ifName", std::string("eth1")}}},
        {"resource.kubernetes.io", {{"pcieRoot", std::string("pci0000:90")}}}};
    return nic_device;
  }();
  return device;
}

// The expression of `shape` with `terms` terms; none of them matches until the last.
std::string expression(const std::string& shape, int terms) {
  std::string text;
  if (shape == "or_chain") {
    for (int i = 0; i < terms; ++i) {
      text += (i > 0 ? " || " : "") + std::string("device.driver == \"driver") + std::to_string(i) + ".example.com\"";
    }
  } else if (shape == "in_list") {
    text = "device.driver in [";
    for (int i = 0; i < terms; ++i) {
      text += "\"driver" + std::to_string(i) + ".example.com\", ";
    }
    text += "\"dra.net\"]";
  } else if (shape == "attribute_and_chain") {
    for (int i = 0; i < terms; ++i) {
      text += (i > 0 ? " && " : "") + std::string("device.attributes[\"dra.net\"].numaNode != ") +
              std::to_string(i + 2);
    }
  } else if (shape == "string_literal") {
    text = "device.attributes[\"dra.net\"].ifName == \"" + std::string(static_cast<std::size_t>(terms) * 16, 'x') + "\"";
  } else {  // exists_macro
    text = "[";
    for (int i = 0; i < terms; ++i) {
      text += std::to_string(i) + ", ";
    }
    text += "0].exists(n, n == device.attributes[\"dra.net\"].numaNode + " + std::to_string(terms) + ")";
  }
  return text;
}

// cel::compile keeps nothing (a cache is its caller's, cel::ProgramCache), so every iteration
// parses.
void parse_and_evaluate(benchmark::State& state, const std::string& shape) {
  const std::string text = expression(shape, static_cast<int>(state.range(0)));
  for (auto _ : state) {
    auto program = cel::compile(text);
    if (!program) {
      state.SkipWithError(program.error().message.c_str());
      return;
    }
    benchmark::DoNotOptimize(cel::evaluate(*program, nic()));
  }
  state.SetComplexityN(static_cast<benchmark::IterationCount>(text.size()));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(text.size()));
  state.counters["bytes"] = static_cast<double>(text.size());
}

std::string hostile(const std::string& shape, int size) {
  if (shape == "doubling") {
    std::string text = "\"" + std::string(1024, 'a') + "\"";
    for (int i = 0; i < size; ++i) {
      text = "[" + text + "].map(x, x + x)[0]";
    }
    return "size(" + text + ") > 0";
  }
  std::string range;
  for (int i = 0; i < 100; ++i) {
    range += (i == 0 ? "" : ",") + std::to_string(i);
  }
  return "[[" + range + "]].all(l, l.all(a, l.all(b, l.all(c, a + b + c >= 0))))";
}

// One evaluation of a compiled hostile expression; `cost` and `outcome` as counters.
void evaluate_hostile(benchmark::State& state, const std::string& shape) {
  const auto program = cel::compile(hostile(shape, static_cast<int>(state.range(0))));
  if (!program) {
    state.SkipWithError(program.error().message.c_str());
    return;
  }
  cel::Evaluation evaluation;
  for (auto _ : state) {
    evaluation = cel::evaluate(*program, nic());
    benchmark::DoNotOptimize(evaluation);
  }
  state.counters["cost"] = static_cast<double>(evaluation.cost);
  state.counters["unknown"] = evaluation.outcome == cel::Outcome::kUnknown ? 1 : 0;
}

// Prints the usual table and keeps (bytes, seconds) per shape for the fit.
class FitReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      const std::string name = run.benchmark_name();
      if (run.run_type != Run::RT_Iteration || run.error_occurred || name.starts_with("limit/")) {
        continue;
      }
      const std::string shape = name.substr(name.find('/') + 1, name.rfind('/') - name.find('/') - 1);
      samples_[shape].push_back({run.counters.at("bytes").value, run.GetAdjustedCPUTime()});
    }
  }

  void print_fits() const {
    std::printf("\nfitted exponent k in CPU time ~ bytes^k (1 = linear):\n");
    for (const auto& [shape, points] : samples_) {
      std::printf("  %-22s k = %.2f  (%zu sizes, %.0f to %.0f bytes)\n", shape.c_str(),
                  topoguard::bench::fitted_exponent(points), points.size(), points.front().n,
                  points.back().n);
    }
  }

 private:
  std::map<std::string, std::vector<topoguard::bench::GrowthPoint>> samples_;
};

}  // namespace

int main(int argc, char** argv) {
  for (const char* shape :
       {"or_chain", "in_list", "attribute_and_chain", "string_literal", "exists_macro"}) {
    benchmark::RegisterBenchmark((std::string("cel/") + shape).c_str(),
                                 [shape](benchmark::State& state) {
                                   parse_and_evaluate(state, shape);
                                 })
        ->RangeMultiplier(4)
        ->Range(64, 2048)
        ->Unit(benchmark::kMicrosecond);
  }
  benchmark::RegisterBenchmark("limit/doubling", [](benchmark::State& state) {
    evaluate_hostile(state, "doubling");
  })->DenseRange(4, 16, 4)->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("limit/nested_all", [](benchmark::State& state) {
    evaluate_hostile(state, "nested_all");
  })->Arg(100)->Unit(benchmark::kMillisecond);
  benchmark::Initialize(&argc, argv);
  FitReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  reporter.print_fits();
  benchmark::Shutdown();
  return 0;
}
