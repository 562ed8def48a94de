// What a pod template asks for, read from a PodSpec and its template metadata: the
// ResourceClaims it references, the extended resources its containers request, and the Multus
// networks its annotations attach. Read-only; malformed parts are skipped, never thrown on.
#pragma once

#include <string>
#include <vector>

#include "topoguard/common/json.h"
#include "topoguard/k8s/pod_template.h"

namespace topoguard::k8s {

struct PodClaimReference {
  std::string name;                  // spec.resourceClaims[].name
  std::string template_name;         // resourceClaimTemplateName, or empty
  std::string claim_name;            // resourceClaimName, or empty
  std::string pointer;               // /.../resourceClaims/<i>
};

struct ExtendedResourceRequest {
  std::string resource;   // e.g. nvidia.com/gpu, rdma/ib
  std::string container;  // container name
  std::string pointer;    // /.../containers/<i>/resources/limits/<resource>
};

struct NetworkAttachment {
  std::string namespace_name;  // empty: the pod's namespace
  std::string name;
};

struct PodSpecView {
  PodTemplateLocation location;
  std::vector<PodClaimReference> claims;
  // Every resource outside the core set (cpu, memory, storage, hugepages-*) requested in limits
  // or requests of containers and initContainers; one entry per container and resource.
  std::vector<ExtendedResourceRequest> extended_resources;
  std::vector<NetworkAttachment> networks;  // from k8s.v1.cni.cncf.io/networks
  std::string networks_pointer;             // the annotation's pointer when present
  // GKE multi-networking: the networks of networking.gke.io/interfaces, in order (e.g. "default",
  // "rdma-0"); GKE serves each as the resource networking.gke.io.networks/<network>.
  std::vector<std::string> gke_networks;
  std::string gke_interfaces_pointer;  // the annotation's pointer when present
};

// Parses GKE's networking.gke.io/interfaces annotation, a JSON list of
// {"interfaceName", "network"}: the network names. Unparseable text yields none.
[[nodiscard]] std::vector<std::string> parse_gke_interfaces(const std::string& text);

// The pod spec at `location`, as found by locate_pod_templates() in an object that is unchanged
// since.
[[nodiscard]] PodSpecView read_pod_spec(const PodTemplateLocation& location);

// Parses a Multus networks annotation: "a, ns/b, c@eth1" or a JSON list of
// {"name", "namespace"} objects. Unparseable text yields no networks.
[[nodiscard]] std::vector<NetworkAttachment> parse_network_annotation(const std::string& text);

}  // namespace topoguard::k8s
