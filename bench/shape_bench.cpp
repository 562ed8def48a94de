// Feasibility at admission against cluster size, node by node and by node shape
// (`build/bench/topoguard_shape_bench`). Generated clusters of 500 to 5,000 nodes as JSON
// ResourceSlices: 16 devices per node (8 GPUs with the attributes of NVIDIA's DRA driver, 8 RDMA
// NIC VFs with dranet's), in four node shapes (GPU model, PCIe root layout), per-node values
// (GPU uuid and serial, NIC MAC) as real slices have them. Per size: the JSON bytes, the heap
// the ClusterState and the shape index hold (mallinfo2 deltas), build and update times, and the
// latency of three claims (aligned GPU+NIC, satisfiable; aligned 5 GPUs on one root,
// unsatisfiable; a CEL selector on the GPU model) with p50/p99 over the runs, node by node and
// by shape. After the runs: the exponents fitted to time = c * nodes^k from 500 to 5,000, and the
// by-shape/node-by-node ratios.
#include <benchmark/benchmark.h>
#include <malloc.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "generated_cluster.h"
#include "growth_fit.h"
#include "topoguard/cluster/cluster_state.h"
#include "topoguard/cluster/feasibility.h"
#include "topoguard/cluster/shape_index.h"
#include "topoguard/common/yaml_document.h"
#include "topoguard/k8s/claim_view.h"

