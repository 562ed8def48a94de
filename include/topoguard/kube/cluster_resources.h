// The resources topoguard follows in a cluster, as the cluster serves them.
#pragma once

#include <stop_token>
#include <vector>

#include "topoguard/common/result.h"
#include "topoguard/kube/api_client.h"
#include "topoguard/kube/list.h"

namespace topoguard::kube {

// DeviceClasses, ResourceSlices, DeviceTaintRules, ResourceClaimTemplates, ResourceClaims,
// NetworkAttachmentDefinitions and Namespaces, each at the version the cluster serves.
[[nodiscard]] Result<std::vector<ResourceRef>> resolve_cluster_state_resources(
    ApiClient& client, std::stop_token stop);

}  // namespace topoguard::kube
