#include "cluster_reader.h"

#include <utility>

#include "topoguard/k8s/object.h"
#include "topoguard/k8s/pod_template.h"
#include "topoguard/kube/list.h"

namespace topoguard::cli {

namespace {

// "cluster:resourceclaims.v1.resource.k8s.io/ns/name", "cluster:namespaces.v1/name".
std::string source_name(const kube::ResourceRef& resource, const Json& object) {
  const Json* metadata = member(object, "metadata");
  std::string name = "cluster:" + resource.resource + "." + resource.version;
  if (!resource.group.empty()) {
    name += "." + resource.group;
  }
  if (metadata != nullptr) {
    if (const std::string_view ns = string_member_view(*metadata, "namespace"); !ns.empty()) {
      name += "/" + std::string(ns);
    }
    name += "/" + string_member(*metadata, "name");
  }
  return name;
}

}  // namespace

std::vector<kube::WantedResource> cluster_audit_resources() {
  std::vector<kube::WantedResource> wanted = kube::cluster_state_resources();
  for (const k8s::WorkloadKindName& kind : k8s::workload_kinds()) {
    wanted.push_back({std::string(kind.group), std::string(kind.kind), "", {}});
  }
  return wanted;
}

Result<ClusterRead> read_cluster(kube::ApiClient& client, const ClusterReadOptions& options) {
  Result<std::vector<kube::DiscoveredResource>> discovered =
      kube::discover_resources(client, cluster_audit_resources());
  if (!discovered) {
    return discovered.error();
  }
  ClusterRead read;
  std::vector<std::pair<std::string, Json>> objects;
  for (kube::DiscoveredResource& resource : *discovered) {
    if (!resource.served()) {
      read.not_served.push_back(std::move(resource));
      continue;
    }
    kube::ResourceRef ref = *resource.ref;
    if (resource.namespaced) {
      ref.namespace_ = options.namespace_;
    }
    kube::ListResult list = kube::list_resource(client, ref, {});
    if (list.not_served()) {  // removed between discovery and the list
      resource.ref.reset();
      resource.not_served = ref.to_string() + ": " + list.error;
      read.not_served.push_back(std::move(resource));
      continue;
    }
    if (!list.ok()) {
      return Error{ErrorCode::kIo, ref.to_string() + ": " + list.error, {}};
    }
    for (Json& item : list.items) {
      if (k8s::controlled_by_workload(item)) {
        ++read.controlled;
        continue;
      }
      std::string name = source_name(*resource.ref, item);
      objects.emplace_back(std::move(name), std::move(item));
    }
    read.listed.push_back(std::move(resource));
  }
  read.manifests = audit::manifests_from_objects(std::move(objects));
  return read;
}

}  // namespace topoguard::cli
