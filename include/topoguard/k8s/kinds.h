// The kinds of resource.k8s.io topoguard reads, their resource (plural) names, and the fields of
// them that several modules read: the one place that says "this object is a DeviceClass".
#pragma once

#include <string>
#include <string_view>

#include "topoguard/common/json.h"

namespace topoguard::k8s {

inline constexpr std::string_view kResourceGroup = "resource.k8s.io";

// Resource names, as the API server serves them.
inline constexpr std::string_view kDeviceClasses = "deviceclasses";
inline constexpr std::string_view kResourceSlices = "resourceslices";
inline constexpr std::string_view kResourceClaims = "resourceclaims";
inline constexpr std::string_view kResourceClaimTemplates = "resourceclaimtemplates";
inline constexpr std::string_view kDeviceTaintRules = "devicetaintrules";

// Kind names.
inline constexpr std::string_view kDeviceClassKind = "DeviceClass";
inline constexpr std::string_view kResourceSliceKind = "ResourceSlice";
inline constexpr std::string_view kResourceClaimKind = "ResourceClaim";
inline constexpr std::string_view kResourceClaimTemplateKind = "ResourceClaimTemplate";
inline constexpr std::string_view kClusterResourceClaimTemplateKind =
    "ClusterResourceClaimTemplate";
inline constexpr std::string_view kDeviceTaintRuleKind = "DeviceTaintRule";

// The standard device attribute naming a device's PCIe root (the alignment topoguard keeps).
inline constexpr std::string_view kPcieRootAttribute = "resource.kubernetes.io/pcieRoot";

// Which resource.k8s.io kind an object is (by group and kind; the version is not looked at).
enum class ResourceKind {
  kOther,  // another group or kind
  kDeviceClass,
  kResourceSlice,
  kResourceClaim,
  kResourceClaimTemplate,
  kClusterResourceClaimTemplate,
  kDeviceTaintRule,
};

[[nodiscard]] ResourceKind resource_kind(std::string_view group, std::string_view kind);
// Of an object's apiVersion and kind; kOther for anything that is not an object.
[[nodiscard]] ResourceKind resource_kind(const Json& object);

// True for kinds whose objects hold a claim spec (ResourceClaim, ResourceClaimTemplate and the
// cluster-scoped ClusterResourceClaimTemplate of KEP-5978).
[[nodiscard]] bool is_claim_kind(std::string_view group, std::string_view kind);

// True for ResourceClaim, ResourceClaimTemplate and ClusterResourceClaimTemplate.
[[nodiscard]] bool is_claim_kind_name(std::string_view kind);

// spec.nodeName of a ResourceSlice as written, "" when absent or not a string: the node of a
// slice that cannot be read as a whole (read_resource_slice() validates it for the others).
[[nodiscard]] std::string slice_node_name(const Json& slice);

// Drops everything of a slice object but what slice_node_name() reads.
void keep_only_node_name(Json& slice);

}  // namespace topoguard::k8s
