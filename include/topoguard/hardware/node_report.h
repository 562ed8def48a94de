// A node's inventory kept in the cluster (issue 44): what its sysfs says (each GPU and RDMA NIC
// with its pcieRoot and NUMA node, each GPU x NIC path class) and what the drivers publish that
// disagrees with it (attribute-mismatch), as one OpenReports ClusterReport per node, scoped to the
// Node and owned by it. The same view is read back from such a report or from
// `topoguard inventory -o json`, so `topology` can set it beside the slices, and counted by path
// class for the metric topoguard_node_gpu_nic_pairs. Pure: inventory in, documents out.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "topoguard/common/json.h"
#include "topoguard/common/result.h"
#include "topoguard/hardware/pci_inventory.h"
#include "topoguard/hardware/slice_check.h"

namespace topoguard::hardware {

// The reports of this kind carry this label ("true") besides app.kubernetes.io/managed-by:
// `topology` and `evidence` find them by it, and the background report writer, which keeps only
// reports labelled topoguard.dev/background, leaves them alone.
inline constexpr std::string_view kNodeInventoryLabel = "topoguard.dev/node-inventory";
// The results' policy: the node's facts are no policy's, so they are named after the inventory.
inline constexpr std::string_view kNodeInventoryPolicy = "topoguard-node-inventory";
// A report holds at most this many results (mismatches and sysfs problems first, then devices,
// then pairs); the rest are counted in the annotation topoguard.dev/omitted-results.
inline constexpr std::size_t kMaxNodeReportResults = 1000;

// Pairs per path class, indexed by PathClass (PIX, PXB, PHB, NODE, SYS, unknown).
using PathCounts = std::array<std::size_t, 6>;
inline constexpr std::array<PathClass, 6> kPathClasses = {PathClass::kPix,  PathClass::kPxb,
                                                          PathClass::kPhb,  PathClass::kNode,
                                                          PathClass::kSys,  PathClass::kUnknown};

struct NodeDeviceView {
  DeviceKind kind = DeviceKind::kGpu;
  std::string address;
  std::optional<std::string> pcie_root;
  std::optional<int> numa_node;
  bool c2c = false;
  std::string physfn;
};

// One GPU x NIC pair's class, as a report or an inventory's JSON lists it.
struct PairPath {
  std::string gpu;
  std::string nic;
  PathClass relation = PathClass::kUnknown;
};

// What a node's sysfs says, wherever it was read from.
struct NodeSysfsView {
  std::string node;
  std::vector<NodeDeviceView> devices;  // GPUs, then NICs
  PathCounts pairs{};
  std::size_t omitted_results = 0;  // results a cut report left out (its pairs are not counted)
  std::vector<AttributeMismatch> mismatches;
  std::vector<std::string> problems;
  // The pairs one by one: read from a report or an inventory's JSON (a report lists at most
  // kMaxNodeReportResults results); node_view() only counts them, as pairs grow with the square
  // of the devices.
  std::vector<PairPath> paths;
};

// A node inventory and where it came from ("inventory.json", "ClusterReport <uid>").
struct SourcedNodeView {
  std::string source;
  NodeSysfsView view;
};

[[nodiscard]] PathCounts count_paths(const NodeInventory& inventory);
[[nodiscard]] NodeSysfsView node_view(const NodeInventory& inventory, const SliceCheck* check,
                                      std::string node);

// The Node the report is about (its uid names and owns the report).
struct NodeIdentity {
  std::string name;
  std::string uid;
};

// apiVersion openreports.io/v1alpha1, kind ClusterReport, named after the Node's uid and owned by
// it, scope the Node, source topoguard; a result per device (rule pci-device, pass), per GPU x NIC
// pair of the matrix (rule gpu-nic-path, pass, its class in properties.relation), per finding
// (rule attribute-mismatch, warn, the slice as resource) and per sysfs problem (rule sysfs,
// error); the summary counts them. No timestamp: an unchanged node gives an identical document.
[[nodiscard]] Json node_report(const NodeInventory& inventory, const SliceCheck* check,
                               const NodeIdentity& node);

// Whether `object` is such a report.
[[nodiscard]] bool is_node_inventory_report(const Json& object);
// The view a report holds; errors name the field ("results[3].properties.pciBusID").
[[nodiscard]] Result<NodeSysfsView> node_view_from_report(const Json& report);
// The view `topoguard inventory -o json` output holds; its node is "node" (present when the
// inventory was run with --node), else `node`.
[[nodiscard]] Result<NodeSysfsView> node_view_from_inventory_json(const Json& document,
                                                                  const std::string& node);

// topoguard_node_gpu_nic_pairs{relation} (every class, 0 included; "unknown" for ?),
// topoguard_node_c2c_gpus and topoguard_node_attribute_mismatches, in the Prometheus text format.
[[nodiscard]] std::string render_node_metrics(const NodeSysfsView& view);

}  // namespace topoguard::hardware
