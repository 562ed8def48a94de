// Identity of a Kubernetes object read from its JSON: apiVersion, group, kind, namespace, name.
// Views in this module are read-only and never throw on malformed input.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "topoguard/common/json.h"

namespace topoguard::k8s {

struct ObjectRef {
  std::string api_version;
  std::string kind;
  std::string namespace_name;  // empty for cluster-scoped or unset
  std::string name;            // metadata.name, or metadata.generateName when only that is set

  friend bool operator==(const ObjectRef&, const ObjectRef&) = default;
};

[[nodiscard]] ObjectRef object_ref(const Json& object);

// "resource.k8s.io/v1" -> "resource.k8s.io"; "v1" -> "" (the core group).
[[nodiscard]] std::string_view api_group(std::string_view api_version);

// metadata.labels / metadata.annotations of an object or pod template (empty object if absent).
[[nodiscard]] const Json& labels_of(const Json& object_or_template);
[[nodiscard]] const Json& annotations_of(const Json& object_or_template);

// The text of a resource.Quantity field: the string, or a JSON number as written in YAML
// (`value: 8`, `memory: 1.5`), which the API server parses the same way. nullopt for other
// types; whether the text is a valid quantity is the caller's check.
[[nodiscard]] std::optional<std::string> quantity_text(const Json& value);

// Whether the object's kind is cluster-scoped: of the kinds topoguard reads, DeviceClass,
// ResourceSlice, DeviceTaintRule and ClusterResourceClaimTemplate (resource.k8s.io), Namespace
// and Node (core). Every other kind is taken as namespaced.
[[nodiscard]] bool is_cluster_scoped(const ObjectRef& ref);

// The namespace used for matching: metadata.namespace or "default" (what kubectl applies to).
[[nodiscard]] std::string effective_namespace(const ObjectRef& ref);

}  // namespace topoguard::k8s
