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
// "/name" -> the metadata.resourceVersion of the ResourceSlice read.
using VersionMap = std::map<std::string, std::string, std::less<>>;

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

  // A list of one resource taken page by page, kept aside until it is complete (commit): the
  // store is unchanged meanwhile, and a list that fails is dropped. Slices are read as each page
  // comes, so no more than a page is held as JSON. An object (or slice) that the store already
  // holds at the same metadata.resourceVersion is not kept (or read) again but shared with the
  // store: a relist of a cluster that has not changed holds its objects once, not twice.
  // add() needs no lock on the store: what it compares with is a copy of the store's maps.
  class Listing {
   public:
    // Takes one page's objects.
    void add(std::vector<Json>&& items);

   private:
    friend class ObjectStore;
    Listing(std::string resource, const ObjectStore& current);

    std::string resource_;
    bool slices_;  // a list of ResourceSlices
    SharedMap<ObjectMap> objects_;
    SharedMap<SliceMap> read_;
    SharedMap<VersionMap> versions_;
    SharedMap<ObjectMap> held_objects_;  // what the store held when the list began
    SharedMap<SliceMap> held_slices_;
    SharedMap<VersionMap> held_versions_;
    std::shared_ptr<k8s::SliceInterner> interner_;  // the store's
  };

  // A list of `resource` that will replace its objects. Copies the store's maps (shares them):
  // call it where the store is changed.
  [[nodiscard]] Listing begin_list(const std::string& resource) const;
  // Every object of `resource` is now what `listing` took.
  void commit(Listing&& listing);
  // Every object of `resource` is now `items`: begin_list, add and commit in one.
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
  struct Maps;
  struct Held;
  // Puts `object` into `into`: a slice read into its slices (beside the object cut to its node
  // when it cannot be read), another object as it is; one `held` at the same version as before.
  static void put(bool slice, Json&& object, const Maps& into, const Held* held,
                  k8s::SliceInterner& interner);

  Resources resources_;
  SharedMap<SliceMap> slices_;
  SharedMap<VersionMap> slice_versions_;
  // Where the slices read keep their names and values; the copies of a store share it, and only
  // the store's own thread reads slices into it.
  std::shared_ptr<k8s::SliceInterner> interner_ = std::make_shared<k8s::SliceInterner>();
};

// "namespace/name" of an object ("/name" when cluster-scoped).
[[nodiscard]] std::string object_key(const Json& object);

// Whether the store's `resource` ("<plural>.<version>.<group>", as kube::ResourceRef names it, or
// the plural alone) is `plural`.
[[nodiscard]] bool is_resource(std::string_view resource, std::string_view plural);

}  // namespace topoguard::cache
