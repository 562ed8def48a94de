// Reads a live cluster for `audit --cluster`: the cluster state (kube::cluster_state_resources())
// and every kind of the pod-template table (k8s::workload_kinds()), resolved through discovery,
// listed through the API and made into a ManifestSet whose sources are named
// `cluster:RESOURCE.VERSION.GROUP/NAMESPACE/NAME`, for run_audit with the cluster state. Here,
// above the audit library, so that judging manifests links no API client; runs on the calling
// thread.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "topoguard/audit/manifest_reader.h"
#include "topoguard/common/result.h"
#include "topoguard/kube/api_client.h"
#include "topoguard/kube/discovery.h"

namespace topoguard::cli {

struct ClusterReadOptions {
  std::string namespace_;  // namespaced resources only in this one; "": every namespace
};

struct ClusterRead {
  audit::ManifestSet manifests;
  std::vector<kube::DiscoveredResource> listed;      // in the order listed
  std::vector<kube::DiscoveredResource> not_served;  // skipped: the cluster does not serve them
  // Objects left out because a workload of the table controls them (a Deployment's ReplicaSets
  // and Pods, a Pod's generated ResourceClaims): they are audited through their controller.
  std::size_t controlled = 0;
};

// What `audit --cluster` lists: cluster_state_resources(), then the workload kinds in the
// server's preferred version of their group.
[[nodiscard]] std::vector<kube::WantedResource> cluster_audit_resources();

// Errors (kIo) when discovery or a list fails (no connection, 401, 403), naming the resource.
[[nodiscard]] Result<ClusterRead> read_cluster(kube::ApiClient& client,
                                               const ClusterReadOptions& options);

}  // namespace topoguard::cli
