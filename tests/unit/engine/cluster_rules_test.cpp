// unsatisfiable-alignment and attribute-not-published: claims judged against a cluster state.
#include <gtest/gtest.h>

#include "engine_test_support.h"
#include "topoguard/cluster/cluster_state.h"

namespace topoguard::engine {
namespace {

using policy::RuleId;
using testing::expect;
using testing::expect_findings;

// Two nodes: node-a with GPUs and VFs in dra-driver-sriov's old pcieRoot format (a parent BDF),
// node-b with a GPU and a VF on pci0000:40 in the standard format.
constexpr std::string_view kCluster = R"(
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: a}
spec:
  driver: gpu.nvidia.com
  nodeName: node-a
  pool: {name: node-a}
  devices:
  - {name: gpu-0, attributes: {resource.kubernetes.io/pcieRoot: {string: pci0000:00}, type: {string: gpu}}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: a-vf}
spec:
  driver: sriovnetwork.k8snetworkplumbingwg.io
  nodeName: node-a
  pool: {name: node-a}
  devices:
  - {name: vf-0, attributes: {resource.kubernetes.io/pcieRoot: {string: "0000:00:02.0"}}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: b}
spec:
  driver: gpu.nvidia.com
  nodeName: node-b
  pool: {name: node-b}
  devices:
  - {name: gpu-0, attributes: {resource.kubernetes.io/pcieRoot: {string: pci0000:40}, type: {string: gpu}}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: b-vf}
spec:
  driver: sriovnetwork.k8snetworkplumbingwg.io
  nodeName: node-b
  pool: {name: node-b}
  devices:
  - {name: vf-0, attributes: {resource.kubernetes.io/pcieRoot: {string: pci0000:40}}}
)";

// The classes are in the audited input too, so the inventory classifies requests with them.
constexpr std::string_view kClasses = R"(
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.nvidia.com}
spec:
  selectors: [{cel: {expression: "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"}}]
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: dranet}
spec:
  selectors: [{cel: {expression: device.driver == "sriovnetwork.k8snetworkplumbingwg.io"}}]
)";

class ClusterRulesTest : public ::testing::Test {
 protected:
  ClusterRulesTest() : fixture_(std::string(kClasses), Inventory::Claims::kUnknown) {
    cluster::ClusterStateBuilder builder;
    for (const Json& object :
         testing::parse_documents(std::string(kCluster) + "---\n" + std::string(kClasses))) {
      EXPECT_TRUE(builder.add(object));
    }
    state_ = std::move(builder).finish();
  }

  Evaluation evaluate_with_state(const std::string& yaml) {
    Inventory inventory = fixture_.inventory();
    inventory.set_cluster_state(&state_);
    return evaluate(testing::parse_one(yaml), testing::builtin_policies(), inventory);
  }

  testing::InventoryFixture fixture_;
  cluster::ClusterState state_;
};

std::string template_yaml(int gpus, int nics, bool constrained) {
  return "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: t}\n"
         "spec:\n  spec:\n    devices:\n      requests:\n"
         "      - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com, count: " +
         std::to_string(gpus) + "}}\n      - {name: nic, exactly: {deviceClassName: dranet, count: " +
         std::to_string(nics) + "}}\n" +
         (constrained ? "      constraints:\n      - {requests: [gpu, nic], matchAttribute: "
                        "resource.kubernetes.io/pcieRoot}\n"
                      : "");
}

// An aligned claim that fits on node-b: no unsatisfiable-alignment, but node-a's VFs publish
// pcieRoot in the old format, which never equals a GPU's root.
TEST_F(ClusterRulesTest, SatisfiableClaimStillReportsOldFormat) {
  expect_findings(
      evaluate_with_state(template_yaml(1, 1, true)),
      {expect(RuleId::kAttributeNotPublished, "/spec/spec/devices/requests/1", "",
              {"driver \"sriovnetwork.k8snetworkplumbingwg.io\"", "(0000:00:02.0)",
               "not in the form pci<domain>:<bus>", "the claim's constraint can never be met"})});
}

// Two GPUs under one root exist on no node: the claim would stay Pending, and the message names
// the closest node and what it lacks.
TEST_F(ClusterRulesTest, UnsatisfiableClaimNamesClosestNode) {
  expect_findings(
      evaluate_with_state(template_yaml(2, 1, true)),
      {expect(RuleId::kMultiDeviceAlignment, "/spec/spec/devices/constraints/0"),
       expect(RuleId::kUnsatisfiableAlignment, "/spec/spec/devices/constraints/0", "",
              {"no node can satisfy this claim, so its pods would stay Pending: not enough "
               "devices on 2 nodes; closest node node-a: request \"gpu\" needs 2 devices, 1 "
               "match"}),
       expect(RuleId::kAttributeNotPublished, "/spec/spec/devices/requests/1")});
}

// An unaligned claim is judged as the fix would leave it (what-if): fits on node-b, so only
// the alignment finding and the old-format warning.
TEST_F(ClusterRulesTest, WhatIfForTheFix) {
  const Evaluation evaluation = evaluate_with_state(template_yaml(1, 1, false));
  ASSERT_EQ(evaluation.findings.size(), 2u) << testing::dump(evaluation);
  EXPECT_EQ(evaluation.findings[0].rule, RuleId::kMissingPcieAlignment);
  EXPECT_EQ(evaluation.findings[1].rule, RuleId::kAttributeNotPublished);
  EXPECT_NE(evaluation.findings[1].message.find("the constraint topoguard's fix would add"),
            std::string::npos);
}

// Without a cluster state (the webhook) neither rule runs.
TEST_F(ClusterRulesTest, NoClusterStateNoFeasibility) {
  const Evaluation evaluation = evaluate(testing::parse_one(template_yaml(2, 1, true)),
                                         testing::builtin_policies(), fixture_.inventory());
  expect_findings(evaluation,
                  {expect(RuleId::kMultiDeviceAlignment, "/spec/spec/devices/constraints/0")});
}

}  // namespace
}  // namespace topoguard::engine
