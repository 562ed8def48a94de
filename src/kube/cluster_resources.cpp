#include "topoguard/kube/cluster_resources.h"

namespace topoguard::kube {

Result<std::vector<ResourceRef>> resolve_cluster_state_resources(ApiClient& /*client*/,
                                                                 std::stop_token /*stop*/) {
  return std::vector<ResourceRef>{
      {"resource.k8s.io", "v1", "deviceclasses", ""},
      {"resource.k8s.io", "v1", "resourceslices", ""},
      {"resource.k8s.io", "v1", "devicetaintrules", ""},
      {"resource.k8s.io", "v1", "resourceclaimtemplates", ""},
      {"resource.k8s.io", "v1", "resourceclaims", ""},
      {"k8s.cni.cncf.io", "v1", "network-attachment-definitions", ""},
      {"", "v1", "namespaces", ""},
  };
}

}  // namespace topoguard::kube
