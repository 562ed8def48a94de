#include "topoguard/engine/inventory.h"

#include "topoguard/k8s/claim_view.h"
#include "topoguard/k8s/device_class.h"
#include "topoguard/k8s/kinds.h"
#include "topoguard/k8s/object.h"

namespace topoguard::engine {

namespace {

constexpr std::string_view kNetworkResourceAnnotation = "k8s.v1.cni.cncf.io/resourceName";

// A class whose spec cannot be read has selectors that cannot be read either: whatever it
// would match is unknown.
k8s::DeviceClass read_device_class(const Json& object, std::string name) {
  auto read = k8s::read_device_class(object);
  if (!read) {
    k8s::DeviceClass unreadable;
    unreadable.name = std::move(name);
    unreadable.selector_errors.push_back(read.error());
    return unreadable;
  }
  read->name = std::move(name);
  return std::move(read).value();
}

}  // namespace

std::vector<Error> device_class_errors(const Json& object, bool with_read_error) {
  std::vector<Error> errors;
  auto read = k8s::resource_kind(object) == k8s::ResourceKind::kDeviceClass ? k8s::read_device_class(object)
                                      : Result<k8s::DeviceClass>(k8s::DeviceClass{});
  if (!read) {
    if (with_read_error) {
      errors.push_back(read.error());
    }
    return errors;
  }
  return std::move(read->selector_errors);
}

bool Inventory::add(const Json& object) {
  const k8s::ObjectRef ref = k8s::object_ref(object);
  const std::string_view group = k8s::api_group(ref.api_version);
  if (ref.name.empty()) {
    return false;
  }
  Key key{k8s::effective_namespace(ref), ref.name};
  switch (k8s::resource_kind(group, ref.kind)) {
    case k8s::ResourceKind::kDeviceClass:
      device_classes_.insert_or_assign(ref.name, read_device_class(object, ref.name));
      return true;
    case k8s::ResourceKind::kResourceClaimTemplate:
      claim_templates_.insert_or_assign(std::move(key), &object);
      return true;
    case k8s::ResourceKind::kResourceClaim:
      claims_by_name_.insert_or_assign(std::move(key), &object);
      return true;
    default:
      break;
  }
  if (group.empty() && ref.kind == "Namespace") {
    namespaces_.insert_or_assign(ref.name, &object);
    return true;
  }
  if (group == "k8s.cni.cncf.io" && ref.kind == "NetworkAttachmentDefinition") {
    const Json* resource = member(k8s::annotations_of(object), kNetworkResourceAnnotation);
    network_resources_.insert_or_assign(
        std::move(key), resource != nullptr && resource->is_string() ? resource->get<std::string>()
                                                                     : std::string());
    return true;
  }
  return false;
}

void Inventory::set_cluster_state(const cluster::ClusterState* state,
                                  const cluster::NodeShapes* shapes) {
  cluster_state_ = state;
  node_shapes_ = state != nullptr ? shapes : nullptr;
}

const k8s::DeviceClass* Inventory::device_class(std::string_view name) const {
  // A class of the same name in the audited input is the one about to be applied, so it wins.
  if (auto it = device_classes_.find(name); it != device_classes_.end()) {
    return &it->second;
  }
  return cluster_state_ != nullptr ? cluster_state_->device_class(name) : nullptr;
}

const k8s::DeviceClass* Inventory::device_class_for_resource(std::string_view resource) const {
  if (resource.starts_with(kImplicitExtendedResourcePrefix)) {
    return device_class(resource.substr(kImplicitExtendedResourcePrefix.size()));
  }
  const auto serves = [&](const k8s::DeviceClass& device_class) {
    return !device_class.extended_resource_name.empty() &&
           device_class.extended_resource_name == resource;
  };
  for (const auto& [name, device_class] : device_classes_) {
    if (serves(device_class)) {
      return &device_class;
    }
  }
  if (cluster_state_ == nullptr) {
    return nullptr;
  }
  for (const auto& [name, device_class] : cluster_state_->device_classes()) {
    if (serves(device_class) && device_classes_.count(name) == 0) {
      return &device_class;
    }
  }
  return nullptr;
}

const Json* Inventory::claim_template(std::string_view namespace_name,
                                      std::string_view name) const {
  auto it = claim_templates_.find(Key{namespace_name, name});
  return it == claim_templates_.end() ? nullptr : it->second;
}

const Json* Inventory::claim(std::string_view namespace_name, std::string_view name) const {
  auto it = claims_by_name_.find(Key{namespace_name, name});
  return it == claims_by_name_.end() ? nullptr : it->second;
}

const Json* Inventory::namespace_labels(std::string_view name) const {
  auto it = namespaces_.find(name);
  return it == namespaces_.end() ? nullptr : &k8s::labels_of(*it->second);
}

const std::string* Inventory::network_resource(std::string_view namespace_name,
                                               std::string_view name) const {
  auto it = network_resources_.find(Key{namespace_name, name});
  return it == network_resources_.end() || it->second.empty() ? nullptr : &it->second;
}

}  // namespace topoguard::engine
