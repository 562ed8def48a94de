#include "topoguard/hardware/evidence.h"

#include <gtest/gtest.h>

namespace topoguard::hardware {
namespace {

// One pool of two GPUs and two NICs: roots and NUMA nodes as published.
std::vector<k8s::ParsedSlicePtr> slices() {
  const Json slice = Json::parse(R"({
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
    "spec": {"driver": "d", "nodeName": "n", "pool": {"name": "p", "generation": 1,
                                                      "resourceSliceCount": 1},
      "devices": [
        {"name": "gpu-0", "attributes": {"resource.kubernetes.io/pcieRoot": {"string": "pci0000:00"},
                                         "resource.kubernetes.io/numaNode": {"int": 0}}},
        {"name": "nic-0", "attributes": {"resource.kubernetes.io/pcieRoot": {"string": "pci0000:00"},
                                         "resource.kubernetes.io/numaNode": {"int": 0}}},
        {"name": "nic-1", "attributes": {"resource.kubernetes.io/pcieRoot": {"string": "pci0000:40"},
                                         "dra.net/numaNode": {"int": 0}}},
        {"name": "nic-2", "attributes": {"resource.kubernetes.io/pcieRoot": {"string": "pci0000:80"},
                                         "resource.kubernetes.io/numaNode": {"int": 1}}},
        {"name": "nic-3", "attributes": {"resource.kubernetes.io/pcieRoot": {"string": "pci0000:c0"}}}]}})");
  return {k8s::read_resource_slice(slice).value()};
}

Json claim_with(const std::string& gpu, const std::string& nic) {
  Json results = Json::array();
  for (const auto& [request, device] : {std::pair{"gpu", gpu}, std::pair{"nic", nic}}) {
    results.push_back({{"request", request}, {"driver", "d"}, {"pool", "p"}, {"device", device}});
  }
  return Json{{"metadata", {{"namespace", "ns"}, {"name", "c"}}},
              {"status", {{"allocation", {{"devices", {{"results", results}}}}}}}};
}

// Each verdict from the published roots and NUMA nodes; a device without a NUMA node, or not in
// any slice, leaves it unknown.
TEST(EvidenceTest, VerdictFromPublishedAttributes) {
  const auto verdict = [](const std::string& gpu, const std::string& nic) {
    return std::string(verdict_name(build_evidence(claim_with(gpu, nic), slices())->verdict));
  };
  EXPECT_EQ(verdict("gpu-0", "nic-0"), "aligned");
  EXPECT_EQ(verdict("gpu-0", "nic-1"), "same NUMA other root");
  EXPECT_EQ(verdict("gpu-0", "nic-2"), "across NUMA");
  EXPECT_EQ(verdict("gpu-0", "nic-3"), "unknown");
  EXPECT_EQ(verdict("gpu-0", "gone"), "unknown");
  const Evidence evidence = build_evidence(claim_with("gpu-0", "nic-2"), slices()).value();
  EXPECT_EQ(evidence.verdict_line,
            "across NUMA (pcieRoot \"pci0000:00\", \"pci0000:80\"; NUMA 0, 1)");
  EXPECT_EQ(evidence.document["devices"][1]["attributes"]["resource.kubernetes.io/numaNode"], 1);
}

// A claim without an allocation is an error, not a verdict.
TEST(EvidenceTest, UnallocatedClaimIsAnError) {
  EXPECT_FALSE(build_evidence(Json{{"metadata", Json::object()}}, slices()));
}

// The node's inventory adds, per allocated device, what sysfs says of its address (found by
// pciBusID, else dra.net/pciAddress) and the pair's class as the inventory lists it (a VF by its
// PF's column); an address the inventory lacks has no sysfs view.
TEST(EvidenceTest, NodeInventoryAddsSysfsAndPathClass) {
  Evidence evidence;
  evidence.verdict_line = "aligned (pcieRoot \"pci0000:00\"; NUMA 0)";
  evidence.document = Json{
      {"devices",
       {{{"request", "gpu"}, {"device", "gpu-0"},
         {"attributes", {{"resource.kubernetes.io/pciBusID", "0000:07:00.0"}}}},
        {{"request", "nic"}, {"device", "vf-0"},
         {"attributes", {{"dra.net/pciAddress", "0000:0c:00.2"}}}},
        {{"request", "other"}, {"device", "gone"}, {"attributes", nullptr}}}}};
  NodeSysfsView view;
  view.node = "n";
  view.devices = {NodeDeviceView{DeviceKind::kGpu, "0000:07:00.0", "pci0000:00", 0, false, ""},
                  NodeDeviceView{DeviceKind::kRdmaNic, "0000:0c:00.2", "pci0000:00", 0, false,
                                 "0000:0c:00.0"}};
  view.paths = {PairPath{"0000:07:00.0", "0000:0c:00.0", PathClass::kPix}};
  add_node_inventory(evidence, view, "ClusterReport uid-1");
  const Json& inventory = evidence.document["nodeInventory"];
  EXPECT_EQ(inventory["source"], "ClusterReport uid-1");
  EXPECT_EQ(inventory["devices"][0]["sysfs"]["pcieRoot"], "pci0000:00");
  EXPECT_EQ(inventory["devices"][1]["pciBusID"], "0000:0c:00.2");
  EXPECT_TRUE(inventory["devices"][2]["sysfs"].is_null());
  EXPECT_EQ(inventory["paths"], Json::parse(R"([{"gpu": "0000:07:00.0", "nic": "0000:0c:00.2",
                                                  "relation": "PIX"}])"));
  EXPECT_EQ(evidence.verdict_line, "aligned (pcieRoot \"pci0000:00\"; NUMA 0); sysfs: PIX");
  EXPECT_EQ(evidence.document["verdictLine"], evidence.verdict_line);
}

}  // namespace
}  // namespace topoguard::hardware
