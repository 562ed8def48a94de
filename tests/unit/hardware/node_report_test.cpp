#include "topoguard/hardware/node_report.h"

#include <gtest/gtest.h>

#include "topoguard/hardware/inventory_beside_slices.h"

namespace topoguard::hardware {
namespace {

InventoryDevice device(DeviceKind kind, std::string address, std::string root, int numa,
                       std::vector<std::string> bridges) {
  InventoryDevice out;
  out.kind = kind;
  out.address = std::move(address);
  out.pcie_root = std::move(root);
  out.numa_node = numa;
  out.bridges = std::move(bridges);
  return out;
}

// Two roots on NUMA node 0, one on node 1: a GPU and a NIC behind one switch on the first, a
// GPU on the second, a NIC on the third.
NodeInventory small_node() {
  NodeInventory inventory;
  inventory.gpus = {device(DeviceKind::kGpu, "0000:07:00.0", "pci0000:00", 0, {"rp", "sw"}),
                    device(DeviceKind::kGpu, "0000:47:00.0", "pci0000:40", 0, {"rp2"})};
  inventory.nics = {device(DeviceKind::kRdmaNic, "0000:0c:00.0", "pci0000:00", 0, {"rp", "sw"}),
                    device(DeviceKind::kRdmaNic, "0000:8d:00.0", "pci0000:80", 1, {"rp3"})};
  return inventory;
}

SliceCheck one_mismatch() {
  SliceCheck check;
  check.mismatches.push_back(AttributeMismatch{0, "slice-a", "gpu.example.com", "pool", "gpu-1",
                                               "resource.kubernetes.io/pcieRoot", "pci0000:00",
                                               "pci0000:40", "published pci0000:00 but ..."});
  return check;
}

const NodeIdentity kNode{"node-a", "0a1b2c3d-0000-0000-0000-000000000001"};

// The report is a ClusterReport named after the Node's uid, owned by it and scoped to it, with a
// result per device, per pair and per finding, and a summary that counts them.
TEST(NodeReportTest, NamedOwnedScopedAndCounted) {
  const SliceCheck check = one_mismatch();
  const Json report = node_report(small_node(), &check, kNode);
  EXPECT_EQ(report["kind"], "ClusterReport");
  EXPECT_EQ(report["apiVersion"], "openreports.io/v1alpha1");
  EXPECT_EQ(report["metadata"]["name"], kNode.uid);
  EXPECT_EQ(report["metadata"]["ownerReferences"][0]["kind"], "Node");
  EXPECT_EQ(report["metadata"]["ownerReferences"][0]["uid"], kNode.uid);
  EXPECT_EQ(report["metadata"]["labels"][std::string(kNodeInventoryLabel)], "true");
  EXPECT_EQ(report["scope"]["name"], "node-a");
  EXPECT_EQ(report["summary"]["pass"], 4 + 4);  // 4 devices, 2 GPUs x 2 NICs
  EXPECT_EQ(report["summary"]["warn"], 1);
  ASSERT_EQ(report["results"].size(), 9u);
  EXPECT_EQ(report["results"][0]["rule"], "attribute-mismatch");  // findings first
  EXPECT_EQ(report["results"][0]["resources"][0]["name"], "slice-a");
  EXPECT_TRUE(is_node_inventory_report(report));
  // Every property value is a string (the CRD's schema: additionalProperties string).
  for (const Json& result : report["results"]) {
    for (const auto& [key, value] : result["properties"].items()) {
      EXPECT_TRUE(value.is_string()) << key;
    }
  }
}

// What the report holds reads back as the view the inventory gives.
TEST(NodeReportTest, ViewRoundTripsThroughTheReport) {
  const SliceCheck check = one_mismatch();
  const NodeInventory inventory = small_node();
  const NodeSysfsView direct = node_view(inventory, &check, "node-a");
  const Result<NodeSysfsView> read = node_view_from_report(node_report(inventory, &check, kNode));
  ASSERT_TRUE(read.has_value()) << read.error().message;
  EXPECT_EQ(read->node, "node-a");
  EXPECT_EQ(read->pairs, direct.pairs);
  ASSERT_EQ(read->devices.size(), direct.devices.size());
  for (std::size_t i = 0; i < direct.devices.size(); ++i) {
    EXPECT_EQ(read->devices[i].address, direct.devices[i].address);
    EXPECT_EQ(read->devices[i].pcie_root, direct.devices[i].pcie_root);
    EXPECT_EQ(read->devices[i].numa_node, direct.devices[i].numa_node);
  }
  ASSERT_EQ(read->mismatches.size(), 1u);
  EXPECT_EQ(read->mismatches[0].sysfs, "pci0000:40");
  // PIX (GPU 0 - NIC 0), SYS (GPU 0 - NIC 1), NODE (GPU 1 - NIC 0), SYS (GPU 1 - NIC 1).
  EXPECT_EQ(direct.pairs[static_cast<std::size_t>(PathClass::kPix)], 1u);
  EXPECT_EQ(direct.pairs[static_cast<std::size_t>(PathClass::kNode)], 1u);
  EXPECT_EQ(direct.pairs[static_cast<std::size_t>(PathClass::kSys)], 2u);
}

// An unchanged node gives an identical document (no timestamp), so its hash does not move.
TEST(NodeReportTest, SameNodeSameDocument) {
  EXPECT_EQ(node_report(small_node(), nullptr, kNode), node_report(small_node(), nullptr, kNode));
}

// A node with more pairs than a report holds: findings and devices kept, pairs cut, the rest
// counted in the omitted-results annotation (and the summary still counts every pair).
TEST(NodeReportTest, CutAtTheResultBudget) {
  NodeInventory inventory;
  for (int i = 0; i < 40; ++i) {
    char address[16];
    std::snprintf(address, sizeof address, "0000:%02x:00.0", i);
    inventory.gpus.push_back(device(DeviceKind::kGpu, address, "pci0000:00", 0, {}));
    std::snprintf(address, sizeof address, "0001:%02x:00.0", i);
    inventory.nics.push_back(device(DeviceKind::kRdmaNic, address, "pci0001:00", 0, {}));
  }
  const Json report = node_report(inventory, nullptr, kNode);
  EXPECT_EQ(report["results"].size(), kMaxNodeReportResults);
  EXPECT_EQ(report["summary"]["pass"], 80 + 1600);
  EXPECT_EQ(report["metadata"]["annotations"]["topoguard.dev/omitted-results"],
            std::to_string(80 + 1600 - kMaxNodeReportResults));
  const Result<NodeSysfsView> read = node_view_from_report(report);
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->devices.size(), 80u);
  EXPECT_EQ(read->omitted_results, 80u + 1600u - kMaxNodeReportResults);
}

// A report edited into nonsense is an error naming the field, never a crash.
TEST(NodeReportTest, BadReportNamesTheField) {
  Json report = node_report(small_node(), nullptr, kNode);
  report["results"][0]["properties"]["numaNode"] = "zero";
  Result<NodeSysfsView> read = node_view_from_report(report);
  ASSERT_FALSE(read.has_value());
  EXPECT_EQ(read.error().message, "results[0].properties.numaNode: not a NUMA node (an integer >= -1)");
  report = node_report(small_node(), nullptr, kNode);
  report["results"][5]["properties"]["relation"] = "NEAR";
  read = node_view_from_report(report);
  ASSERT_FALSE(read.has_value());
  EXPECT_NE(read.error().message.find("results[5].properties.relation"), std::string::npos);
  report.erase("scope");
  EXPECT_FALSE(node_view_from_report(report).has_value());
  report = node_report(small_node(), nullptr, kNode);
  report["results"] = "many";
  EXPECT_FALSE(node_view_from_report(report).has_value());
}

// The inventory's JSON gives the same view; without a node name it needs one from the caller.
TEST(NodeReportTest, ViewFromInventoryJson) {
  const SliceCheck check = one_mismatch();
  const Json document = Json::parse(inventory_to_json(small_node(), &check, "node-a"));
  const Result<NodeSysfsView> view = node_view_from_inventory_json(document, "");
  ASSERT_TRUE(view.has_value()) << view.error().message;
  EXPECT_EQ(view->node, "node-a");
  EXPECT_EQ(view->pairs, node_view(small_node(), &check, "node-a").pairs);
  EXPECT_EQ(view->mismatches.size(), 1u);
  const Json anonymous = Json::parse(inventory_to_json(small_node()));
  EXPECT_FALSE(node_view_from_inventory_json(anonymous, "").has_value());
  EXPECT_EQ(node_view_from_inventory_json(anonymous, "given")->node, "given");
}

// Every relation is exported, 0 included, so a query for one never finds nothing.
TEST(NodeReportTest, MetricsByRelation) {
  const std::string text = render_node_metrics(node_view(small_node(), nullptr, "node-a"));
  EXPECT_NE(text.find("topoguard_node_gpu_nic_pairs{relation=\"PIX\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("topoguard_node_gpu_nic_pairs{relation=\"PXB\"} 0\n"), std::string::npos);
  EXPECT_NE(text.find("topoguard_node_gpu_nic_pairs{relation=\"PHB\"} 0\n"), std::string::npos);
  EXPECT_NE(text.find("topoguard_node_gpu_nic_pairs{relation=\"NODE\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("topoguard_node_gpu_nic_pairs{relation=\"SYS\"} 2\n"), std::string::npos);
  EXPECT_NE(text.find("topoguard_node_gpu_nic_pairs{relation=\"unknown\"} 0\n"), std::string::npos);
  EXPECT_NE(text.find("topoguard_node_attribute_mismatches 0\n"), std::string::npos);
}

// Beside slices: a device's published view next to sysfs, a node no slice names said so, and
// input escaped.
TEST(InventoryBesideSlicesTest, NodeWithoutSlicesAndEscaping) {
  NodeSysfsView view = node_view(small_node(), nullptr, "node-\x1b[31m");
  const std::string text = inventory_beside_slices_text({{"file.json", view}}, cluster::Topology{});
  EXPECT_EQ(text.find('\x1b'), std::string::npos);
  EXPECT_NE(text.find("no ResourceSlice publishes a device of this node"), std::string::npos);
  EXPECT_NE(text.find("gpu 0000:07:00.0  sysfs pci0000:00 numa 0  |  published -"),
            std::string::npos);
  const Json json = inventory_beside_slices_json({{"file.json", view}}, cluster::Topology{});
  EXPECT_EQ(json[0]["devices"].size(), 4u);
  EXPECT_EQ(json[0]["pairs"]["SYS"], 2);
}

}  // namespace
}  // namespace topoguard::hardware
