// What a ResourceClaim's allocation holds (status.allocation.devices.results[]), as the scheduler
// counts it against the devices of the cluster.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "topoguard/common/json.h"
#include "topoguard/common/result.h"

namespace topoguard::k8s {

// One device a ResourceClaim holds (status.allocation.devices.results[]); admin-access results
// are not listed, as they take nothing.
struct Allocation {
  std::string claim;    // namespace/name
  std::string device;   // Device::id()
  bool shared = false;  // has a shareID: one of several allocations of the device
  std::map<std::string, std::string, std::less<>> consumed;  // consumedCapacity, qualified
};

// The allocations of a ResourceClaim: none when it is not allocated. A result with adminAccess
// takes nothing; one with a shareID is one share of a device that allows multiple allocations,
// holding its consumedCapacity; any other takes its device. An error names the offending field.
[[nodiscard]] Result<std::vector<Allocation>> read_claim_allocations(const Json& object);

}  // namespace topoguard::k8s
