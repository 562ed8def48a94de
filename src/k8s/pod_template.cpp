#include "topoguard/k8s/pod_template.h"

#include <array>

#include "topoguard/k8s/object.h"

namespace topoguard::k8s {

namespace {

struct WorkloadKind {
  std::string_view group;
  std::string_view kind;
  // Pointers to pod templates; "*" steps over every element of an array or object.
  std::array<std::string_view, 2> template_paths;
  // The member of a template that holds its pod-spec fields; empty when the template holds them
  // itself.
  std::string_view spec_member = "spec";
};

// Pod has no template: its own metadata and spec play that role (template pointer ""), and so
// do a PodGroup's (scheduling.k8s.io, gate DRAWorkloadResourceClaims, beta in 1.37), whose
// spec.resourceClaims, shaped as a PodSpec's, are claims its pods share. A Workload's
// podGroupTemplates[] carry the same resourceClaims for the PodGroups made from them.
constexpr std::array<WorkloadKind, 15> kWorkloadKinds{{
    {"", "Pod", {"", ""}},
    {"scheduling.k8s.io", "PodGroup", {"", ""}},
    {"scheduling.k8s.io", "Workload", {"/spec/podGroupTemplates/*", ""}, ""},
    {"", "PodTemplate", {"/template", ""}},
    {"", "ReplicationController", {"/spec/template", ""}},
    {"apps", "Deployment", {"/spec/template", ""}},
    {"apps", "ReplicaSet", {"/spec/template", ""}},
    {"apps", "StatefulSet", {"/spec/template", ""}},
    {"apps", "DaemonSet", {"/spec/template", ""}},
    {"batch", "Job", {"/spec/template", ""}},
    {"batch", "CronJob", {"/spec/jobTemplate/spec/template", ""}},
    {"leaderworkerset.x-k8s.io",
     "LeaderWorkerSet",
     {"/spec/leaderWorkerTemplate/leaderTemplate", "/spec/leaderWorkerTemplate/workerTemplate"}},
    {"disaggregatedset.x-k8s.io",
     "DisaggregatedSet",
     {"/spec/roles/*/spec/leaderWorkerTemplate/leaderTemplate",
      "/spec/roles/*/spec/leaderWorkerTemplate/workerTemplate"}},
    {"kubeflow.org", "MPIJob", {"/spec/mpiReplicaSpecs/*/template", ""}},
    {"kubeflow.org", "PyTorchJob", {"/spec/pytorchReplicaSpecs/*/template", ""}},
}};

const WorkloadKind* find_kind(std::string_view group, std::string_view kind) {
  for (const WorkloadKind& entry : kWorkloadKinds) {
    if (entry.group == group && entry.kind == kind) {
      return &entry;
    }
  }
  return nullptr;
}

// A template found by expand(): its pointer and the object itself.
struct FoundTemplate {
  std::string pointer;
  const Json* node;
};

// Expands `path` (with "*" steps) against `node`, appending existing object matches.
void expand(const Json& node, std::string_view path, const std::string& prefix,
            std::vector<FoundTemplate>& out) {
  if (path.empty()) {
    if (node.is_object()) {
      out.push_back({prefix, &node});
    }
    return;
  }
  std::size_t next = path.find('/', 1);
  if (next == std::string_view::npos) {
    next = path.size();
  }
  std::string_view step = path.substr(1, next - 1);
  std::string_view rest = path.substr(next);
  if (step == "*") {
    if (node.is_array()) {
      for (std::size_t i = 0; i < node.size(); ++i) {
        expand(node[i], rest, append_pointer(prefix, i), out);
      }
    } else if (node.is_object()) {
      for (const auto& [key, child] : node.items()) {
        expand(child, rest, append_pointer(prefix, key), out);
      }
    }
    return;
  }
  if (const Json* child = member(node, step)) {
    expand(*child, rest, prefix + "/" + std::string(step), out);
  }
}

}  // namespace

std::vector<WorkloadKindName> workload_kinds() {
  std::vector<WorkloadKindName> kinds;
  kinds.reserve(kWorkloadKinds.size());
  for (const WorkloadKind& entry : kWorkloadKinds) {
    kinds.push_back({entry.group, entry.kind});
  }
  return kinds;
}

bool is_workload_kind(std::string_view group, std::string_view kind) {
  return find_kind(group, kind) != nullptr;
}

bool controlled_by_workload(const Json& object) {
  const Json* metadata = member(object, "metadata");
  const Json* owners = metadata != nullptr ? member(*metadata, "ownerReferences") : nullptr;
  if (owners == nullptr || !owners->is_array()) {
    return false;
  }
  for (const Json& owner : *owners) {
    const Json* controller = member(owner, "controller");
    if (controller != nullptr && controller->is_boolean() && controller->get<bool>() &&
        is_workload_kind(api_group(string_member_view(owner, "apiVersion")),
                         string_member_view(owner, "kind"))) {
      return true;
    }
  }
  return false;
}

bool is_workload_kind_name(std::string_view kind) {
  for (const WorkloadKind& entry : kWorkloadKinds) {
    if (entry.kind == kind) {
      return true;
    }
  }
  return false;
}

std::vector<PodTemplateLocation> locate_pod_templates(const Json& object) {
  std::vector<PodTemplateLocation> locations;
  const WorkloadKind* entry = find_kind(api_group(string_member_view(object, "apiVersion")),
                                        string_member_view(object, "kind"));
  if (entry == nullptr) {
    return locations;
  }
  if (entry->template_paths[0].empty()) {
    if (const Json* spec = member(object, "spec"); spec != nullptr && spec->is_object()) {
      locations.push_back({"", "/spec", &object, spec});
    }
    return locations;
  }
  for (std::string_view path : entry->template_paths) {
    if (path.empty()) {
      continue;
    }
    std::vector<FoundTemplate> templates;
    expand(object, path, "", templates);
    for (FoundTemplate& found : templates) {
      const Json* spec =
          entry->spec_member.empty() ? found.node : member(*found.node, entry->spec_member);
      if (spec != nullptr && spec->is_object()) {
        std::string spec_pointer = entry->spec_member.empty()
                                       ? found.pointer
                                       : found.pointer + "/" + std::string(entry->spec_member);
        locations.push_back({std::move(found.pointer), std::move(spec_pointer), found.node, spec});
      }
    }
  }
  return locations;
}

}  // namespace topoguard::k8s
