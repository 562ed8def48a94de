// Builds the cluster state from manifests read for the audit or the topology command
// (`kubectl get resourceslices,deviceclasses,... -o yaml|json`, files, stdin), with errors that
// name file, line and field.
#pragma once

#include <vector>

#include "topoguard/audit/manifest_reader.h"
#include "topoguard/cluster/cluster_state.h"
#include "topoguard/common/result.h"

namespace topoguard::audit {

struct LoadedClusterState {
  cluster::ClusterState state;
  std::vector<Error> errors;  // one per unreadable object (the set's read errors are its own)
};

[[nodiscard]] LoadedClusterState load_cluster_state(const ManifestSet& manifests);

}  // namespace topoguard::audit