namespace {

using topoguard::Json;
using topoguard::bench::hex;
namespace cluster = topoguard::cluster;

struct NodeShape {
  const char* product;
  const char* architecture;
  const char* compute;
  int gpu_roots;  // GPUs spread over this many PCIe roots (NICs follow them)
};

constexpr NodeShape kShapes[] = {
    {"NVIDIA H100 80GB HBM3", "Hopper", "9.0", 4},
    {"NVIDIA H200", "Hopper", "9.0", 4},
    {"NVIDIA A100-SXM4-80GB", "Ampere", "8.0", 2},
    {"NVIDIA B200", "Blackwell", "10.0", 8},
};

Json gpu(int node, int i, const NodeShape& shape) {
  const int root = i * shape.gpu_roots / 8;
  const std::string bus = hex(0x10 + root * 0x20, 2);
  Json attributes = {
      {"type", {{"string", "gpu"}}},
      {"uuid", {{"string", "GPU-" + hex(node, 8) + "-7a1c-4e2b-9f3d-" + hex(i, 12)}}},
      {"productName", {{"string", std::string(shape.product)}}},
      {"brand", {{"string", "Nvidia"}}},
      {"architecture", {{"string", std::string(shape.architecture)}}},
      {"cudaComputeCapability", {{"version", std::string(shape.compute) + ".0"}}},
      {"driverVersion", {{"version", "570.133.20"}}},
      {"cudaDriverVersion", {{"version", "12.8.0"}}},
      {"pciBusID", {{"string", "0000:" + hex(0x18 + i * 0x10, 2) + ":00.0"}}},
      {"index", {{"int", i}}},
      {"minor", {{"int", i}}},
      {"serial", {{"string", "1652" + std::to_string(1000000 + node * 8 + i)}}},
      {"resource.kubernetes.io/pcieRoot", {{"string", "pci0000:" + bus}}},
  };
  return Json{{"name", "gpu-" + std::to_string(i)},
              {"attributes", std::move(attributes)},
              {"capacity", {{"memory", {{"value", "80Gi"}}}}}};
}

Json nic(int node, int i, const NodeShape& shape) {
  const int root = i * shape.gpu_roots / 8;
  const std::string bus = hex(0x10 + root * 0x20, 2);
  Json attributes = {
      {"dra.net/kind", {{"string", "network"}}},
      {"dra.net/ifName", {{"string", "ens" + std::to_string(i) + "f0v0"}}},
      {"dra.net/mac",
       {{"string",
         "0c:42:a1:" + hex(node >> 8 & 0xff, 2) + ":" + hex(node & 0xff, 2) + ":" + hex(i, 2)}}},
      {"dra.net/rdma", {{"bool", true}}},
      {"dra.net/sriov", {{"bool", true}}},
      {"dra.net/virtual", {{"bool", true}}},
      {"dra.net/pciVendor", {{"string", "Mellanox Technologies"}}},
      {"dra.net/pciDevice", {{"string", "ConnectX-7 Virtual Function"}}},
      {"dra.net/pciAddress", {{"string", "0000:" + hex(0x19 + i * 0x10, 2) + ":00.1"}}},
      {"dra.net/numaNode", {{"int", i / 4}}},
      {"resource.kubernetes.io/pcieRoot", {{"string", "pci0000:" + bus}}},
  };
  return Json{{"name", "nic-" + std::to_string(i) + "-vf0"}, {"attributes", std::move(attributes)}};
}

Json slice(const std::string& node, const std::string& driver, Json devices) {
  return Json{{"apiVersion", "resource.k8s.io/v1"},
              {"kind", "ResourceSlice"},
              {"metadata", {{"name", node + "-" + driver + "-x7k2p"}}},
              {"spec",
               {{"driver", driver},
                {"nodeName", node},
                {"pool", {{"name", node}, {"generation", 1}, {"resourceSliceCount", 1}}},
                {"devices", std::move(devices)}}}};
}

std::vector<Json> generate_cluster(int nodes) {
  std::vector<Json> objects;
  for (int n = 0; n < nodes; ++n) {
    const NodeShape& shape = kShapes[n % 4];
    const std::string node = "gpu-node-" + std::to_string(100000 + n);
    Json gpus = Json::array();
    Json nics = Json::array();
    for (int i = 0; i < 8; ++i) {
      gpus.push_back(gpu(n, i, shape));
      nics.push_back(nic(n, i, shape));
    }
    objects.push_back(slice(node, "gpu.nvidia.com", std::move(gpus)));
    objects.push_back(slice(node, "dra.net", std::move(nics)));
  }
  using topoguard::bench::device_class;
  objects.push_back(device_class(
      "gpu.nvidia.com",
      "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"));
  objects.push_back(device_class("dranet", "device.driver == 'dra.net'"));
  return objects;
}

std::size_t heap_in_use() { return mallinfo2().uordblks; }

cluster::ClusterState build(const std::vector<Json>& objects) {
  cluster::ClusterStateBuilder builder;
  for (const Json& object : objects) {
    if (!builder.add(object)) {
      std::abort();
    }
  }
  return std::move(builder).finish();
}

// One generated cluster per size, its state and shapes, kept for every benchmark of that size.
struct Fixture {
  std::size_t json_bytes = 0;
  std::size_t state_bytes = 0;
  std::size_t shape_bytes = 0;
  std::vector<Json> objects;
  std::unique_ptr<cluster::ClusterState> state;
  std::unique_ptr<cluster::ShapeIndex> index;
  std::unique_ptr<cluster::NodeShapes> shapes;
};

Fixture& fixture(int nodes) {
  static std::map<int, Fixture> fixtures;
  auto [it, fresh] = fixtures.try_emplace(nodes);
  Fixture& f = it->second;
  if (fresh) {
    f.objects = generate_cluster(nodes);
    for (const Json& object : f.objects) {
      f.json_bytes += object.dump().size();
    }
    malloc_trim(0);
    const std::size_t before = heap_in_use();
    f.state = std::make_unique<cluster::ClusterState>(build(f.objects));
    const std::size_t with_state = heap_in_use();
    f.index = std::make_unique<cluster::ShapeIndex>(cluster::ShapeIndex::build(*f.state));
    f.shapes = std::make_unique<cluster::NodeShapes>(f.index->view(*f.state));
    f.state_bytes = with_state - before;
    f.shape_bytes = heap_in_use() - with_state;
  }
  return f;
}

topoguard::k8s::ClaimSpec claim(const std::string& devices) {
  const topoguard::YamlStream stream = topoguard::parse_yaml_stream(
      "kind: ResourceClaim\nspec:\n  devices: " + devices + "\n", "claim.yaml");
  return topoguard::k8s::read_claim_spec(stream.documents.at(0).value).value();
}

struct ClaimCase {
  const char* name;
  std::string devices;
  cluster::Verdict expected;
};

const std::vector<ClaimCase>& claims() {
  static const std::vector<ClaimCase> cases = {
      {"aligned", R"({requests: [{name: gpu, exactly: {deviceClassName: gpu.nvidia.com}},
        {name: nic, exactly: {deviceClassName: dranet}}],
        constraints: [{requests: [gpu, nic], matchAttribute: resource.kubernetes.io/pcieRoot}]})",
       cluster::Verdict::kSatisfiable},
      {"unsat", R"({requests: [{name: gpu, exactly: {deviceClassName: gpu.nvidia.com, count: 5}},
        {name: nic, exactly: {deviceClassName: dranet}}],
        constraints: [{requests: [gpu, nic], matchAttribute: resource.kubernetes.io/pcieRoot}]})",
       cluster::Verdict::kUnsatisfiable},
      {"cel", R"({requests: [{name: gpu, exactly: {deviceClassName: gpu.nvidia.com, count: 2,
        selectors: [{cel: {expression: "device.attributes['gpu.nvidia.com'].productName.startsWith('NVIDIA H') && device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0"}}]}},
        {name: nic, exactly: {deviceClassName: dranet}}],
        constraints: [{requests: [gpu, nic], matchAttribute: resource.kubernetes.io/pcieRoot}]})",
       cluster::Verdict::kSatisfiable},
      // A selector reading each GPU's own uuid, against a string no GPU has (issue 38).
      {"uuid", R"({requests: [{name: gpu, exactly: {deviceClassName: gpu.nvidia.com,
        selectors: [{cel: {expression: "device.attributes['gpu.nvidia.com'].uuid != 'GPU-x'"}}]}},
        {name: nic, exactly: {deviceClassName: dranet}}],
        constraints: [{requests: [gpu, nic], matchAttribute: resource.kubernetes.io/pcieRoot}]})",
       cluster::Verdict::kSatisfiable},
  };
  return cases;
}

