#include "topoguard/k8s/kinds.h"

#include <iterator>

#include "topoguard/k8s/object.h"

namespace topoguard::k8s {

ResourceKind resource_kind(std::string_view group, std::string_view kind) {
  if (group != kResourceGroup) {
    return ResourceKind::kOther;
  }
  if (kind == kDeviceClassKind) {
    return ResourceKind::kDeviceClass;
  }
  if (kind == kResourceSliceKind) {
    return ResourceKind::kResourceSlice;
  }
  if (kind == kResourceClaimKind) {
    return ResourceKind::kResourceClaim;
  }
  if (kind == kResourceClaimTemplateKind) {
    return ResourceKind::kResourceClaimTemplate;
  }
  if (kind == kClusterResourceClaimTemplateKind) {
    return ResourceKind::kClusterResourceClaimTemplate;
  }
  if (kind == kDeviceTaintRuleKind) {
    return ResourceKind::kDeviceTaintRule;
  }
  return ResourceKind::kOther;
}

ResourceKind resource_kind(const Json& object) {
  if (!object.is_object()) {
    return ResourceKind::kOther;
  }
  return resource_kind(api_group(string_member_view(object, "apiVersion")),
                       string_member_view(object, "kind"));
}

bool is_claim_kind_name(std::string_view kind) {
  return kind == kResourceClaimKind || kind == kResourceClaimTemplateKind ||
         kind == kClusterResourceClaimTemplateKind;
}

bool is_claim_kind(std::string_view group, std::string_view kind) {
  return group == kResourceGroup && is_claim_kind_name(kind);
}

std::string slice_node_name(const Json& slice) {
  const Json* node = find_at(slice, "/spec/nodeName");
  return node != nullptr && node->is_string() ? node->get<std::string>() : std::string();
}

namespace {

void keep_only(Json& object, std::string_view name) {
  for (auto it = object.begin(); it != object.end();) {
    it = it.key() != name ? object.erase(it) : std::next(it);
  }
}

}  // namespace

void keep_only_node_name(Json& slice) {
  if (!slice.is_object()) {
    return;
  }
  keep_only(slice, "spec");
  if (auto spec = slice.find("spec"); spec != slice.end() && spec->is_object()) {
    keep_only(*spec, "nodeName");
  }
}

}  // namespace topoguard::k8s
