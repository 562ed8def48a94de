// Background reports against the number of claim templates in the cache (500 to 10,000, half of
// them unaligned): what a pass computes before writing (reports::desired_reports: the audit, one
// report per object and its content hash), beside the audit alone over the same objects as the
// baseline. Prints the exponents fitted to time = c * objects^k.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "growth_fit.h"
#include "topoguard/audit/audit_runner.h"
#include "topoguard/policy/policy_loader.h"
#include "topoguard/reports/report_sync.h"

namespace {

using topoguard::Json;

Json claim_template(int index) {
  Json devices = {
      {"requests",
       Json::array({{{"name", "gpu"}, {"exactly", {{"deviceClassName", "gpu.nvidia.com"}}}},
                    {{"name", "nic"}, {"exactly", {{"deviceClassName", "dra.net"}}}}})}};
  if (index % 2 == 0) {
    devices["constraints"] = Json::array(
        {{{"requests", {"gpu", "nic"}}, {"matchAttribute", "resource.kubernetes.io/pcieRoot"}}});
  }
  const std::string name = "t" + std::to_string(index);
  char uid[40];
  std::snprintf(uid, sizeof(uid), "00000000-0000-0000-0000-%012d", index);
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "ResourceClaimTemplate"},
          {"metadata",
           {{"name", name}, {"namespace", "ns" + std::to_string(index % 20)}, {"uid", uid}}},
          {"spec", {{"spec", {{"devices", devices}}}}}};
}

topoguard::cache::CacheSnapshotPtr snapshot_of(int objects) {
  std::vector<Json> templates;
  for (int i = 0; i < objects; ++i) {
    templates.push_back(claim_template(i));
  }
  topoguard::cache::ObjectStore store;
  store.replace("resourceclaimtemplates.v1.resource.k8s.io", std::move(templates));
  return topoguard::cache::build_snapshot(store, 1);
}

const topoguard::policy::PolicySet& policies() {
  static const topoguard::policy::PolicySet set = *topoguard::policy::load_builtin_policies();
  return set;
}

void BM_DesiredReports(benchmark::State& state) {
  const auto snapshot = snapshot_of(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    auto desired = topoguard::reports::desired_reports(*snapshot, policies(), {});
    benchmark::DoNotOptimize(desired);
  }
  state.SetComplexityN(state.range(0));
}

// The baseline: the audit of the same objects, read once into a manifest set.
void BM_AuditOnly(benchmark::State& state) {
  std::vector<std::pair<std::string, Json>> objects;
  for (int i = 0; i < state.range(0); ++i) {
    objects.emplace_back("t" + std::to_string(i), claim_template(i));
  }
  const auto manifests = topoguard::audit::manifests_from_objects(std::move(objects));
  for (auto _ : state) {
    auto run = topoguard::audit::run_audit(manifests, policies());
    benchmark::DoNotOptimize(run);
  }
  state.SetComplexityN(state.range(0));
}

#define REPORT_SIZES \
  ->Arg(500)->Arg(1000)->Arg(2500)->Arg(5000)->Arg(10000)->Unit(benchmark::kMillisecond)
BENCHMARK(BM_DesiredReports) REPORT_SIZES;
BENCHMARK(BM_AuditOnly) REPORT_SIZES;

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  topoguard::bench::ExponentReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  reporter.print_exponents("CPU time ~ objects^k, 500 -> 10,000 claim templates");
  benchmark::Shutdown();
  return 0;
}
