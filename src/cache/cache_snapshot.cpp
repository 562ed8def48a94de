#include "topoguard/cache/cache_snapshot.h"

#include <utility>

#include "topoguard/k8s/kinds.h"
#include "topoguard/k8s/object.h"

namespace topoguard::cache {
namespace {

constexpr std::string_view kTaintRules = k8s::kDeviceTaintRules;

const ObjectMap& objects_of(const ObjectStore& store, std::string_view resource) {
  static const ObjectMap kNone;
  for (const auto& [name, objects] : store.resources()) {
    if (is_resource(name, resource)) {
      return *objects;
    }
  }
  return kNone;
}

// The node a slice publishes for: a read slice's, or spec.nodeName of one that cannot be read
// (its object kept in `objects`); empty for slices of all nodes or chosen by a selector.
std::string node_of(const ObjectStore& objects, const std::string& key,
                    const Result<cluster::ParsedSlicePtr>& slice) {
  if (slice) {
    return (*slice)->scope == cluster::NodeScope::kNode ? (*slice)->node : std::string();
  }
  const ObjectMap& kept = objects_of(objects, k8s::kResourceSlices);
  const auto found = kept.find(key);
  return found != kept.end() ? k8s::slice_node_name(*found->second) : std::string();
}

// Whether a slice is the one held before: the same read, or the same object not read.
bool same_slice(const ObjectStore& now, const ObjectStore& before, const std::string& key,
                const Result<cluster::ParsedSlicePtr>& a,
                const Result<cluster::ParsedSlicePtr>& b) {
  if (a && b) {
    return *a == *b;
  }
  if (a || b) {
    return false;
  }
  const auto& now_kept = objects_of(now, k8s::kResourceSlices);
  const auto& before_kept = objects_of(before, k8s::kResourceSlices);
  const auto x = now_kept.find(key);
  const auto y = before_kept.find(key);
  return x != now_kept.end() && y != before_kept.end() && x->second == y->second;
}

}  // namespace

std::optional<std::set<std::string>> SnapshotBuilder::changed_nodes(
    const ObjectStore& objects) const {
  if (objects_of(objects, kTaintRules) != objects_of(last_, kTaintRules)) {
    return std::nullopt;  // taints are part of shapes, on any node
  }
  const SliceMap& now = objects.slices();
  const SliceMap& before = last_.slices();
  std::set<std::string> nodes;
  const auto changed = [&nodes](std::string node) {
    if (node.empty()) {
      return false;
    }
    nodes.insert(std::move(node));
    return true;
  };
  for (const auto& [key, slice] : now) {
    const auto found = before.find(key);
    if (found == before.end() || !same_slice(objects, last_, key, slice, found->second)) {
      if (!changed(node_of(objects, key, slice)) ||
          (found != before.end() && !changed(node_of(last_, key, found->second)))) {
        return std::nullopt;
      }
    }
  }
  for (const auto& [key, slice] : before) {
    if (now.count(key) == 0 && !changed(node_of(last_, key, slice))) {
      return std::nullopt;
    }
  }
  return nodes;
}

CacheSnapshotPtr SnapshotBuilder::build(const ObjectStore& objects, std::uint64_t generation) {
  auto snapshot = std::make_shared<CacheSnapshot>();
  snapshot->generation = generation;
  snapshot->objects = objects;
  cluster::ClusterStateBuilder builder;
  const auto report = [&snapshot](const std::string& resource, const std::string& key,
                                  const Result<bool>& added) {
    if (!added) {
      Error error = added.error();
      error.message = resource + " " + key + ": " + error.message;
      snapshot->errors.push_back(std::move(error));
    }
  };
  for (const auto& [resource, by_key] : snapshot->objects.resources()) {
    if (is_resource(resource, k8s::kResourceSlices)) {
      static const Json kRead = Json::object();  // a read slice's object is not kept
      for (const auto& [key, slice] : snapshot->objects.slices()) {
        const auto kept = by_key->find(key);
        const Json& object = kept != by_key->end() ? *kept->second : kRead;
        report(resource, key, builder.add_slice(object, slice));
      }
      continue;
    }
    for (const auto& [key, object] : *by_key) {
      report(resource, key, builder.add(*object));
      snapshot->inventory.add(*object);
    }
  }
  snapshot->cluster_state = std::move(builder).finish();

  const std::optional<std::set<std::string>> nodes =
      shapes_ ? changed_nodes(objects) : std::nullopt;
  if (!nodes) {
    shapes_ = cluster::ShapeIndex::build(snapshot->cluster_state);
  } else {
    for (const std::string& node : *nodes) {
      shapes_->update_node(snapshot->cluster_state, node);  // removes a node that is gone
    }
  }
  last_ = objects;
  snapshot->shapes = shapes_->view(snapshot->cluster_state);
  snapshot->inventory.set_cluster_state(&snapshot->cluster_state, &snapshot->shapes);
  snapshot->built_at = std::chrono::steady_clock::now();
  return snapshot;
}

CacheSnapshotPtr build_snapshot(const ObjectStore& objects, std::uint64_t generation) {
  return SnapshotBuilder().build(objects, generation);
}

}  // namespace topoguard::cache
