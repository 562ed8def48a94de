// Cluster-state costs against cluster size (`build/bench/topoguard_cluster_bench`): reading
// ResourceSlices into the per-node device view, and checking one aligned GPU+NIC claim for
// feasibility. Generated nodes as in the issue: 16 devices each (8 GPUs, 8 NICs, 4 PCIe roots),
// one GPU slice and one NIC slice per node, with the DeviceClasses of NVIDIA's chart and dra.net.
// After the runs it prints the exponent fitted to time = c * nodes^k (least squares on logs).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "generated_cluster.h"
#include "growth_fit.h"
#include "topoguard/cluster/cluster_state.h"
#include "topoguard/cluster/feasibility.h"
#include "topoguard/common/yaml_document.h"
#include "topoguard/k8s/claim_view.h"

namespace {

using topoguard::Json;
namespace cluster = topoguard::cluster;

Json device(const std::string& name, int root, bool gpu) {
  Json attributes = Json::object();
  attributes["resource.kubernetes.io/pcieRoot"] = {{"string", "pci0000:" + std::to_string(root * 2 + 10)}};
  if (gpu) {
    attributes["type"] = {{"string", "gpu"}};
  } else {
    attributes["dra.net/rdma"] = {{"bool", true}};
  }
  return Json{{"name", name}, {"attributes", std::move(attributes)}};
}

std::vector<Json> generate_cluster(int nodes) {
  std::vector<Json> objects;
  for (int n = 0; n < nodes; ++n) {
    const std::string node = "node-" + std::to_string(n);
    for (bool gpu : {true, false}) {
      Json devices = Json::array();
      for (int i = 0; i < 8; ++i) {
        devices.push_back(device((gpu ? "gpu-" : "nic-") + std::to_string(i), i / 2, gpu));
      }
      const std::string driver = gpu ? "gpu.nvidia.com" : "dra.net";
      objects.push_back(Json{{"apiVersion", "resource.k8s.io/v1"},
                             {"kind", "ResourceSlice"},
                             {"metadata", {{"name", node + "-" + driver}}},
                             {"spec",
                              {{"driver", driver},
                               {"nodeName", node},
                               {"pool", {{"name", node}, {"resourceSliceCount", 1}}},
                               {"devices", std::move(devices)}}}});
    }
  }
  using topoguard::bench::device_class;
  objects.push_back(device_class(
      "gpu.nvidia.com",
      "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"));
  objects.push_back(device_class("dranet", "device.driver == 'dra.net'"));
  return objects;
}

cluster::ClusterState build(const std::vector<Json>& objects) {
  cluster::ClusterStateBuilder builder;
  for (const Json& object : objects) {
    if (!builder.add(object)) {
      std::abort();
    }
  }
  return std::move(builder).finish();
}

topoguard::k8s::ClaimSpec aligned_claim() {
  const topoguard::YamlStream stream = topoguard::parse_yaml_stream(R"(
kind: ResourceClaimTemplate
spec:
  spec:
    devices:
      requests:
      - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}
      - {name: nic, exactly: {deviceClassName: dranet}}
      constraints:
      - {requests: [gpu, nic], matchAttribute: resource.kubernetes.io/pcieRoot}
)",
                                                                    "claim.yaml");
  return topoguard::k8s::read_claim_spec(stream.documents.at(0).value).value();
}

std::map<std::string, std::vector<topoguard::bench::GrowthPoint>>& timings() {
  static std::map<std::string, std::vector<topoguard::bench::GrowthPoint>> points;
  return points;
}

// Reading the slices of `nodes` nodes into the device view.
void BM_BuildClusterState(benchmark::State& state) {
  const std::vector<Json> objects = generate_cluster(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    benchmark::DoNotOptimize(build(objects));
  }
  state.counters["devices"] = static_cast<double>(state.range(0) * 16);
  state.SetComplexityN(state.range(0));
}

// One aligned 1 GPU + 1 NIC claim checked on every node (the answer: satisfiable everywhere,
// so every node is searched; the claim's verdict does not stop at the first node that fits).
void BM_FeasibilityOneClaim(benchmark::State& state) {
  const cluster::ClusterState cluster_state = build(generate_cluster(static_cast<int>(state.range(0))));
  const topoguard::k8s::ClaimSpec claim = aligned_claim();
  for (auto _ : state) {
    const cluster::ClaimFeasibility result = cluster::check_feasibility(claim, cluster_state);
    if (result.verdict != cluster::Verdict::kSatisfiable) {
      state.SkipWithError("expected satisfiable");
      break;
    }
    benchmark::DoNotOptimize(result);
  }
  state.counters["devices"] = static_cast<double>(state.range(0) * 16);
  state.SetComplexityN(state.range(0));
}

BENCHMARK(BM_BuildClusterState)->RangeMultiplier(10)->Range(1, 1000)->Unit(benchmark::kMillisecond)->Complexity();
BENCHMARK(BM_FeasibilityOneClaim)->RangeMultiplier(10)->Range(1, 1000)->Unit(benchmark::kMillisecond)->Complexity();

// Collects (nodes, time per iteration) per benchmark to fit the exponent.
class ExponentReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.run_type == Run::RT_Iteration && run.iterations > 0 && !run.error_occurred) {
        // The smallest size (1 node) is dominated by fixed costs: fitted from 10 nodes on.
        if (run.complexity_n >= 10) {
          timings()[run.run_name.function_name].push_back(
              {static_cast<double>(run.complexity_n), run.GetAdjustedCPUTime()});
        }
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  ExponentReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  for (const auto& [name, points] : timings()) {
    if (points.size() >= 2) {
      std::printf("%s: fitted exponent %.2f (CPU time ~ nodes^k, 16 devices per node)\n",
                  name.c_str(), topoguard::bench::fitted_exponent(points));
    }
  }
  benchmark::Shutdown();
  return 0;
}
