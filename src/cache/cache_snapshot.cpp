#include "topoguard/cache/cache_snapshot.h"

#include <utility>

namespace topoguard::cache {

CacheSnapshotPtr build_snapshot(const ObjectStore& objects, std::uint64_t generation) {
  auto snapshot = std::make_shared<CacheSnapshot>();
  snapshot->generation = generation;
  snapshot->objects = objects;
  cluster::ClusterStateBuilder builder;
  for (const auto& [resource, by_key] : snapshot->objects.resources()) {
    for (const auto& [key, object] : by_key) {
      if (Result<bool> added = builder.add(*object); !added) {
        Error error = added.error();
        error.message = resource + " " + key + ": " + error.message;
        snapshot->errors.push_back(std::move(error));
      }
      snapshot->inventory.add(*object);
    }
  }
  snapshot->cluster_state = std::move(builder).finish();
  snapshot->inventory.set_cluster_state(&snapshot->cluster_state);
  snapshot->built_at = std::chrono::steady_clock::now();
  return snapshot;
}

}  // namespace topoguard::cache
