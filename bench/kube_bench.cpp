// The watch-stream parser against stream size: `build/bench/topoguard_kube_bench`.
//   watch/parse/N   N events (ResourceSlice MODIFIED events with device attributes, a bookmark
//                   every tenth) fed in 4 KiB chunks cut anywhere: split and decoded to Json.
//   watch/split/N   the same bytes through the boundary scanner alone.
//   watch/one_event/KiB  one event of that size arriving in 4 KiB chunks (a held partial event is
//                   never scanned again, so this stays linear too).
// Reports events/s and bytes/s, and the fitted exponent k of CPU time ~ bytes^k per family
// (1 = linear).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "growth_fit.h"
#include "topoguard/kube/watch_stream.h"

namespace {

using topoguard::kube::JsonValueSplitter;
using topoguard::kube::WatchEvent;
using topoguard::kube::WatchStreamParser;

constexpr std::size_t kChunk = 4096;

std::string slice_event(int index) {
  std::string devices;
  for (int d = 0; d < 8; ++d) {
    devices +=
        std::string(d == 0 ? "" : ",") + R"({"name":"gpu)" + std::to_string(d) +
        R"(","attributes":{"resource.kubernetes.io/pcieRoot":{"string":"pci0000:)" +
        std::to_string(10 + d) +
        R"("},"gpu.nvidia.com/productName":{"string":"NVIDIA H100 80GB HBM3"},"gpu.nvidia.com/uuid":{"string":"GPU-)" +
        std::to_string(index * 8 + d) + R"(-4b7a-9c1e"},"gpu.nvidia.com/index":{"int":)" +
        std::to_string(d) + R"(}},"capacity":{"memory":{"value":"80Gi"}}})";
  }
  return R"({"type":"MODIFIED","object":{"kind":"ResourceSlice","apiVersion":"resource.k8s.io/v1","metadata":{"name":"node-)" +
         std::to_string(index) + R"(-gpu","resourceVersion":")" + std::to_string(1000 + index) +
         R"(","labels":{"note":"a \"quoted\" {brace}"}},"spec":{"driver":"gpu.nvidia.com","nodeName":"node-)" +
         std::to_string(index) + R"(","pool":{"name":"node-)" + std::to_string(index) +
         R"(","generation":1,"resourceSliceCount":1},"devices":[)" + devices + "]}}}\n";
}

std::string stream_of(int events) {
  std::string text;
  for (int i = 0; i < events; ++i) {
    if (i % 10 == 9) {
      text +=
          R"({"type":"BOOKMARK","object":{"kind":"ResourceSlice","apiVersion":"resource.k8s.io/v1","metadata":{"resourceVersion":")" +
          std::to_string(1000 + i) + "\"}}}\n";
    } else {
      text += slice_event(i);
    }
  }
  return text;
}

std::string one_event_of(std::size_t bytes) {
  std::string text =
      R"({"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"big","resourceVersion":"1"},"data":{)";
  int key = 0;
  while (text.size() < bytes) {
    text += std::string(key == 0 ? "" : ",") + "\"k" + std::to_string(key) + "\":\"" +
            std::string(100, 'x') + "\"";
    ++key;
  }
  return text + "}}}\n";
}

void parse(benchmark::State& state, const std::string& text) {
  std::size_t events = 0;
  for (auto _ : state) {
    WatchStreamParser parser(64 * 1024 * 1024);
    std::size_t seen = 0;
    for (std::size_t at = 0; at < text.size(); at += kChunk) {
      const auto fed =
          parser.feed(std::string_view(text).substr(at, kChunk), [&](WatchEvent&& event) {
            benchmark::DoNotOptimize(event.object);
            ++seen;
            return true;
          });
      if (!fed) {
        state.SkipWithError(fed.error().message.c_str());
        return;
      }
    }
    events = seen;
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
  state.counters["events/s"] = benchmark::Counter(static_cast<double>(events * state.iterations()),
                                                  benchmark::Counter::kIsRate);
  state.counters["bytes"] = static_cast<double>(text.size());
}

void split(benchmark::State& state, const std::string& text) {
  std::size_t values = 0;
  for (auto _ : state) {
    JsonValueSplitter splitter(64 * 1024 * 1024);
    std::size_t seen = 0;
    for (std::size_t at = 0; at < text.size(); at += kChunk) {
      const auto fed =
          splitter.feed(std::string_view(text).substr(at, kChunk), [&](std::string_view value) {
            benchmark::DoNotOptimize(value.data());
            ++seen;
            return true;
          });
      benchmark::DoNotOptimize(fed);
    }
    values = seen;
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
  state.counters["events/s"] = benchmark::Counter(static_cast<double>(values * state.iterations()),
                                                  benchmark::Counter::kIsRate);
  state.counters["bytes"] = static_cast<double>(text.size());
}

// Prints the usual table and keeps (bytes, CPU seconds) per family for the fit.
class FitReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      if (run.error_occurred) {
        continue;
      }
      const std::string name = run.benchmark_name();
      const std::string family = name.substr(0, name.rfind('/'));
      series_[family].add(run.counters.at("bytes").value, run);
    }
  }

  void print_fits() const {
    std::printf("\nfitted exponent k in time ~ bytes^k (1 = linear):\n");
    for (const auto& [family, series] : series_) {
      if (series.cpu.size() < 2) {
        continue;
      }
      std::printf("  %-18s k = %.2f CPU, %.2f wall  (%zu sizes, %.0f to %.0f bytes)\n",
                  family.c_str(), topoguard::bench::fitted_exponent(series.cpu),
                  topoguard::bench::fitted_exponent(series.wall), series.cpu.size(),
                  series.cpu.front().n, series.cpu.back().n);
    }
  }

 private:
  std::map<std::string, topoguard::bench::GrowthSeries> series_;
};

}  // namespace

int main(int argc, char** argv) {
  static std::map<int, std::string> streams;
  static std::map<int, std::string> big_events;
  for (const int events : {64, 256, 1024, 4096, 16384}) {
    streams[events] = stream_of(events);
    benchmark::RegisterBenchmark(
        ("watch/parse/" + std::to_string(events)).c_str(),
        [events](benchmark::State& state) { parse(state, streams[events]); })
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(
        ("watch/split/" + std::to_string(events)).c_str(),
        [events](benchmark::State& state) { split(state, streams[events]); })
        ->Unit(benchmark::kMillisecond);
  }
  for (const int kib : {64, 256, 1024, 4096}) {
    big_events[kib] = one_event_of(static_cast<std::size_t>(kib) * 1024);
    benchmark::RegisterBenchmark(("watch/one_event/" + std::to_string(kib)).c_str(),
                                 [kib](benchmark::State& state) { parse(state, big_events[kib]); })
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::Initialize(&argc, argv);
  FitReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  reporter.print_fits();
  benchmark::Shutdown();
  return 0;
}
