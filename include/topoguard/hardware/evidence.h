// Evidence of one claim's allocation, to keep next to a benchmark's result: the devices the
// scheduler chose (status.allocation.devices.results), each with every attribute its driver
// publishes, and a verdict on where they sit (aligned / same NUMA other root / across NUMA /
// unknown). Pure: the claim and the slices in, the document out; `topoguard evidence` reads them
// from the cluster.
#pragma once

#include <string>
#include <vector>

#include "topoguard/common/json.h"
#include "topoguard/common/result.h"
#include "topoguard/hardware/node_report.h"
#include "topoguard/k8s/resource_slice.h"

namespace topoguard::hardware {

enum class EvidenceVerdict : std::uint8_t { kAligned, kSameNumaOtherRoot, kAcrossNuma, kUnknown };

// "aligned", "same NUMA other root", "across NUMA", "unknown".
[[nodiscard]] std::string_view verdict_name(EvidenceVerdict verdict);

struct Evidence {
  Json document;  // {claim: {namespace, name, uid}, allocation, devices, verdict, verdictLine}
  EvidenceVerdict verdict = EvidenceVerdict::kUnknown;
  std::string verdict_line;  // one line for people: the verdict and the roots or NUMA nodes
};

// `claim` as read from the API (with its status); an error when it is not allocated. Over all
// allocated devices: one pcieRoot for all -> aligned; else one NUMA node
// (resource.kubernetes.io/numaNode or dra.net/numaNode) -> same NUMA other root; else every NUMA
// node known -> across NUMA; else unknown (a device publishes neither, or is in no slice).
[[nodiscard]] Result<Evidence> build_evidence(const Json& claim,
                                              const std::vector<k8s::ParsedSlicePtr>& slices);

// What the node's inventory (its report, `source`) says of the claim's devices: under
// "nodeInventory" {source, devices: [{request, device, pciBusID, sysfs: {pcieRoot, numaNode} or
// null when the address is no GPU or RDMA NIC of the inventory}], paths: [{gpu, nic, relation}]
// for each allocated GPU and NIC the inventory pairs}, and the classes appended to the verdict
// line ("; sysfs: PIX"). A device's address is its resource.kubernetes.io/pciBusID, else
// dra.net/pciAddress.
void add_node_inventory(Evidence& evidence, const NodeSysfsView& view, const std::string& source);

}  // namespace topoguard::hardware
