// What the engine may know about objects other than the one it evaluates: DeviceClasses (to
// classify requests by driver), claims and claim templates (for pods that reference them),
// NetworkAttachmentDefinitions (for Multus networks) and Namespaces (for namespace selectors).
// The audit builds one from all its input; the webhook uses an empty one that does not claim to
// know every claim.
// The inventory does not own the objects it indexes: they must outlive it.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "topoguard/cel/cel.h"
#include "topoguard/cluster/cluster_state.h"
#include "topoguard/cluster/shape_index.h"
#include "topoguard/common/json.h"
#include "topoguard/common/result.h"
#include "topoguard/k8s/device_class.h"

namespace topoguard::engine {

// The resource name every DeviceClass serves as a DRA extended resource (KEP-5004), followed by
// the class name, whether or not it sets spec.extendedResourceName.
inline constexpr std::string_view kImplicitExtendedResourcePrefix =
    "deviceclass.resource.kubernetes.io/";

// What GKE multi-networking calls the resource of a network named in networking.gke.io/interfaces,
// followed by the network name.
inline constexpr std::string_view kGkeNetworkResourcePrefix = "networking.gke.io.networks/";

class Inventory {
 public:
  enum class Claims { kKnown, kUnknown };

  // kKnown: every claim and template a pod may reference is in the input, so references that
  // are not found are reported (`unresolved-claim`) and templates' verdicts are inherited.
  explicit Inventory(Claims claims = Claims::kUnknown) : claims_(claims) {}

  // Indexes `object` when it is a DeviceClass, ResourceClaim(Template),
  // NetworkAttachmentDefinition or Namespace; other kinds are ignored. Returns whether it was
  // indexed.
  bool add(const Json& object);

  [[nodiscard]] bool claims_known() const { return claims_ == Claims::kKnown; }
  // The cluster's devices (audit --cluster-state): claims are then checked for feasibility, and
  // its DeviceClasses join those of the input (which win on a name both have), read where the
  // state keeps them.
  // Not owned; must outlive the inventory. Null (the default, and in the webhook without its
  // cluster cache): no check. `shapes`, the node shapes of that state (also not owned), lets
  // feasibility evaluate a claim once per group of nodes it cannot tell apart. (Each Evaluator
  // keeps its own answers for that state, by claim spec.)
  void set_cluster_state(const cluster::ClusterState* state,
                         const cluster::NodeShapes* shapes = nullptr);
  [[nodiscard]] const cluster::ClusterState* cluster_state() const { return cluster_state_; }
  [[nodiscard]] const cluster::NodeShapes* node_shapes() const { return node_shapes_; }
  // A class whose spec cannot be read is known by name, with selectors that are not readable.
  [[nodiscard]] const k8s::DeviceClass* device_class(std::string_view name) const;
  // The DeviceClass that serves `resource` as a DRA extended resource (its extendedResourceName,
  // or the implicit deviceclass.resource.kubernetes.io/<class>), if known.
  [[nodiscard]] const k8s::DeviceClass* device_class_for_resource(std::string_view resource) const;
  [[nodiscard]] const Json* claim_template(std::string_view namespace_name,
                                           std::string_view name) const;
  [[nodiscard]] const Json* claim(std::string_view namespace_name, std::string_view name) const;
  // The labels of a Namespace (an empty object when it has none), or nullptr when the Namespace
  // is not known.
  [[nodiscard]] const Json* namespace_labels(std::string_view name) const;
  // k8s.v1.cni.cncf.io/resourceName of a NetworkAttachmentDefinition, or nullptr.
  [[nodiscard]] const std::string* network_resource(std::string_view namespace_name,
                                                    std::string_view name) const;

 private:
  using Key = std::pair<std::string, std::string>;  // namespace, name

  Claims claims_;
  const cluster::ClusterState* cluster_state_ = nullptr;
  const cluster::NodeShapes* node_shapes_ = nullptr;
  std::map<std::string, k8s::DeviceClass, std::less<>> device_classes_;  // of the input
  std::map<Key, const Json*> claim_templates_;
  std::map<Key, const Json*> claims_by_name_;
  std::map<Key, std::string> network_resources_;
  std::map<std::string, const Json*, std::less<>> namespaces_;
};

// What is wrong with a DeviceClass, each at its field (JSON pointer): syntax errors in its CEL
// selectors, or (`with_read_error`, unless a cluster state read from the same objects reports
// it) the field its spec cannot be read at. Empty for other objects. The inventory leaves such a
// class's selectors out of classification.
[[nodiscard]] std::vector<Error> device_class_errors(const Json& object, bool with_read_error);

}  // namespace topoguard::engine
