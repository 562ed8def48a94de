// The roles the engine gives a request of each DeviceClass of a cluster state (by the class's
// name, or by the drivers its selectors allow), under one policy: what a compiled native policy
// bakes in, since CEL in the API server cannot read DeviceClasses.
#pragma once

#include <string>
#include <vector>

#include "topoguard/cluster/cluster_state.h"
#include "topoguard/policy/policy.h"

namespace topoguard::engine {

struct DeviceClassRole {
  std::string name;
  bool gpu = false;
  bool nic = false;
};

// Every class of `state`, sorted by name.
[[nodiscard]] std::vector<DeviceClassRole> device_class_roles(const policy::Policy& policy,
                                                              const cluster::ClusterState& state);

}  // namespace topoguard::engine
