// The names the API server accepts in an object's metadata (apimachinery's
// ValidateObjectMetaAccessor), so that a manifest read offline with a name `kubectl apply` would
// be refused for is an input error at that field, worded as the API server words it. Pure.
#pragma once

#include <string>
#include <vector>

#include "topoguard/common/json.h"

namespace topoguard::k8s {

// One refusal: the field as a JSON pointer within the object ("/metadata/name") and the API
// server's words ("Invalid value: \"A\": a lowercase RFC 1123 subdomain must ...").
struct NameProblem {
  std::string pointer;
  std::string message;
};

// What the API server would refuse in `object`'s metadata.name, metadata.generateName (a prefix:
// a trailing '-' is allowed) and, for a namespaced kind, metadata.namespace (a DNS-1123 label).
// Names are held to the kind's rule where it is known: a DNS-1123 label for a Namespace, a
// DNS-1123 subdomain for the workload kinds of the pod template table, the resource.k8s.io kinds
// and Node (a kind whose rule is stricter, like a CronJob's 52 characters, is held to the
// subdomain only, which never refuses a name the server takes). Other kinds' names are not
// checked (RBAC names may hold ':'). Absent or empty fields are not checked.
[[nodiscard]] std::vector<NameProblem> invalid_metadata_names(const Json& object);

}  // namespace topoguard::k8s
