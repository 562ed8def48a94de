#include "topoguard/engine/class_roles.h"

#include "device_roles.h"

namespace topoguard::engine {

std::vector<DeviceClassRole> device_class_roles(const policy::Policy& policy,
                                                const cluster::ClusterState& state) {
  Inventory inventory;
  inventory.set_cluster_state(&state);
  const DeviceRoles roles(policy, inventory);
  std::vector<DeviceClassRole> result;
  for (const auto& [name, device_class] : state.device_classes()) {
    k8s::DeviceChoice choice;
    choice.device_class_name = name;
    const Roles found = roles.of_choice(choice);
    result.push_back({name, found.gpu, found.nic});
  }
  return result;
}

}  // namespace topoguard::engine
