#include "topoguard/cache/cache_snapshot.h"

#include <utility>

#include "topoguard/k8s/object.h"

namespace topoguard::cache {
namespace {

constexpr std::string_view kSlices = "resourceslices";
constexpr std::string_view kTaintRules = "devicetaintrules";

const ObjectMap& objects_of(const ObjectStore& store, std::string_view resource) {
  static const ObjectMap kNone;
  for (const auto& [name, objects] : store.resources()) {
    if (is_resource(name, resource)) {
      return objects;
    }
  }
  return kNone;
}

// spec.nodeName of a slice; empty for slices of all nodes or chosen by a selector.
std::string node_of(const Json& slice) {
  const Json* spec = member(slice, "spec");
  const Json* node = spec != nullptr ? member(*spec, "nodeName") : nullptr;
  return node != nullptr && node->is_string() ? node->get<std::string>() : std::string();
}

}  // namespace

std::optional<std::set<std::string>> SnapshotBuilder::changed_nodes(
    const ObjectStore& objects) const {
  if (objects_of(objects, kTaintRules) != objects_of(last_, kTaintRules)) {
    return std::nullopt;  // taints are part of shapes, on any node
  }
  const ObjectMap& now = objects_of(objects, kSlices);
  const ObjectMap& before = objects_of(last_, kSlices);
  std::set<std::string> nodes;
  const auto changed = [&nodes](const ObjectPtr& slice) {
    std::string node = node_of(*slice);
    if (node.empty()) {
      return false;
    }
    nodes.insert(std::move(node));
    return true;
  };
  for (const auto& [key, slice] : now) {
    const auto found = before.find(key);
    if (found == before.end() || found->second != slice) {
      if (!changed(slice) || (found != before.end() && !changed(found->second))) {
        return std::nullopt;
      }
    }
  }
  for (const auto& [key, slice] : before) {
    if (now.count(key) == 0 && !changed(slice)) {
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
  const SliceMap& slices = snapshot->objects.slices();
  for (const auto& [resource, by_key] : snapshot->objects.resources()) {
    const bool are_slices = is_resource(resource, kSlices);
    for (const auto& [key, object] : by_key) {
      const auto slice = are_slices ? slices.find(key) : slices.end();
      if (Result<bool> added = slice != slices.end() ? builder.add_slice(*object, slice->second)
                                                      : builder.add(*object);
          !added) {
        Error error = added.error();
        error.message = resource + " " + key + ": " + error.message;
        snapshot->errors.push_back(std::move(error));
      }
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
