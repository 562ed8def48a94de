// Per node, the PCIe roots with the GPUs and NICs under each, as the cluster's ResourceSlices
// publish them: what `topoguard topology` prints, as text for people and as JSON to keep as
// evidence next to benchmark results. Pure: cluster state and policy in, values out.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "topoguard/cluster/cluster_state.h"
#include "topoguard/common/json.h"
#include "topoguard/policy/policy.h"

namespace topoguard::cluster {

struct TopologyDevice {
  std::string name;
  std::string driver;
  std::string pool;
  std::string bus_id;                    // empty when not published
  std::optional<std::string> numa_node;  // when a NUMA attribute is published
};

struct PcieRoot {
  std::string root;  // the alignment attribute's value
  std::vector<TopologyDevice> gpus;
  std::vector<TopologyDevice> nics;

  [[nodiscard]] std::size_t aligned_pairs() const { return std::min(gpus.size(), nics.size()); }
};

// On a node where no GPU and NIC share the alignment attribute: the strongest attribute that
// does pair them (an accepted alignment attribute of the policy, else a NUMA attribute).
struct Pairing {
  std::string attribute;
  std::size_t pairs = 0;  // summed over values, as aligned pairs are over roots
};

struct NodeTopology {
  std::string name;
  std::vector<PcieRoot> roots;  // sorted by root
  PcieRoot unrooted;            // GPUs and NICs that publish no alignment attribute
  bool incomplete = false;      // some of the node's slices could not be read
  // Set when the node has GPUs and NICs but no aligned pair: the best pairing there is, or an
  // empty attribute when no alignment or NUMA attribute pairs any GPU with a NIC.
  std::optional<Pairing> best_available;

  [[nodiscard]] std::size_t aligned_pairs() const;
};

struct Topology {
  std::string attribute;  // the policy's alignment attribute
  std::vector<NodeTopology> nodes;
};

// GPUs and NICs are recognised by the drivers of `policy` (devices.gpu.drivers, nic.drivers).
[[nodiscard]] Topology build_topology(const ClusterState& state, const policy::Policy& policy);

// {"attribute", "nodes": [{name, alignedPairs, bestAvailable: null | {attribute (null when
// nothing pairs them), pairs}, incomplete, roots: [{root, alignedPairs, gpus, nics}], unrooted:
// {gpus, nics}}], "nodesWithoutAlignedPairs", "summary"}; stable key order.
[[nodiscard]] Json topology_to_json(const Topology& topology);
[[nodiscard]] std::string topology_to_text(const Topology& topology);

}  // namespace topoguard::cluster
