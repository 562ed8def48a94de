// `topology` with a node inventory: per node, what its sysfs says of each GPU and RDMA NIC next to
// what the drivers publish for the same PCI address (the device, its root and NUMA node), the
// GPU x NIC pairs by path class and the attribute-mismatch findings. Pure.
#pragma once

#include <string>
#include <vector>

#include "topoguard/cluster/topology.h"
#include "topoguard/common/json.h"
#include "topoguard/hardware/node_report.h"

namespace topoguard::hardware {

// Text after topology_to_text(), one block per inventory in node order; input escaped.
[[nodiscard]] std::string inventory_beside_slices_text(
    const std::vector<SourcedNodeView>& inventories, const cluster::Topology& topology);
// [{node, source, pairs: {PIX: n, ...}, devices: [{kind, pciBusID, sysfs: {pcieRoot, numaNode},
// published: [{device, driver, pool, pcieRoot, numaNode}]}], findings: [...], problems,
// omittedResults}], the value `topology -o json` holds under "inventory".
[[nodiscard]] Json inventory_beside_slices_json(const std::vector<SourcedNodeView>& inventories,
                                                const cluster::Topology& topology);

}  // namespace topoguard::hardware
