// Which resources the cluster serves, read from its discovery documents (/api, /apis,
// /api/v1, /apis/GROUP/VERSION) the way kubectl reads them: a wanted kind (or plural resource
// name) of a group, with the versions the caller accepts in preference order, resolves to the
// plural name and the first acceptable version the server serves; a resource the cluster does not
// serve (a CRD that is not installed, a group or version that is off) is a value saying so, not
// an error. Runs on the calling thread; each call reads discovery afresh.
#pragma once

#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "topoguard/common/result.h"
#include "topoguard/kube/api_client.h"
#include "topoguard/kube/list.h"

namespace topoguard::kube {

// A resource a caller wants: by kind, or by plural resource name when `kind` is empty.
struct WantedResource {
  std::string group;     // "" for the core group
  std::string kind;      // "ResourceSlice"
  std::string resource;  // "resourceslices"; read only when kind is empty
  // Acceptable versions, most preferred first; empty: the group's preferred version, then the
  // others in the server's order.
  std::vector<std::string> versions;

  // "ResourceSlice.resource.k8s.io", "Namespace" (core).
  [[nodiscard]] std::string to_string() const;
};

struct DiscoveredResource {
  WantedResource wanted;
  std::optional<ResourceRef> ref;  // group, version, plural; namespace_ empty. Unset: not served
  std::string kind;                // as the server names it
  bool namespaced = false;
  std::string not_served;  // when ref is unset, why: "group k8s.cni.cncf.io is not served"

  [[nodiscard]] bool served() const { return ref.has_value(); }
};

// Resolves every wanted resource, in order, reading /api, /apis and each group version needed
// once. Errors when discovery itself cannot be read: kIo for no connection, a stop or an error
// answer (401 and 403 included), kInvalidJson for an answer that is not a JSON object. A path
// that answers 404 is one the server does not serve.
[[nodiscard]] Result<std::vector<DiscoveredResource>> discover_resources(
    ApiClient& client, const std::vector<WantedResource>& wanted, std::stop_token stop = {});

// What topoguard reads from a cluster, its cluster state: DeviceClasses, ResourceSlices,
// ResourceClaimTemplates, ResourceClaims (resource.k8s.io v1, v1beta2, v1beta1),
// DeviceTaintRules (resource.k8s.io v1, v1beta2, v1alpha3), NetworkAttachmentDefinitions
// (k8s.cni.cncf.io v1) and Namespaces (core v1, for namespace selectors). The deployment's
// ClusterRole grants exactly these.
[[nodiscard]] const std::vector<WantedResource>& cluster_state_resources();

}  // namespace topoguard::kube
