#include "topoguard/cache/object_store.h"

#include <utility>

#include "topoguard/k8s/object.h"

namespace topoguard::cache {
namespace {

// The object as kept: without metadata.managedFields, which nothing here reads and which the API
// server sends with every object, often as large as its spec.
ObjectPtr kept(Json&& object) {
  if (object.is_object()) {
    if (auto metadata = object.find("metadata");
        metadata != object.end() && metadata->is_object()) {
      metadata->erase("managedFields");
    }
  }
  return std::make_shared<const Json>(std::move(object));
}

}  // namespace

std::string object_key(const Json& object) {
  const k8s::ObjectRef ref = k8s::object_ref(object);
  return ref.namespace_name + "/" + ref.name;
}

void ObjectStore::replace(const std::string& resource, std::vector<Json>&& items) {
  ObjectMap objects;
  for (Json& item : items) {
    std::string key = object_key(item);
    objects.insert_or_assign(std::move(key), kept(std::move(item)));
  }
  resources_.insert_or_assign(resource, std::move(objects));
}

void ObjectStore::apply(const std::string& resource, kube::WatchEventType type, Json&& object) {
  ObjectMap& objects = resources_[resource];
  std::string key = object_key(object);
  switch (type) {
    case kube::WatchEventType::kAdded:
    case kube::WatchEventType::kModified:
      objects.insert_or_assign(std::move(key), kept(std::move(object)));
      break;
    case kube::WatchEventType::kDeleted:
      objects.erase(key);
      break;
    case kube::WatchEventType::kBookmark:
    case kube::WatchEventType::kError:
      break;
  }
}

std::size_t ObjectStore::size() const {
  std::size_t total = 0;
  for (const auto& [resource, objects] : resources_) {
    total += objects.size();
  }
  return total;
}

}  // namespace topoguard::cache