// Sizes and claims x {node by node, by shape}: (nodes, time) points, medians for the ratios.
struct Series {
  std::vector<topoguard::bench::GrowthPoint> points;
  std::map<int, double> p50;
};
std::map<std::string, Series>& series() {
  static std::map<std::string, Series> all;
  return all;
}

double percentile(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  const auto at = static_cast<std::size_t>(q * static_cast<double>(values.size() - 1) + 0.5);
  return values[std::min(at, values.size() - 1)];
}

// This thread's CPU time: on a shared machine, wall-clock percentiles mostly measure preemption.
double thread_seconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

// Wall-clock p50/p99/max, and CPU-time p50/p99 (`cpu_seconds`, when measured).
void report_latency(benchmark::State& state, const std::string& name, int nodes,
                    const std::vector<double>& seconds,
                    const std::vector<double>& cpu_seconds = {}) {
  if (seconds.empty()) {
    return;
  }
  const double p50 = percentile(seconds, 0.5);
  state.counters["p50_us"] = p50 * 1e6;
  state.counters["p99_us"] = percentile(seconds, 0.99) * 1e6;
  state.counters["max_us"] = *std::max_element(seconds.begin(), seconds.end()) * 1e6;
  if (!cpu_seconds.empty()) {
    state.counters["cpu_p50_us"] = percentile(cpu_seconds, 0.5) * 1e6;
    state.counters["cpu_p99_us"] = percentile(cpu_seconds, 0.99) * 1e6;
  }
  Series& s = series()[name];
  s.points.push_back({static_cast<double>(nodes), p50});
  s.p50[nodes] = p50;
}

// Runs `step` once per iteration; the wall-clock seconds of each run.
template <typename Step>
std::vector<double> time_each(benchmark::State& state, Step step) {
  std::vector<double> seconds;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    step();
    seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return seconds;
}

// Slices to state, and the memory that takes against the JSON.
void BM_BuildClusterState(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  Fixture& f = fixture(nodes);
  const std::vector<double> seconds =
      time_each(state, [&] { benchmark::DoNotOptimize(build(f.objects)); });
  state.counters["json_bytes"] = static_cast<double>(f.json_bytes);
  state.counters["state_bytes"] = static_cast<double>(f.state_bytes);
  state.counters["state_per_json"] =
      static_cast<double>(f.state_bytes) / static_cast<double>(f.json_bytes);
  report_latency(state, "build_state", nodes, seconds);
}

// The shape index from scratch, and its memory.
void BM_BuildShapeIndex(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  Fixture& f = fixture(nodes);
  const std::vector<double> seconds =
      time_each(state, [&] { benchmark::DoNotOptimize(cluster::NodeShapes::of(*f.state)); });
  state.counters["shapes"] = static_cast<double>(f.index->shape_count());
  state.counters["index_bytes"] = static_cast<double>(f.shape_bytes);
  state.counters["per_node_attributes"] =
      static_cast<double>(f.index->per_node_attributes().size());
  report_latency(state, "build_shapes", nodes, seconds);
}

