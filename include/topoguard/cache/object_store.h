// The objects of the watched resources as their last list and the events since leave them: one
// map per resource, keyed "namespace/name". Updated per event (a put or an erase, never a rebuild)
// and copied cheaply: objects are shared, immutable trees, so a copy shares them. Objects are kept
// without metadata.managedFields (as client-go informers' transforms commonly drop them): nothing
// reads them, and the API server sends them with every object. Pure: no I/O,
// no threads; the cluster cache feeds it from its reflectors under its own mutex.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "topoguard/common/json.h"
#include "topoguard/kube/watch_stream.h"

namespace topoguard::cache {

using ObjectPtr = std::shared_ptr<const Json>;
using ObjectMap = std::map<std::string, ObjectPtr, std::less<>>;  // "namespace/name" -> object

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
  [[nodiscard]] std::size_t size() const;

 private:
  std::map<std::string, ObjectMap, std::less<>> resources_;
};

// "namespace/name" of an object ("/name" when cluster-scoped).
[[nodiscard]] std::string object_key(const Json& object);

}  // namespace topoguard::cache
