#include "topoguard/cache/object_store.h"

#include <iterator>
#include <utility>

#include "topoguard/k8s/object.h"
#include "topoguard/k8s/resource_slice.h"

namespace topoguard::cache {
namespace {

constexpr std::string_view kSlices = "resourceslices";

// Without metadata.managedFields, which nothing here reads and which the API server sends with
// every object, often as large as its spec.
void drop_managed_fields(Json& object) {
  if (object.is_object()) {
    if (auto metadata = object.find("metadata");
        metadata != object.end() && metadata->is_object()) {
      metadata->erase("managedFields");
    }
  }
}

// The object kept beside a slice that cannot be read: its node, which the slice leaves
// incomplete and whose shapes an event on it changes. The store's key names it.
void keep_only(Json& object, std::string_view name) {
  for (auto it = object.begin(); it != object.end();) {
    it = it.key() != name ? object.erase(it) : std::next(it);
  }
}

void keep_node(Json& slice) {
  if (!slice.is_object()) {
    return;
  }
  keep_only(slice, "spec");
  if (auto spec = slice.find("spec"); spec != slice.end() && spec->is_object()) {
    keep_only(*spec, "nodeName");
  }
}

}  // namespace

bool is_resource(std::string_view resource, std::string_view plural) {
  return resource == plural || (resource.size() > plural.size() && resource.starts_with(plural) &&
                                resource[plural.size()] == '.');
}

void ObjectStore::put(const std::string& resource, ObjectMap& objects, Json&& object) {
  std::string key = object_key(object);
  drop_managed_fields(object);
  if (is_resource(resource, kSlices)) {
    Result<cluster::ParsedSlicePtr> read = k8s::read_resource_slice(object);
    const bool unreadable = !read;
    slices_.writable().insert_or_assign(key, std::move(read));
    if (!unreadable) {
      objects.erase(key);
      object = Json();  // taken, as the objects kept are: the caller's copy goes now
      return;
    }
    keep_node(object);
  }
  objects.insert_or_assign(std::move(key), std::make_shared<const Json>(std::move(object)));
}

std::string object_key(const Json& object) {
  const k8s::ObjectRef ref = k8s::object_ref(object);
  return ref.namespace_name + "/" + ref.name;
}

void ObjectStore::replace(const std::string& resource, std::vector<Json>&& items) {
  if (is_resource(resource, kSlices)) {
    slices_ = SharedMap<SliceMap>();
  }
  SharedMap<ObjectMap> objects;
  for (Json& item : items) {
    put(resource, objects.writable(), std::move(item));
  }
  resources_.insert_or_assign(resource, std::move(objects));
}

void ObjectStore::apply(const std::string& resource, kube::WatchEventType type, Json&& object) {
  if (type != kube::WatchEventType::kAdded && type != kube::WatchEventType::kModified &&
      type != kube::WatchEventType::kDeleted) {
    resources_.try_emplace(resource);
    return;
  }
  ObjectMap& objects = resources_[resource].writable();
  switch (type) {
    case kube::WatchEventType::kAdded:
    case kube::WatchEventType::kModified:
      put(resource, objects, std::move(object));
      break;
    case kube::WatchEventType::kDeleted: {
      const std::string key = object_key(object);
      objects.erase(key);
      if (is_resource(resource, kSlices)) {
        slices_.writable().erase(key);
      }
      break;
    }
    case kube::WatchEventType::kBookmark:
    case kube::WatchEventType::kError:
      break;
  }
}

std::size_t ObjectStore::count(std::string_view resource) const {
  if (is_resource(resource, kSlices)) {
    return resources_.count(resource) != 0 ? slices_->size() : 0;
  }
  const auto found = resources_.find(resource);
  return found != resources_.end() ? found->second->size() : 0;
}

std::size_t ObjectStore::size() const {
  std::size_t total = 0;
  for (const auto& [resource, objects] : resources_) {
    total += count(resource);
  }
  return total;
}

}  // namespace topoguard::cache
