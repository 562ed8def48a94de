#include "topoguard/k8s/kinds.h"

#include <gtest/gtest.h>

namespace topoguard::k8s {
namespace {

TEST(Kinds, TellsTheResourceKindsByGroupAndKind) {
  EXPECT_EQ(resource_kind(Json{{"apiVersion", "resource.k8s.io/v1"}, {"kind", "DeviceClass"}}),
            ResourceKind::kDeviceClass);
  EXPECT_EQ(resource_kind(Json{{"apiVersion", "resource.k8s.io/v1beta1"},
                               {"kind", "ResourceSlice"}}),
            ResourceKind::kResourceSlice);
  EXPECT_EQ(resource_kind("resource.k8s.io", "ResourceClaim"), ResourceKind::kResourceClaim);
  EXPECT_EQ(resource_kind("resource.k8s.io", "ResourceClaimTemplate"),
            ResourceKind::kResourceClaimTemplate);
  EXPECT_EQ(resource_kind("resource.k8s.io", "ClusterResourceClaimTemplate"),
            ResourceKind::kClusterResourceClaimTemplate);
  EXPECT_EQ(resource_kind("resource.k8s.io", "DeviceTaintRule"), ResourceKind::kDeviceTaintRule);
  // Another group, no group, another kind, or not an object.
  EXPECT_EQ(resource_kind(Json{{"apiVersion", "example.com/v1"}, {"kind", "DeviceClass"}}),
            ResourceKind::kOther);
  EXPECT_EQ(resource_kind(Json{{"apiVersion", "v1"}, {"kind", "ResourceSlice"}}),
            ResourceKind::kOther);
  EXPECT_EQ(resource_kind(Json{{"kind", "ResourceSlice"}}), ResourceKind::kOther);
  EXPECT_EQ(resource_kind("resource.k8s.io", "Pod"), ResourceKind::kOther);
  EXPECT_EQ(resource_kind(Json::array()), ResourceKind::kOther);
}

TEST(Kinds, ClaimKinds) {
  EXPECT_TRUE(is_claim_kind("resource.k8s.io", "ResourceClaim"));
  EXPECT_TRUE(is_claim_kind("resource.k8s.io", "ClusterResourceClaimTemplate"));
  EXPECT_FALSE(is_claim_kind("", "ResourceClaim"));
  EXPECT_FALSE(is_claim_kind("resource.k8s.io", "DeviceClass"));
  EXPECT_TRUE(is_claim_kind_name("ResourceClaimTemplate"));
  EXPECT_FALSE(is_claim_kind_name("Pod"));
}

TEST(Kinds, ReadsAndKeepsOnlyASliceNodeName) {
  Json slice = Json::parse(R"({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
      "metadata": {"name": "s"}, "spec": {"nodeName": "node-1", "driver": "d", "devices": []}})");
  EXPECT_EQ(slice_node_name(slice), "node-1");
  keep_only_node_name(slice);
  EXPECT_EQ(slice, Json::parse(R"({"spec": {"nodeName": "node-1"}})"));
  EXPECT_EQ(slice_node_name(Json::parse(R"({"spec": {"nodeName": 7}})")), "");
  EXPECT_EQ(slice_node_name(Json::parse(R"({"spec": {"allNodes": true}})")), "");
  Json not_object = Json::array();
  keep_only_node_name(not_object);
  EXPECT_EQ(not_object, Json::array());
}

}  // namespace
}  // namespace topoguard::k8s
