#include "topoguard/cache/object_store.h"

#include <utility>

#include "topoguard/k8s/kinds.h"
#include "topoguard/k8s/object.h"
#include "topoguard/k8s/resource_slice.h"

namespace topoguard::cache {
namespace {

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

// metadata.resourceVersion of an object, "" when absent.
std::string_view version_of(const Json& object) {
  const Json* metadata = object.is_object() ? member(object, "metadata") : nullptr;
  return metadata != nullptr ? string_member_view(*metadata, "resourceVersion") : "";
}

}  // namespace

// The maps an object goes into: a store's or a listing's.
struct ObjectStore::Maps {
  SharedMap<ObjectMap>& objects;
  SharedMap<SliceMap>& slices;
  SharedMap<VersionMap>& slice_versions;
};

// What a store held before a relist: an object (or slice read) listed again at the same
// metadata.resourceVersion is that one, kept as it was instead of being read again.
struct ObjectStore::Held {
  const ObjectMap& objects;
  const SliceMap& slices;
  const VersionMap& slice_versions;

  [[nodiscard]] const ObjectPtr* object(const std::string& key, std::string_view version) const {
    const auto found = objects.find(key);
    return found != objects.end() && version_of(*found->second) == version ? &found->second
                                                                            : nullptr;
  }
  [[nodiscard]] const cluster::ParsedSlicePtr* slice(const std::string& key,
                                                     std::string_view version) const {
    const auto read = slices.find(key);
    const auto held_version = slice_versions.find(key);
    return read != slices.end() && read->second && held_version != slice_versions.end() &&
                   held_version->second == version
               ? &*read->second
               : nullptr;
  }
};

void ObjectStore::put(bool slice, Json&& object, const Maps& into, const Held* held,
                      k8s::SliceInterner& interner) {
  std::string key = object_key(object);
  const std::string version(version_of(object));
  if (held != nullptr && !version.empty()) {
    if (slice) {
      if (const cluster::ParsedSlicePtr* kept = held->slice(key, version); kept != nullptr) {
        into.slices.writable().insert_or_assign(key, *kept);
        into.slice_versions.writable().insert_or_assign(std::move(key), version);
        object = Json();
        return;
      }
    } else if (const ObjectPtr* kept = held->object(key, version); kept != nullptr) {
      into.objects.writable().insert_or_assign(std::move(key), *kept);
      object = Json();
      return;
    }
  }
  drop_managed_fields(object);
  if (slice) {
    Result<cluster::ParsedSlicePtr> read = k8s::read_resource_slice(object, interner);
    const bool unreadable = !read;
    into.slices.writable().insert_or_assign(key, std::move(read));
    into.slice_versions.writable().insert_or_assign(key, version);
    if (!unreadable) {
      if (into.objects->count(key) != 0) {
        into.objects.writable().erase(key);
      }
      object = Json();  // taken, as the objects kept are: the caller's copy goes now
      return;
    }
    // What is kept beside a slice that cannot be read: its node, which the slice leaves
    // incomplete and whose shapes an event on it changes. The store's key names it.
    k8s::keep_only_node_name(object);
  }
  into.objects.writable().insert_or_assign(std::move(key),
                                           std::make_shared<const Json>(std::move(object)));
}

bool is_resource(std::string_view resource, std::string_view plural) {
  return resource == plural || (resource.size() > plural.size() && resource.starts_with(plural) &&
                                resource[plural.size()] == '.');
}

std::string object_key(const Json& object) {
  const k8s::ObjectRef ref = k8s::object_ref(object);
  return ref.namespace_name + "/" + ref.name;
}

ObjectStore::Listing::Listing(std::string resource, const ObjectStore& current)
    : resource_(std::move(resource)),
      slices_(is_resource(resource_, k8s::kResourceSlices)),
      interner_(current.interner_) {
  if (const auto found = current.resources_.find(resource_); found != current.resources_.end()) {
    held_objects_ = found->second;
    if (slices_) {
      held_slices_ = current.slices_;
      held_versions_ = current.slice_versions_;
    }
  }
}

void ObjectStore::Listing::add(std::vector<Json>&& items) {
  const Held held{*held_objects_, *held_slices_, *held_versions_};
  for (Json& item : items) {
    put(slices_, std::move(item), {objects_, read_, versions_}, &held, *interner_);
  }
  items.clear();
}

ObjectStore::Listing ObjectStore::begin_list(const std::string& resource) const {
  return Listing(resource, *this);
}

void ObjectStore::commit(Listing&& listing) {
  if (listing.slices_) {
    slices_ = std::move(listing.read_);
    slice_versions_ = std::move(listing.versions_);
  }
  resources_.insert_or_assign(std::move(listing.resource_), std::move(listing.objects_));
  // The store's old maps go now, not when the listing does.
  listing.held_objects_ = SharedMap<ObjectMap>();
  listing.held_slices_ = SharedMap<SliceMap>();
  listing.held_versions_ = SharedMap<VersionMap>();
}

void ObjectStore::replace(const std::string& resource, std::vector<Json>&& items) {
  Listing listing = begin_list(resource);
  listing.add(std::move(items));
  commit(std::move(listing));
}


void ObjectStore::apply(const std::string& resource, kube::WatchEventType type, Json&& object) {
  if (type != kube::WatchEventType::kAdded && type != kube::WatchEventType::kModified &&
      type != kube::WatchEventType::kDeleted) {
    resources_.try_emplace(resource);
    return;
  }
  SharedMap<ObjectMap>& objects = resources_[resource];
  const bool slice = is_resource(resource, k8s::kResourceSlices);
  switch (type) {
    case kube::WatchEventType::kAdded:
    case kube::WatchEventType::kModified:
      put(slice, std::move(object), {objects, slices_, slice_versions_}, nullptr, *interner_);
      break;
    case kube::WatchEventType::kDeleted: {
      const std::string key = object_key(object);
      objects.writable().erase(key);
      if (slice) {
        slices_.writable().erase(key);
        slice_versions_.writable().erase(key);
      }
      break;
    }
    case kube::WatchEventType::kBookmark:
    case kube::WatchEventType::kError:
      break;
  }
}

std::size_t ObjectStore::count(std::string_view resource) const {
  if (is_resource(resource, k8s::kResourceSlices)) {
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
