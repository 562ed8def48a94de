// The objects of the watched resources as their last list and the events since leave them: one
// map per resource, keyed "namespace/name". Updated per event (a put or an erase, never a rebuild)
// and copied cheaply: objects are shared, immutable trees, so a copy shares them. Objects are kept
// without metadata.managedFields (as client-go informers' transforms commonly drop them): nothing
// reads them, and the API server sends them with every object. ResourceSlices, most of a
// cluster's bytes, are read once when they arrive and kept as read: the object reduced to its
// spec.nodeName (its key names it), beside the slice read from it. Pure: no I/O, no threads; the
// cluster cache feeds it from its reflectors under its own mutex.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "topoguard/cluster/cluster_state.h"
#include "topoguard/common/json.h"
#include "topoguard/common/result.h"
#include "topoguard/kube/watch_stream.h"

namespace topoguard::cache {

using ObjectPtr = std::shared_ptr<const Json>;
using ObjectMap = std::map<std::string, ObjectPtr, std::less<>>;  // "namespace/name" -> object
// "/name" -> the ResourceSlice read, or the error at its field.
using SliceMap = std::map<std::string, Result<cluster::ParsedSlicePtr>, std::less<>>;

// A map the copies of a store share until one of them changes it. Copying one marks the
// original shared too, so copy a store only on the thread that changes it.
template <class Map>
class SharedMap {
 public:
  SharedMap() = default;
  SharedMap(const SharedMap& other) : map_(other.map_), shared_(true) { other.shared_ = true; }
  SharedMap& operator=(const SharedMap& other) {
    map_ = other.map_;
    shared_ = other.shared_ = true;
    return *this;
  }
  SharedMap(SharedMap&&) noexcept = default;
  SharedMap& operator=(SharedMap&&) noexcept = default;
  ~SharedMap() = default;

  const Map& operator*() const { return *map_; }
  const Map* operator->() const { return map_.get(); }
  // The map to change, copied first when another store shares it.
  Map& writable() {
    if (shared_) {
      map_ = std::make_shared<Map>(*map_);
      shared_ = false;
    }
    return *map_;
  }

 private:
  std::shared_ptr<Map> map_ = std::make_shared<Map>();
  mutable bool shared_ = false;
};

// The objects of a cache by resource. A ResourceSlice is kept as read (slices()), its object
// dropped; one that cannot be read is kept as its error, beside its object cut to
// spec.nodeName (the node it leaves incomplete). A copy (a snapshot's) shares each resource's
// objects and the slices read with the store until the store changes them: a cache holds one of
// each map while nothing changes.
class ObjectStore {
 public:
  using Resources = std::map<std::string, SharedMap<ObjectMap>, std::less<>>;

  // Every object of `resource` is now `items` (a list or its replay after a relist).
  void replace(const std::string& resource, std::vector<Json>&& items);
  // ADDED and MODIFIED put the object, DELETED erases it; other types change nothing.
  void apply(const std::string& resource, kube::WatchEventType type, Json&& object);

  // Resource -> its objects, both in name order; of the slices, only those not read.
  [[nodiscard]] const Resources& resources() const { return resources_; }
  // Every ResourceSlice: read, or the error at its field; by the keys of their objects.
  [[nodiscard]] const SliceMap& slices() const { return *slices_; }
  // How many objects the store holds of `resource` (slices read included), or of all.
  [[nodiscard]] std::size_t count(std::string_view resource) const;
  [[nodiscard]] std::size_t size() const;

 private:
  void put(const std::string& resource, ObjectMap& objects, Json&& object);

  Resources resources_;
  SharedMap<SliceMap> slices_;
};

// "namespace/name" of an object ("/name" when cluster-scoped).
[[nodiscard]] std::string object_key(const Json& object);

// Whether the store's `resource` ("<plural>.<version>.<group>", as kube::ResourceRef names it, or
// the plural alone) is `plural`.
[[nodiscard]] bool is_resource(std::string_view resource, std::string_view plural);

}  // namespace topoguard::cache
