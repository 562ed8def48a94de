// What admission reads of the cluster: one immutable generation of the watched objects, as the
// engine's inputs (the cluster state for feasibility, an inventory of DeviceClasses, claims,
// templates and NetworkAttachmentDefinitions for pods). Built once per generation from an
// ObjectStore and then only read, from any thread, without locks.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "topoguard/cache/object_store.h"
#include "topoguard/cluster/cluster_state.h"
#include "topoguard/cluster/shape_index.h"
#include "topoguard/common/result.h"
#include "topoguard/engine/inventory.h"

namespace topoguard::cache {

struct CacheSnapshot {
  std::uint64_t generation = 0;
  std::chrono::steady_clock::time_point built_at;
  // The objects the inventory and the state were read from (the inventory points into them).
  ObjectStore objects;
  cluster::ClusterState cluster_state;
  // The node shapes of cluster_state, for feasibility once per shape.
  cluster::NodeShapes shapes;
  // Claims are not all known to a webhook (one created a moment ago may not be here yet), so
  // a pod's reference that is not found is unknown, not `unresolved-claim`; what is found is
  // judged. Its cluster state is `cluster_state`, with `shapes`.
  engine::Inventory inventory{engine::Inventory::Claims::kUnknown};
  // Objects the cluster state could not read, each at its field.
  std::vector<Error> errors;

  CacheSnapshot() = default;
  CacheSnapshot(const CacheSnapshot&) = delete;
  CacheSnapshot& operator=(const CacheSnapshot&) = delete;
};

using CacheSnapshotPtr = std::shared_ptr<const CacheSnapshot>;

// Builds the snapshots of one cache, one after another, keeping the node shapes of the last: a
// snapshot after slice events of some nodes re-keys only those nodes (ShapeIndex::update_node);
// other changes to devices (slices for all nodes or chosen by selector, taint rules) key every
// node again. Claims, templates and the rest change no shape. Slices are read once, when the store
// takes them; a snapshot shares the devices of unchanged slices with the one before. Not
// thread-safe.
class SnapshotBuilder {
 public:
  // The snapshot of `objects` (shared with it, not copied).
  [[nodiscard]] CacheSnapshotPtr build(const ObjectStore& objects, std::uint64_t generation);

 private:
  // Names of the nodes whose slices differ between the last build and `objects`; nullopt when
  // every node must be keyed again.
  [[nodiscard]] std::optional<std::set<std::string>> changed_nodes(
      const ObjectStore& objects) const;

  std::optional<cluster::ShapeIndex> shapes_;
  ObjectStore last_;
};

// One snapshot of `objects`, shapes built from scratch.
[[nodiscard]] CacheSnapshotPtr build_snapshot(const ObjectStore& objects, std::uint64_t generation);

}  // namespace topoguard::cache
