// What admission reads of the cluster: one immutable generation of the watched objects, as the
// engine's inputs (the cluster state for feasibility, an inventory of DeviceClasses, claims,
// templates and NetworkAttachmentDefinitions for pods). Built once per generation from an
// ObjectStore and then only read, from any thread, without locks.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "topoguard/cache/object_store.h"
#include "topoguard/cluster/cluster_state.h"
#include "topoguard/common/result.h"
#include "topoguard/engine/inventory.h"

namespace topoguard::cache {

struct CacheSnapshot {
  std::uint64_t generation = 0;
  std::chrono::steady_clock::time_point built_at;
  // The objects the inventory and the state were read from (the inventory points into them).
  ObjectStore objects;
  cluster::ClusterState cluster_state;
  // Claims are not all known to a webhook (one created a moment ago may not be here yet), so
  // a pod's reference that is not found is unknown, not `unresolved-claim`; what is found is
  // judged. Its cluster state is `cluster_state`.
  engine::Inventory inventory{engine::Inventory::Claims::kUnknown};
  // Objects the cluster state could not read, each at its field.
  std::vector<Error> errors;

  CacheSnapshot() = default;
  CacheSnapshot(const CacheSnapshot&) = delete;
  CacheSnapshot& operator=(const CacheSnapshot&) = delete;
};

using CacheSnapshotPtr = std::shared_ptr<const CacheSnapshot>;

// The snapshot of `objects` (shared with it, not copied).
[[nodiscard]] CacheSnapshotPtr build_snapshot(const ObjectStore& objects, std::uint64_t generation);

}  // namespace topoguard::cache
