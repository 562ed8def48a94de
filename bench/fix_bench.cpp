// Google Benchmark of how `topoguard fix` grows with its input, against `topoguard audit` of the
// same input as the baseline (not a test; no thresholds). One file of N documents (N = 2,500,
// 5,000, 10,000, 20,000; half unaligned ResourceClaimTemplates that get a fix, half aligned
// ones, each after a comment line), run as the commands run them, without the file I/O:
//   audit/N   parse, audit, write the text report
//   fix/N     parse, audit, apply every enabled fix (the text `topoguard fix` writes)
// After the runs it prints per command the exponent k of time ~ N^k (least squares on log-log;
// CPU time, wall time in brackets) and, per size, the fix/audit time ratio; with
// --benchmark_repetitions=N, of the median of the N runs.
//   build/bench/topoguard_fix_bench [--benchmark_repetitions=3] [--benchmark_filter=fix]
#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "growth_fit.h"
#include "topoguard/audit/audit_runner.h"
#include "topoguard/audit/manifest_fixer.h"
#include "topoguard/audit/manifest_reader.h"
#include "topoguard/audit/report_writer.h"
#include "topoguard/policy/policy_loader.h"

namespace {

namespace audit = topoguard::audit;
using topoguard::bench::fitted_exponent;
using topoguard::bench::GrowthPoint;
using topoguard::bench::GrowthSeries;

std::string manifests(std::size_t count) {
  std::string text;
  for (std::size_t i = 0; i < count; ++i) {
    text += "---\n# template " + std::to_string(i) + "\n";
    text += "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata:\n  name: t" +
            std::to_string(i) + "\n  namespace: ml\nspec:\n  spec:\n    devices:\n      requests:\n"
            "      - name: gpu\n        exactly: {deviceClassName: gpu.nvidia.com}\n"
            "      - name: nic\n        exactly: {deviceClassName: dranet}\n";
    if (i % 2 == 1) {
      text += "      constraints:\n      - requests: [gpu, nic]\n"
              "        matchAttribute: resource.kubernetes.io/pcieRoot\n";
    }
  }
  return text;
}

const topoguard::policy::PolicySet& policies() {
  static const topoguard::policy::PolicySet set = topoguard::policy::load_builtin_policies().value();
  return set;
}

void run_command(benchmark::State& state, bool fix) {
  const auto documents = static_cast<std::size_t>(state.range(0));
  const std::string text = manifests(documents);
  const auto writer = audit::make_report_writer(audit::ReportFormat::kText);
  for (auto _ : state) {
    const audit::ManifestSet set = audit::parse_manifests({{"in.yaml", text}});
    const audit::AuditRun run = audit::run_audit(set, policies());
    if (fix) {
      const audit::FixOutcome outcome = audit::apply_fixes(set, run);
      if (outcome.files.at(0).changes.size() != documents / 2 || !outcome.errors.empty()) {
        state.SkipWithError("the fixer did not apply one fix per unaligned template");
        return;
      }
      benchmark::DoNotOptimize(outcome.files.at(0).text.data());
    } else {
      std::ostringstream out;
      writer->write(run.report, out, out);
      if (run.report.findings.size() != documents / 2) {
        state.SkipWithError("expected one finding per unaligned template");
        return;
      }
      benchmark::DoNotOptimize(out.str().size());
    }
  }
  state.counters["documents"] = static_cast<double>(documents);
  state.counters["bytes"] = static_cast<double>(text.size());
}

// Prints the console table and keeps (documents, seconds) per command for the fit.
class FixGrowthReporter final : public benchmark::ConsoleReporter {
 public:
  // benchmark::BenchmarkReporter
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      const std::string name = run.benchmark_name();
      if (const auto documents = run.counters.find("documents");
          documents != run.counters.end()) {
        times_[name.substr(0, name.find('/'))].add(documents->second.value, run);
      }
    }
  }

  void print_growth() const {
    std::printf("\nfitted exponent k of CPU time ~ documents^k (least squares on log-log; wall "
                "time in brackets)\n");
    for (const auto& [command, times] : times_) {
      std::printf("  %-6s k = %.2f [%.2f]\n", command.c_str(), fitted_exponent(times.cpu),
                  fitted_exponent(times.wall));
    }
    const auto audit_times = times_.find("audit");
    const auto fix_times = times_.find("fix");
    if (audit_times == times_.end() || fix_times == times_.end() ||
        audit_times->second.cpu.size() != fix_times->second.cpu.size()) {
      return;
    }
    std::printf("%10s %12s %12s %10s\n", "documents", "audit CPU s", "fix CPU s", "fix/audit");
    for (std::size_t i = 0; i < fix_times->second.cpu.size(); ++i) {
      const GrowthPoint& audited = audit_times->second.cpu[i];
      const GrowthPoint& fixed = fix_times->second.cpu[i];
      std::printf("%10.0f %12.3f %12.3f %10.2f\n", fixed.n, audited.seconds, fixed.seconds,
                  fixed.seconds / audited.seconds);
    }
  }

 private:
  std::map<std::string, GrowthSeries> times_;
};

}  // namespace

int main(int argc, char** argv) {
  for (const bool fix : {false, true}) {
    benchmark::RegisterBenchmark(fix ? "fix" : "audit",
                                 [fix](benchmark::State& state) { run_command(state, fix); })
        ->Arg(2500)
        ->Arg(5000)
        ->Arg(10000)
        ->Arg(20000)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  }
  benchmark::Initialize(&argc, argv);
  FixGrowthReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  reporter.print_growth();
  benchmark::Shutdown();
  return 0;
}
