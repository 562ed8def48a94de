#include "topoguard/engine/inventory.h"

#include "topoguard/k8s/claim_view.h"
#include "topoguard/k8s/device_class.h"
#include "topoguard/k8s/object.h"

namespace topoguard::engine {

namespace {

constexpr std::string_view kNetworkResourceAnnotation = "k8s.v1.cni.cncf.io/resourceName";

// A class with its selectors compiled.
DeviceClassInfo class_info(const k8s::DeviceClass& device_class) {
  DeviceClassInfo info;
  info.name = device_class.name;
  info.extended_resource_name = device_class.extended_resource_name;
  for (const std::string& expression : device_class.selectors) {
    auto program = cel::compile(expression);
    if (!program) {
      info.selectors_readable = false;
      continue;
    }
    info.selectors.push_back(std::move(*program));
  }
  return info;
}

// A class whose spec cannot be read has selectors that cannot be read either: whatever it
// would match is unknown.
DeviceClassInfo read_device_class(const Json& object, std::string name) {
  auto read = k8s::read_device_class(object);
  if (!read) {
    DeviceClassInfo info;
    info.name = std::move(name);
    info.selectors_readable = false;
    return info;
  }
  read->name = std::move(name);
  return class_info(*read);
}

bool is_device_class(const Json& object) {
  return k8s::api_group(string_member_view(object, "apiVersion")) == "resource.k8s.io" &&
         string_member_view(object, "kind") == "DeviceClass";
}

}  // namespace

std::vector<Error> device_class_errors(const Json& object, bool with_read_error) {
  std::vector<Error> errors;
  auto read = is_device_class(object) ? k8s::read_device_class(object)
                                      : Result<k8s::DeviceClass>(k8s::DeviceClass{});
  if (!read) {
    if (with_read_error) {
      errors.push_back(read.error());
    }
    return errors;
  }
  for (std::size_t i = 0; i < read->selectors.size(); ++i) {
    auto program = cel::compile(read->selectors[i]);
    if (!program) {
      Error error = program.error();
      error.location.field =
          "/spec/selectors/" + std::to_string(read->selector_positions[i]) + "/cel/expression";
      errors.push_back(std::move(error));
    }
  }
  return errors;
}

bool Inventory::add(const Json& object) {
  const k8s::ObjectRef ref = k8s::object_ref(object);
  const std::string_view group = k8s::api_group(ref.api_version);
  if (ref.name.empty()) {
    return false;
  }
  Key key{k8s::effective_namespace(ref), ref.name};
  if (group == "resource.k8s.io" && ref.kind == "DeviceClass") {
    device_classes_.insert_or_assign(ref.name, read_device_class(object, ref.name));
    return true;
  }
  if (group == "resource.k8s.io" && ref.kind == "ResourceClaimTemplate") {
    claim_templates_.insert_or_assign(std::move(key), &object);
    return true;
  }
  if (group == "resource.k8s.io" && ref.kind == "ResourceClaim") {
    claims_by_name_.insert_or_assign(std::move(key), &object);
    return true;
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
  if (state == nullptr) {
    return;
  }
  // The cluster's classes classify requests and extended resources too; a class of the same
  // name in the audited input is the one about to be applied, so it wins whichever comes first.
  for (const auto& [name, device_class] : state->device_classes()) {
    if (device_classes_.count(name) != 0) {
      continue;
    }
    device_classes_.emplace(name, class_info(device_class));
  }
}

const DeviceClassInfo* Inventory::device_class(std::string_view name) const {
  auto it = device_classes_.find(name);
  return it == device_classes_.end() ? nullptr : &it->second;
}

const DeviceClassInfo* Inventory::device_class_for_resource(std::string_view resource) const {
  if (resource.starts_with(kImplicitExtendedResourcePrefix)) {
    return device_class(resource.substr(kImplicitExtendedResourcePrefix.size()));
  }
  for (const auto& [name, info] : device_classes_) {
    if (!info.extended_resource_name.empty() && info.extended_resource_name == resource) {
      return &info;
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
