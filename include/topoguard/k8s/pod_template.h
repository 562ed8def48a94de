// The one table of workload kinds -> where their pod templates live. Every rule that looks at
// pods goes through locate_pod_templates(), so supporting a new workload kind is one table row.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "topoguard/common/json.h"

namespace topoguard::k8s {

struct PodTemplateLocation {
  std::string template_pointer;  // the object holding `metadata` and `spec` ("" for a Pod)
  std::string spec_pointer;      // the PodSpec
  // The same two, in the object locate_pod_templates() read (valid while it is unchanged):
  // resolving the pointers again would scan every sibling, n^2 for n templates in one map.
  const Json* template_object = nullptr;
  const Json* spec = nullptr;
};

// A row of the kinds table: a kind that carries pod templates, and its API group ("" for core).
struct WorkloadKindName {
  std::string_view group;
  std::string_view kind;
};

// Every (group, kind) of the kinds table, in table order (Pod first, then the controllers).
[[nodiscard]] std::vector<WorkloadKindName> workload_kinds();

// True when (group, kind) carries pod templates.
[[nodiscard]] bool is_workload_kind(std::string_view group, std::string_view kind);

// True when a workload kind of the table is the object's controller (an ownerReferences entry
// with controller: true): a Deployment's ReplicaSets and Pods, a Pod's generated
// ResourceClaims. Such objects are judged through their controller.
[[nodiscard]] bool controlled_by_workload(const Json& object);

// True when some group has a workload kind of this name (for validating policy `kinds`).
[[nodiscard]] bool is_workload_kind_name(std::string_view kind);

// Every pod template of a workload object, in document order; empty for other kinds or when
// the templates are absent.
[[nodiscard]] std::vector<PodTemplateLocation> locate_pod_templates(const Json& object);

}  // namespace topoguard::k8s
