#include "topoguard/k8s/object.h"

#include "topoguard/k8s/kinds.h"

namespace topoguard::k8s {

ObjectRef object_ref(const Json& object) {
  ObjectRef ref;
  ref.api_version = string_member(object, "apiVersion");
  ref.kind = string_member(object, "kind");
  if (const Json* metadata = member(object, "metadata")) {
    ref.namespace_name = string_member(*metadata, "namespace");
    ref.name = string_member(*metadata, "name");
    if (ref.name.empty()) {
      ref.name = string_member(*metadata, "generateName");
    }
  }
  return ref;
}

std::string_view api_group(std::string_view api_version) {
  const auto slash = api_version.find('/');
  return slash == std::string_view::npos ? std::string_view() : api_version.substr(0, slash);
}

namespace {

const Json& metadata_map(const Json& object, std::string_view key) {
  static const Json kEmpty = Json::object();
  const Json* metadata = member(object, "metadata");
  const Json* map = metadata != nullptr ? member(*metadata, key) : nullptr;
  return map != nullptr && map->is_object() ? *map : kEmpty;
}

}  // namespace

const Json& labels_of(const Json& object_or_template) {
  return metadata_map(object_or_template, "labels");
}

const Json& annotations_of(const Json& object_or_template) {
  return metadata_map(object_or_template, "annotations");
}

bool is_cluster_scoped(const ObjectRef& ref) {
  const std::string_view group = api_group(ref.api_version);
  switch (resource_kind(group, ref.kind)) {
    case ResourceKind::kDeviceClass:
    case ResourceKind::kResourceSlice:
    case ResourceKind::kDeviceTaintRule:
    case ResourceKind::kClusterResourceClaimTemplate:
      return true;
    case ResourceKind::kResourceClaim:
    case ResourceKind::kResourceClaimTemplate:
      return false;
    case ResourceKind::kOther:
      break;
  }
  return group.empty() && (ref.kind == "Namespace" || ref.kind == "Node");
}

std::string effective_namespace(const ObjectRef& ref) {
  return ref.namespace_name.empty() ? std::string("default") : ref.namespace_name;
}

std::optional<std::string> quantity_text(const Json& value) {
  if (value.is_string()) {
    return value.get<std::string>();
  }
  if (value.is_number()) {
    return value.dump();
  }
  return std::nullopt;
}

}  // namespace topoguard::k8s
