#include "topoguard/engine/inventory.h"

#include <gtest/gtest.h>

#include "engine_test_support.h"
#include "topoguard/cluster/cluster_state.h"

namespace topoguard::engine {
namespace {

using testing::parse_one;

// DeviceClasses are indexed by name with their drivers and extended resource name, and found
// by extendedResourceName or by the implicit deviceclass.resource.kubernetes.io/<name>.
TEST(InventoryTest, IndexesDeviceClasses) {
  const Json device_class = parse_one(R"(apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: vf}
spec:
  selectors: [{cel: {expression: "device.driver == 'sriovnetwork.k8snetworkplumbingwg.io'"}}]
  extendedResourceName: example.com/vf
)");
  Inventory inventory;
  EXPECT_TRUE(inventory.add(device_class));
  const k8s::DeviceClass* info = inventory.device_class("vf");
  ASSERT_NE(info, nullptr);
  ASSERT_EQ(info->programs.size(), 1U);
  EXPECT_TRUE(info->selectors_readable());
  EXPECT_EQ(info->programs[0].source(), "device.driver == 'sriovnetwork.k8snetworkplumbingwg.io'");
  EXPECT_EQ(info->extended_resource_name, "example.com/vf");
  EXPECT_EQ(inventory.device_class_for_resource("example.com/vf"), info);
  EXPECT_EQ(inventory.device_class_for_resource("deviceclass.resource.kubernetes.io/vf"), info);
  EXPECT_EQ(inventory.device_class_for_resource("example.com/other"), nullptr);
  EXPECT_EQ(inventory.device_class("other"), nullptr);
}

// A class whose spec cannot be read classifies nothing for sure: its selectors are unreadable.
// Its errors name the field: where it cannot be read (unless a cluster state read from the
// same objects reports that), else each selector that does not parse, at its place.
TEST(InventoryTest, UnreadableDeviceClassesAndTheirErrors) {
  const Json unreadable = parse_one(R"(apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: vf}
spec:
  selectors: [{cel: {}}]
)");
  Inventory inventory;
  EXPECT_TRUE(inventory.add(unreadable));
  const k8s::DeviceClass* info = inventory.device_class("vf");
  ASSERT_NE(info, nullptr);
  EXPECT_FALSE(info->selectors_readable());
  const std::vector<Error> errors = device_class_errors(unreadable, true);
  ASSERT_EQ(errors.size(), 1U);
  EXPECT_EQ(errors[0].location.field, "/spec/selectors/0/cel/expression");
  EXPECT_TRUE(device_class_errors(unreadable, false).empty());

  const Json bad_selector = parse_one(R"(apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
spec:
  selectors: [{other: {}}, {cel: {expression: "device.driver =="}}]
)");
  const std::vector<Error> syntax = device_class_errors(bad_selector, false);
  ASSERT_EQ(syntax.size(), 1U);
  EXPECT_EQ(syntax[0].location.field, "/spec/selectors/1/cel/expression");
  EXPECT_TRUE(device_class_errors(parse_one("{kind: Pod, apiVersion: v1}"), true).empty());
}

// The cluster state's DeviceClasses (audit --cluster-state) join the input's: a container's
// extendedResourceName resolves to a class only the cluster has, and a class the input also
// holds is the input's, whichever was seen first.
TEST(InventoryTest, ClusterStateDeviceClassesJoinTheInputs) {
  cluster::ClusterStateBuilder builder;
  for (const std::string_view yaml : {
           R"(apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: ib}
spec:
  selectors: [{cel: {expression: "device.driver == 'dra.net'"}}]
  extendedResourceName: example.com/ib
)",
           R"(apiVersion: resource.k8s.io/v1beta2
kind: DeviceClass
metadata: {name: vf}
spec:
  extendedResourceName: example.com/cluster-vf
)"}) {
    ASSERT_TRUE(builder.add(parse_one(std::string(yaml))));
  }
  const cluster::ClusterState state = std::move(builder).finish();
  const Json input_class = parse_one(R"(apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: vf}
spec:
  extendedResourceName: example.com/vf
)");
  for (const bool state_first : {true, false}) {
    Inventory inventory;
    if (state_first) {
      inventory.set_cluster_state(&state);
    }
    EXPECT_TRUE(inventory.add(input_class));
    if (!state_first) {
      inventory.set_cluster_state(&state);
    }
    const k8s::DeviceClass* ib = inventory.device_class_for_resource("example.com/ib");
    ASSERT_NE(ib, nullptr);
    EXPECT_EQ(ib->name, "ib");
    ASSERT_EQ(ib->programs.size(), 1U);
    EXPECT_EQ(ib->programs[0].source(), "device.driver == 'dra.net'");
    EXPECT_EQ(inventory.device_class_for_resource("deviceclass.resource.kubernetes.io/ib"), ib);
    ASSERT_NE(inventory.device_class("vf"), nullptr);
    EXPECT_EQ(inventory.device_class("vf")->extended_resource_name, "example.com/vf");
    EXPECT_EQ(inventory.device_class_for_resource("example.com/cluster-vf"), nullptr);
  }
}

// Claims and templates are found by (namespace, name); no namespace means "default".
TEST(InventoryTest, IndexesClaimsByNamespaceAndName) {
  const Json claim_template = parse_one(
      "apiVersion: resource.k8s.io/v1beta1\nkind: ResourceClaimTemplate\nmetadata: {name: t}\n"
      "spec: {spec: {devices: {requests: []}}}\n");
  const Json claim = parse_one(
      "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
      "metadata: {name: c, namespace: ml}\nspec: {devices: {requests: []}}\n");
  Inventory inventory(Inventory::Claims::kKnown);
  EXPECT_TRUE(inventory.claims_known());
  EXPECT_TRUE(inventory.add(claim_template));
  EXPECT_TRUE(inventory.add(claim));
  EXPECT_EQ(inventory.claim_template("default", "t"), &claim_template);
  EXPECT_EQ(inventory.claim_template("ml", "t"), nullptr);
  EXPECT_EQ(inventory.claim("ml", "c"), &claim);
  EXPECT_EQ(inventory.claim("ml", "t"), nullptr);
  EXPECT_FALSE(Inventory().claims_known());
}

// A NetworkAttachmentDefinition gives its resourceName; one without it gives nothing.
TEST(InventoryTest, IndexesNetworkAttachmentDefinitions) {
  const Json with_resource = parse_one(R"(apiVersion: k8s.cni.cncf.io/v1
kind: NetworkAttachmentDefinition
metadata:
  name: rdma-net
  namespace: ml
  annotations: {k8s.v1.cni.cncf.io/resourceName: mellanox.com/mlnx_rdma}
)");
  const Json without_resource = parse_one(
      "apiVersion: k8s.cni.cncf.io/v1\nkind: NetworkAttachmentDefinition\n"
      "metadata: {name: plain, namespace: ml}\n");
  Inventory inventory;
  EXPECT_TRUE(inventory.add(with_resource));
  EXPECT_TRUE(inventory.add(without_resource));
  const std::string* resource = inventory.network_resource("ml", "rdma-net");
  ASSERT_NE(resource, nullptr);
  EXPECT_EQ(*resource, "mellanox.com/mlnx_rdma");
  EXPECT_EQ(inventory.network_resource("ml", "plain"), nullptr);
  EXPECT_EQ(inventory.network_resource("default", "rdma-net"), nullptr);
}

// Other kinds, and objects without a name, are not indexed.
TEST(InventoryTest, IgnoresOtherObjects) {
  Inventory inventory;
  EXPECT_FALSE(inventory.add(parse_one("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n")));
  EXPECT_FALSE(inventory.add(parse_one("apiVersion: resource.k8s.io/v1\nkind: DeviceClass\n")));
  EXPECT_FALSE(inventory.add(parse_one("apiVersion: example.com/v1\nkind: DeviceClass\n"
                                       "metadata: {name: x}\n")));
  EXPECT_FALSE(inventory.add(Json::array()));
}

}  // namespace
}  // namespace topoguard::engine
