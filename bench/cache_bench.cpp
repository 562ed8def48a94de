// The cluster cache at scale (`build/bench/topoguard_cache_bench`): generated clusters of 500 to
// 5,000 nodes, 16 devices a node (8 GPUs with NVIDIA's attribute set, 8 RDMA VFs with dranet's,
// as the corpus's Azure GB300 slices publish them), in three node shapes. Measured:
// - sync: the listed objects into the store and the first snapshot (cluster state, node shapes,
//   inventory);
// - one watch event: a slice MODIFIED, or a claim allocated, applied and published (the store
//   takes the event; the snapshot's derived state is built again);
// - memory held by store + snapshot + the builder kept for the next one, against the JSON bytes
//   of the objects (and by the store alone: the objects kept and the slices read).
// After the runs it prints the exponents fitted to time = c * nodes^k.
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <string>
#include <vector>

#include "generated_cluster.h"
#include "growth_fit.h"
#include "topoguard/cache/cache_snapshot.h"
#include "topoguard/cache/object_store.h"

namespace {

using topoguard::Json;
using topoguard::bench::hex;
namespace cache = topoguard::cache;

struct NodeShape {
  const char* product;
  const char* vm_size;
  int roots;  // PCIe roots the 8 GPUs and 8 NICs are spread over
};
constexpr NodeShape kShapes[] = {{"NVIDIA GB300", "Standard_ND128isr_GB300_v6", 4},
                                 {"NVIDIA H100 80GB HBM3", "Standard_ND96isr_H100_v5", 8},
                                 {"NVIDIA A100-SXM4-80GB", "Standard_ND96amsr_A100_v4", 4}};

Json gpu_slice(int node, const NodeShape& shape) {
  const std::string name = "gpu-node-" + std::to_string(node);
  Json devices = Json::array();
  for (int i = 0; i < 8; ++i) {
    const int root = i * shape.roots / 8;
    devices.push_back(
        {{"name", "gpu-" + std::to_string(i)},
         {"attributes",
          {{"addressingMode", {{"string", "ATS"}}},
           {"architecture", {{"string", "Blackwell"}}},
           {"brand", {{"string", "Nvidia"}}},
           {"cudaComputeCapability", {{"version", "10.3.0"}}},
           {"cudaDriverVersion", {{"version", "13.0.0"}}},
           {"driverVersion", {{"version", "580.105.8"}}},
           {"productName", {{"string", shape.product}}},
           {"resource.kubernetes.io/pciBusID", {{"string", hex(root, 4) + ":06:00.0"}}},
           {"resource.kubernetes.io/pcieRoot", {{"string", "pci" + hex(root, 4) + ":00"}}},
           {"type", {{"string", "gpu"}}},
           {"uuid", {{"string", "GPU-" + hex(node, 8) + "-7944-0f37-addf-" + hex(i, 12)}}}}},
         {"capacity", {{"memory", {{"value", "284208Mi"}}}}}});
  }
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "ResourceSlice"},
          {"metadata", {{"name", name + "-gpu.nvidia.com-27g7w"}, {"resourceVersion", "1"}}},
          {"spec",
           {{"driver", "gpu.nvidia.com"},
            {"nodeName", name},
            {"pool", {{"name", name}, {"generation", 1}, {"resourceSliceCount", 1}}},
            {"devices", std::move(devices)}}}};
}

Json nic_slice(int node, const NodeShape& shape, int generation = 1) {
  const std::string name = "gpu-node-" + std::to_string(node);
  Json devices = Json::array();
  for (int i = 0; i < 8; ++i) {
    const int root = i * shape.roots / 8;
    const std::string address = hex(0x100 + i, 4) + ":00:00.0";
    devices.push_back({{"name", "pci-" + hex(0x100 + i, 4) + "-00-00-0"},
                       {"attributes",
                        {{"azure.dra.net/placementGroupId",
                          {{"string", "c6c749e8-a38b-470e-8c94-" + hex(node / 64, 12)}}},
                         {"azure.dra.net/vmSize", {{"string", shape.vm_size}}},
                         {"dra.net/numaNode", {{"int", root * 2 / shape.roots}}},
                         {"dra.net/pciAddress", {{"string", address}}},
                         {"dra.net/pciDevice", {{"string", "ConnectX Family mlx5Gen Virtual Function"}}},
                         {"dra.net/pciSubsystem", {{"string", "0240"}}},
                         {"dra.net/pciVendor", {{"string", "Mellanox Technologies"}}},
                         {"dra.net/rdma", {{"bool", true}}},
                         {"dra.net/rdmaDevice", {{"string", "mlx5_" + std::to_string(i)}}},
                         {"resource.kubernetes.io/pcieRoot",
                          {{"string", "pci" + hex(root, 4) + ":00"}}}}}});
  }
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "ResourceSlice"},
          {"metadata", {{"name", name + "-dra.net-x8k2p"}, {"resourceVersion", "1"}}},
          {"spec",
           {{"driver", "dra.net"},
            {"nodeName", name},
            {"pool", {{"name", name}, {"generation", generation}, {"resourceSliceCount", 1}}},
            {"devices", std::move(devices)}}}};
}

std::vector<Json> generate_slices(int nodes) {
  std::vector<Json> slices;
  for (int node = 0; node < nodes; ++node) {
    const NodeShape& shape = kShapes[node % 3];
    slices.push_back(gpu_slice(node, shape));
    slices.push_back(nic_slice(node, shape));
  }
  return slices;
}