// One node's slices changed: its shape recomputed (the index is kept across snapshots).
void BM_UpdateOneNode(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  Fixture& f = fixture(nodes);
  cluster::ShapeIndex index = cluster::ShapeIndex::build(*f.state);
  std::size_t n = 0;
  const std::vector<double> seconds = time_each(state, [&] {
    index.update_node(*f.state, f.state->nodes()[n++ % f.state->nodes().size()].name);
  });
  report_latency(state, "update_one_node", nodes, seconds);
}

// A new snapshot's view of the kept index (O(nodes) look-ups).
void BM_ShapeView(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  Fixture& f = fixture(nodes);
  const std::vector<double> seconds =
      time_each(state, [&] { benchmark::DoNotOptimize(f.index->view(*f.state)); });
  report_latency(state, "shape_view", nodes, seconds);
}

// range(0): nodes; range(1): claim; range(2): 1 by shape, 0 node by node.
void BM_Feasibility(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  const ClaimCase& c = claims()[static_cast<std::size_t>(state.range(1))];
  const bool grouped = state.range(2) != 0;
  Fixture& f = fixture(nodes);
  const topoguard::k8s::ClaimSpec spec = claim(c.devices);
  cluster::FeasibilityOptions options;
  options.shapes = grouped ? f.shapes.get() : nullptr;
  std::vector<double> seconds;
  std::vector<double> cpu_seconds;
  for (auto _ : state) {
    const double cpu_start = thread_seconds();
    const auto start = std::chrono::steady_clock::now();
    const cluster::ClaimFeasibility result = cluster::check_feasibility(spec, *f.state, options);
    seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    cpu_seconds.push_back(thread_seconds() - cpu_start);
    if (result.verdict != c.expected) {
      state.SkipWithError("unexpected verdict");
      break;
    }
    benchmark::DoNotOptimize(result);
  }
  state.SetLabel(std::string(c.name) + (grouped ? " by shape" : " node by node"));
  report_latency(state,
                 std::string("feasibility ") + c.name + (grouped ? " by shape" : " node by node"),
                 nodes, seconds, cpu_seconds);
}

void sizes(benchmark::internal::Benchmark* b) {
  for (int nodes : {500, 1000, 2000, 5000}) {
    b->Args({nodes});
  }
}

// Every size and claim, by shape (kGrouped 1) or node by node (0).
template <int kGrouped>
void feasibility_args(benchmark::internal::Benchmark* b) {
  for (int nodes : {500, 1000, 2000, 5000}) {
    for (int c = 0; c < static_cast<int>(claims().size()); ++c) {
      b->Args({nodes, c, kGrouped});
    }
  }
}

BENCHMARK(BM_BuildClusterState)->Apply(sizes)->Iterations(5)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BuildShapeIndex)->Apply(sizes)->Iterations(5)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_UpdateOneNode)->Apply(sizes)->Iterations(2000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ShapeView)->Apply(sizes)->Iterations(50)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Feasibility)
    ->Apply(feasibility_args<1>)
    ->Iterations(500)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Feasibility)->Apply(feasibility_args<0>)->Iterations(5)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  for (const auto& [name, s] : series()) {
    if (s.points.size() >= 2) {
      std::printf("%s: fitted exponent %.2f (p50 ~ nodes^k, 500 to 5,000 nodes)\n", name.c_str(),
                  topoguard::bench::fitted_exponent(s.points));
    }
  }
  for (const ClaimCase& c : claims()) {
    const auto grouped = series().find(std::string("feasibility ") + c.name + " by shape");
    const auto flat = series().find(std::string("feasibility ") + c.name + " node by node");
    if (grouped == series().end() || flat == series().end()) {
      continue;
    }
    for (const auto& [nodes, p50] : grouped->second.p50) {
      if (const auto it = flat->second.p50.find(nodes); it != flat->second.p50.end()) {
        std::printf("%s, %d nodes: by shape %.1f us, node by node %.1f us (%.0fx)\n", c.name, nodes,
                    p50 * 1e6, it->second * 1e6, it->second / p50);
      }
    }
  }
  benchmark::Shutdown();
  return 0;
}
