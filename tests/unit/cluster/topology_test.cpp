#include "topoguard/cluster/topology.h"

#include <gtest/gtest.h>

#include "cluster_test_support.h"
#include "topoguard/policy/policy_loader.h"

namespace topoguard::cluster {
namespace {

const policy::Policy& default_policy() {
  static const policy::PolicySet set = policy::load_builtin_policies().value();
  return set.policies().front();
}

std::vector<std::string> names(const std::vector<TopologyDevice>& devices) {
  std::vector<std::string> out;
  for (const TopologyDevice& device : devices) {
    out.push_back(device.name);
  }
  return out;
}

// AWS p4d: two A100s per root; every root also has an EFA, three of them an ENA (a NIC of the
// same dra.net driver), and bus IDs and NUMA nodes come from the published attributes.
TEST(TopologyTest, AwsP4dRoots) {
  const ClusterState state = testing::load_corpus_state(
      {"dranet/examples/aws_eks_examples/gpu-efa/resourceslice-gpu.yaml",
       "dranet/examples/aws_eks_examples/gpu-efa/resourceslice-dranet.yaml"});
  const Topology topology = build_topology(state, default_policy());
  ASSERT_EQ(topology.nodes.size(), 1u);
  const NodeTopology& node = topology.nodes[0];
  ASSERT_EQ(node.roots.size(), 4u);
  EXPECT_EQ(node.roots[0].root, "pci0000:10");
  EXPECT_EQ(names(node.roots[0].gpus), (std::vector<std::string>{"gpu-0", "gpu-1"}));
  EXPECT_EQ(names(node.roots[0].nics), std::vector<std::string>{"pci-0000-10-1b-0"});
  EXPECT_EQ(node.roots[0].gpus[0].bus_id, "0000:10:1c.0");
  EXPECT_FALSE(node.roots[0].gpus[0].numa_node.has_value());  // NVIDIA publishes no NUMA node
  EXPECT_EQ(node.roots[0].nics[0].numa_node, "0");
  EXPECT_EQ(node.roots[1].root, "pci0000:20");
  EXPECT_EQ(node.roots[1].nics.size(), 2u);
  EXPECT_EQ(node.aligned_pairs(), 7u);
  EXPECT_FALSE(node.best_available.has_value());
  EXPECT_TRUE(node.unrooted.gpus.empty());
  EXPECT_TRUE(node.unrooted.nics.empty());
}

// Azure GB300: every GPU has its own root and the ConnectX VFs publish no pcieRoot, so the
// node offers no aligned pair; the JSON says so and keeps the unrooted NICs.
TEST(TopologyTest, AzureGb300HasNoAlignedPair) {
  const ClusterState state = testing::load_corpus_state(
      {"dranet/examples/azure_aks_examples/gb300/resourceslice-gpu.yaml",
       "dranet/examples/azure_aks_examples/gb300/resourceslice-dranet.yaml"});
  const Topology topology = build_topology(state, default_policy());
  ASSERT_EQ(topology.nodes.size(), 1u);
  EXPECT_EQ(topology.nodes[0].roots.size(), 4u);
  EXPECT_EQ(topology.nodes[0].aligned_pairs(), 0u);
  EXPECT_EQ(topology.nodes[0].unrooted.nics.size(), 4u);

  const Json json = topology_to_json(topology);
  EXPECT_EQ(json["attribute"], "resource.kubernetes.io/pcieRoot");
  EXPECT_EQ(json["nodesWithoutAlignedPairs"],
            Json::array({"aks-gpu-45139532-vmss000081"}));
  EXPECT_EQ(json["summary"]["gpus"], 4);
  EXPECT_EQ(json["summary"]["nics"], 4);
  EXPECT_EQ(json["summary"]["alignedPairs"], 0);
  EXPECT_EQ(json["nodes"][0]["unrooted"]["nics"][0]["busID"], "0101:00:00.0");
  EXPECT_EQ(json["nodes"][0]["roots"][0]["gpus"][0]["numaNode"], nullptr);

  const std::string text = topology_to_text(topology);
  EXPECT_NE(text.find("node aks-gpu-45139532-vmss000081: 0 aligned GPU+NIC pairs\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  no resource.kubernetes.io/pcieRoot: 0 GPUs, 4 NICs\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("nodes without an aligned GPU+NIC pair: aks-gpu-45139532-vmss000081\n"),
            std::string::npos)
      << text;
  // The GB300 GPUs publish no NUMA node, so nothing pairs them with the NICs either.
  ASSERT_TRUE(topology.nodes[0].best_available.has_value());
  EXPECT_EQ(topology.nodes[0].best_available->attribute, "");
  EXPECT_EQ(json["nodes"][0]["bestAvailable"]["attribute"], nullptr);
  EXPECT_NE(text.find("  no GPU and NIC share a resource.kubernetes.io/pcieRoot; no alignment or "
                      "NUMA attribute pairs them either\n"),
            std::string::npos)
      << text;
}

// Where no GPU and NIC share a root, the strongest attribute that pairs them is named: NUMA
// here (the standard one pairs two, DRANET's only one), and none on a node with aligned pairs.
TEST(TopologyTest, BestAvailablePairingWithoutSharedRoot) {
  const ClusterState state = testing::build_state(R"(
{apiVersion: resource.k8s.io/v1, kind: ResourceSlice, metadata: {name: gpus}, spec: {
  driver: gpu.nvidia.com, nodeName: gb, pool: {name: gb}, devices: [
  {name: gpu-0, attributes: {resource.kubernetes.io/pcieRoot: {string: pci0008:00}, resource.kubernetes.io/numaNode: {int: 0}, dra.net/numaNode: {int: 0}}},
  {name: gpu-1, attributes: {resource.kubernetes.io/pcieRoot: {string: pci0009:00}, resource.kubernetes.io/numaNode: {int: 1}}}]}}
---
{apiVersion: resource.k8s.io/v1, kind: ResourceSlice, metadata: {name: nics}, spec: {
  driver: dra.net, nodeName: gb, pool: {name: gb}, devices: [
  {name: nic-0, attributes: {resource.kubernetes.io/numaNode: {int: 0}, dra.net/numaNode: {int: 0}}},
  {name: nic-1, attributes: {resource.kubernetes.io/numaNode: {int: 1}, dra.net/numaNode: {int: 1}}}]}}
)");
  const Topology topology = build_topology(state, default_policy());
  ASSERT_EQ(topology.nodes.size(), 1u);
  ASSERT_TRUE(topology.nodes[0].best_available.has_value());
  EXPECT_EQ(topology.nodes[0].best_available->attribute, "resource.kubernetes.io/numaNode");
  EXPECT_EQ(topology.nodes[0].best_available->pairs, 2u);
  EXPECT_EQ(topology_to_json(topology)["nodes"][0]["bestAvailable"],
            Json::parse(R"({"attribute": "resource.kubernetes.io/numaNode", "pairs": 2})"));
  EXPECT_NE(topology_to_text(topology).find(
                "  no GPU and NIC share a resource.kubernetes.io/pcieRoot; the strongest "
                "attribute that pairs them is resource.kubernetes.io/numaNode (2 pairs)\n"),
            std::string::npos)
      << topology_to_text(topology);
}

// Devices of other drivers are left out; a list-valued root is shown as its list.
TEST(TopologyTest, OnlyGpuAndNicDrivers) {
  const ClusterState state = testing::build_state(R"(
apiVersion: resource.k8s.io/v1beta1
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: dra.cpu
  nodeName: n
  pool: {name: n}
  devices:
  - name: cpu0
    basic:
      attributes:
        resource.kubernetes.io/pcieRoot: {strings: [pci0000:00]}
)");
  const Topology topology = build_topology(state, default_policy());
  ASSERT_EQ(topology.nodes.size(), 1u);
  EXPECT_TRUE(topology.nodes[0].roots.empty());
  EXPECT_EQ(topology_to_json(topology)["summary"]["nodesWithoutAlignedPairs"], 1);
}

}  // namespace
}  // namespace topoguard::cluster