std::vector<Json> device_classes() {
  return {topoguard::bench::device_class("gpu.nvidia.com", "device.driver == \"gpu.nvidia.com\""),
          topoguard::bench::device_class("dra.net", "device.driver == \"dra.net\"")};
}

// A claim on one node's first GPU and NIC, allocated.
Json allocated_claim(int index, int node) {
  const std::string node_name = "gpu-node-" + std::to_string(node);
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "ResourceClaim"},
          {"metadata", {{"name", "pair-" + std::to_string(index)}, {"namespace", "ml"}}},
          {"spec",
           {{"devices",
             {{"requests",
               Json::array({{{"name", "gpu"}, {"exactly", {{"deviceClassName", "gpu.nvidia.com"}}}},
                            {{"name", "nic"}, {"exactly", {{"deviceClassName", "dra.net"}}}}})}}}}},
          {"status",
           {{"allocation",
             {{"devices",
               {{"results",
                 Json::array({{{"request", "gpu"},
                               {"driver", "gpu.nvidia.com"},
                               {"pool", node_name},
                               {"device", "gpu-0"}},
                              {{"request", "nic"},
                               {"driver", "dra.net"},
                               {"pool", node_name},
                               {"device", "pci-0100-00-00-0"}}})}}}}}}}};
}

std::size_t json_bytes(const std::vector<Json>& objects) {
  std::size_t total = 0;
  for (const Json& object : objects) {
    total += object.dump().size();
  }
  return total;
}

cache::ObjectStore synced_store(int nodes) {
  cache::ObjectStore store;
  store.replace("resourceslices", generate_slices(nodes));
  store.replace("deviceclasses", device_classes());
  store.replace("resourceclaims", {});
  return store;
}

void BM_CacheSync(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  const std::vector<Json> listed = generate_slices(nodes);
  std::size_t held = 0;
  std::size_t stored = 0;
  for (auto _ : state) {
    state.PauseTiming();
    // Held memory counts the decoded objects too: the store keeps them.
    const std::size_t before = mallinfo2().uordblks;
    std::vector<Json> items = listed;  // what the list decoded
    state.ResumeTiming();
    cache::ObjectStore store;
    store.replace("resourceslices", std::move(items));
    store.replace("deviceclasses", device_classes());
    stored = mallinfo2().uordblks - before;
    // As the cache keeps it: the builder's node shapes and last store count too.
    cache::SnapshotBuilder builder;
    cache::CacheSnapshotPtr snapshot = builder.build(store, 1);
    held = mallinfo2().uordblks - before;
    benchmark::DoNotOptimize(snapshot);
  }
  const double bytes = static_cast<double>(json_bytes(listed));
  state.counters["json_MiB"] = bytes / (1 << 20);
  state.counters["held_MiB"] = static_cast<double>(held) / (1 << 20);
  state.counters["held_per_json"] = static_cast<double>(held) / bytes;
  state.counters["store_per_json"] = static_cast<double>(stored) / bytes;  // objects and slices
  state.SetComplexityN(nodes);
}

// One slice MODIFIED (a NIC pool's new generation) and the snapshot published after it.
void BM_CacheSliceEvent(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  cache::ObjectStore store = synced_store(nodes);
  cache::SnapshotBuilder builder;  // as the cache keeps it: node shapes re-keyed per event
  benchmark::DoNotOptimize(builder.build(store, 1));
  int generation = 1;
  for (auto _ : state) {
    const int node = generation % nodes;
    store.apply("resourceslices", topoguard::kube::WatchEventType::kModified,
                nic_slice(node, kShapes[node % 3], ++generation));
    benchmark::DoNotOptimize(builder.build(store, static_cast<std::uint64_t>(generation)));
  }
  state.SetComplexityN(nodes);
}

// One claim allocated (ADDED with its status) and the snapshot published after it.
void BM_CacheClaimEvent(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  cache::ObjectStore store = synced_store(nodes);
  cache::SnapshotBuilder builder;
  benchmark::DoNotOptimize(builder.build(store, 0));
  int index = 0;
  for (auto _ : state) {
    store.apply("resourceclaims", topoguard::kube::WatchEventType::kAdded,
                allocated_claim(index, index % nodes));
    ++index;
    benchmark::DoNotOptimize(builder.build(store, static_cast<std::uint64_t>(index)));
  }
  state.SetComplexityN(nodes);
}

// The store's part of an event alone: put the object (what happens per event, not per snapshot).
void BM_CacheStoreApply(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  cache::ObjectStore store = synced_store(nodes);
  int generation = 1;
  for (auto _ : state) {
    state.PauseTiming();
    const int node = generation % nodes;
    Json object = nic_slice(node, kShapes[node % 3], ++generation);
    state.ResumeTiming();
    store.apply("resourceslices", topoguard::kube::WatchEventType::kModified, std::move(object));
  }
  state.SetComplexityN(nodes);
}

#define CACHE_SIZES ->Arg(500)->Arg(1000)->Arg(2000)->Arg(5000)->Unit(benchmark::kMillisecond)
BENCHMARK(BM_CacheSync) CACHE_SIZES->Iterations(2);
BENCHMARK(BM_CacheSliceEvent) CACHE_SIZES;
BENCHMARK(BM_CacheClaimEvent) CACHE_SIZES;
BENCHMARK(BM_CacheStoreApply) CACHE_SIZES;

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  topoguard::bench::ExponentReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  reporter.print_exponents("CPU time ~ nodes^k, 500 -> 5,000 nodes");
  benchmark::Shutdown();
  return 0;
}
