// The ResourceSlices of a live cluster, for the commands that set them against a node or a claim
// (inventory --cluster, evidence). A slice that cannot be read is said on stderr and left out.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "topoguard/k8s/resource_slice.h"
#include "topoguard/kube/client_config.h"
#include "topoguard/kube/api_client.h"

namespace topoguard::cli {

// An API client for `options`; none (said on stderr, as "topoguard COMMAND: ...") when the
// kubeconfig cannot be loaded or the client built.
[[nodiscard]] std::shared_ptr<kube::ApiClient> make_api_client(std::string_view command,
                                                               const kube::LoadOptions& options);

// Every ResourceSlice (resource.k8s.io/v1); none (said on stderr) when the list fails.
[[nodiscard]] std::optional<std::vector<k8s::ParsedSlicePtr>> list_cluster_slices(
    std::string_view command, kube::ApiClient& client);

}  // namespace topoguard::cli
