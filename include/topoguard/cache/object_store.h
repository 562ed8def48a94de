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

class ObjectStore {
 public:
  // Every object of `resource` is now `items` (a list or its replay after a relist).
  void replace(const std::string& resource, std::vector<Json>&& items);
  // ADDED and MODIFIED put the object, DELETED erases it; other types change nothing.
  void apply(const std::string& resource, kube::WatchEventType type, Json&& object);

  // Resource -> its objects, both in name order.
  [[nodiscard]] const std::map<std::string, ObjectMap, std::less<>>& resources() const {
    return resources_;
  }
  // The ResourceSlices read, by the keys of their objects (kept with only spec.nodeName).
  [[nodiscard]] const SliceMap& slices() const { return slices_; }
  [[nodiscard]] std::size_t size() const;

 private:
  void put(const std::string& resource, ObjectMap& objects, Json&& object);

  std::map<std::string, ObjectMap, std::less<>> resources_;
  SliceMap slices_;
};

// "namespace/name" of an object ("/name" when cluster-scoped).
[[nodiscard]] std::string object_key(const Json& object);

// Whether the store's `resource` ("<plural>.<version>.<group>", as kube::ResourceRef names it, or
// the plural alone) is `plural`.
[[nodiscard]] bool is_resource(std::string_view resource, std::string_view plural);

}  // namespace topoguard::cache
