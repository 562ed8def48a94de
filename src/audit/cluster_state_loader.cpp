#include "topoguard/audit/cluster_state_loader.h"

namespace topoguard::audit {

LoadedClusterState load_cluster_state(const ManifestSet& manifests) {
  LoadedClusterState loaded;
  cluster::ClusterStateBuilder builder;
  for (const Manifest& manifest : manifests.manifests) {
    auto added = builder.add(*manifest.object);
    if (!added) {
      Error error = added.error();
      error.location.file = manifests.path_of(manifest);
      error.location.line = manifests.line_of(manifest, error.location.field);
      loaded.errors.push_back(std::move(error));
    }
  }
  loaded.state = std::move(builder).finish();
  return loaded;
}

}  // namespace topoguard::audit
