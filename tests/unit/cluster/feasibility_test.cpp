#include "topoguard/cluster/feasibility.h"

#include <gtest/gtest.h>

#include "cluster_test_support.h"
#include "note_name.h"
#include "test_paths.h"

namespace topoguard::cluster {
namespace {

// The DeviceClasses the captures' templates name (NVIDIA's chart class, DRANET's demo class).
std::string device_classes() {
  std::ifstream in(test::source_dir() + "/tests/data/device-classes.yaml");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

const ClusterState& p4d() {
  static const ClusterState state = testing::load_corpus_state(
      {"dranet/examples/aws_eks_examples/gpu-efa/resourceslice-gpu.yaml",
       "dranet/examples/aws_eks_examples/gpu-efa/resourceslice-dranet.yaml",
       "dranet/examples/aws_eks_examples/gpu-efa/device-class.yaml"},
      device_classes());
  return state;
}

const ClusterState& gb300() {
  static const ClusterState state = testing::load_corpus_state(
      {"dranet/examples/azure_aks_examples/gb300/resourceslice-gpu.yaml",
       "dranet/examples/azure_aks_examples/gb300/resourceslice-dranet.yaml"},
      device_classes());
  return state;
}

k8s::ClaimSpec claim(const std::string& yaml) {
  const std::vector<Json> objects = testing::parse_documents(yaml);
  auto spec = k8s::read_claim_spec(objects.at(0));
  EXPECT_TRUE(spec) << spec.error().to_string();
  return spec ? std::move(spec).value() : k8s::ClaimSpec{};
}

// GPU + NIC template with one pcieRoot constraint over both, in v1 shape.
std::string aligned(int gpus, const std::string& nic_class, int nics) {
  return "kind: ResourceClaimTemplate\nspec:\n  spec:\n    devices:\n      requests:\n"
         "      - name: gpu\n        exactly: {deviceClassName: gpu.nvidia.com, count: " +
         std::to_string(gpus) + "}\n      - name: nic\n        exactly: {deviceClassName: " +
         nic_class + ", count: " + std::to_string(nics) +
         "}\n      constraints:\n      - requests: [gpu, nic]\n"
         "        matchAttribute: resource.kubernetes.io/pcieRoot\n";
}

struct ShapeCase {
  std::string_view note;
  int gpus;
  int efas;
  Verdict expected;
  Shortfall shortfall;
};

class P4dCaptureTest : public ::testing::TestWithParam<ShapeCase> {};

// dranet's AWS p4d capture: each of the 4 roots holds two A100s and one EFA (the ENAs are not
// EFA-class devices). So 1 GPU + 1 EFA and 2 GPUs + 1 EFA fit on one root; 1 GPU + 2 EFAs
// would need two EFAs on one root and 3 GPUs + 1 EFA three GPUs on one: neither exists.
TEST_P(P4dCaptureTest, SharedRootShapes) {
  const ShapeCase& c = GetParam();
  const ClaimFeasibility result =
      check_feasibility(claim(aligned(c.gpus, "efa.networking.k8s.aws", c.efas)), p4d());
  EXPECT_EQ(result.verdict, c.expected);
  ASSERT_EQ(result.nodes.size(), 1u);
  EXPECT_EQ(result.nodes[0].shortfall, c.shortfall) << result.nodes[0].reason;
  EXPECT_TRUE(result.notes.empty());
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, P4dCaptureTest,
    ::testing::Values(
        ShapeCase{"one_gpu_one_efa", 1, 1, Verdict::kSatisfiable, Shortfall::kNone},
        ShapeCase{"two_gpus_one_efa", 2, 1, Verdict::kSatisfiable, Shortfall::kNone},
        ShapeCase{"one_gpu_two_efas", 1, 2, Verdict::kUnsatisfiable, Shortfall::kNoSharedValue},
        ShapeCase{"three_gpus_one_efa", 3, 1, Verdict::kUnsatisfiable,
                  Shortfall::kNoSharedValue}),
    topoguard::testing::NoteName{});

// The satisfiable assignment names real devices under one root, and the unsatisfiable one says
// which root comes closest and what each request has there.
TEST(FeasibilityTest, P4dAssignmentAndClosestRoot) {
  const ClaimFeasibility sat =
      check_feasibility(claim(aligned(2, "efa.networking.k8s.aws", 1)), p4d());
  ASSERT_EQ(sat.nodes.at(0).assignment.size(), 2u);
  EXPECT_EQ(sat.nodes[0].assignment[0].first, "gpu");
  EXPECT_EQ(sat.nodes[0].assignment[0].second,
            (std::vector<std::string>{"gpu.nvidia.com/ip-192-168-153-160.ec2.internal/gpu-0",
                                      "gpu.nvidia.com/ip-192-168-153-160.ec2.internal/gpu-1"}));
  EXPECT_EQ(sat.nodes[0].assignment[1].second,
            std::vector<std::string>{"dra.net/ip-192-168-153-160.ec2.internal/pci-0000-10-1b-0"});

  const ClaimFeasibility unsat =
      check_feasibility(claim(aligned(3, "efa.networking.k8s.aws", 1)), p4d());
  const NodeFeasibility* closest = unsat.closest();
  ASSERT_NE(closest, nullptr);
  EXPECT_EQ(closest->node, "ip-192-168-153-160.ec2.internal");
  EXPECT_EQ(closest->reason,
            "no resource.kubernetes.io/pcieRoot value is shared by enough devices (best: "
            "pci0000:10 has \"gpu\" 2 of 3, \"nic\" 1 of 1)");
}

// Azure GB300: the ConnectX VFs publish no pcieRoot, so no pcieRoot-constrained GPU+NIC claim
// fits, whatever the counts; without the constraint it does.
TEST(FeasibilityTest, Gb300NicsLackTheAttribute) {
  for (int nics : {1, 2}) {
    const ClaimFeasibility result = check_feasibility(claim(aligned(1, "dranet.net", nics)), gb300());
    EXPECT_EQ(result.verdict, Verdict::kUnsatisfiable);
    ASSERT_EQ(result.nodes.size(), 1u);
    EXPECT_EQ(result.nodes[0].shortfall, Shortfall::kAttributeMissing);
    EXPECT_EQ(result.nodes[0].reason,
              "request \"nic\" needs " + std::to_string(nics) +
                  (nics == 1 ? " device" : " devices") +
                  " with resource.kubernetes.io/pcieRoot; of its 4 matching devices, none "
                  "publishes it");
  }
  const ClaimFeasibility unconstrained = check_feasibility(claim(R"(
kind: ResourceClaimTemplate
spec:
  spec:
    devices:
      requests:
      - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}
      - {name: nic, exactly: {deviceClassName: dranet.net, count: 4}}
)"),
                                                           gb300());
  EXPECT_EQ(unconstrained.verdict, Verdict::kSatisfiable);
}

// Request selectors evaluate against the published attributes (the GB300 example's hard-coded
// pciBusID and rdmaDevice selectors), and too few matches is "not enough devices".
TEST(FeasibilityTest, RequestSelectorsNarrowCandidates) {
  const ClaimFeasibility result = check_feasibility(claim(R"(
kind: ResourceClaimTemplate
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.nvidia.com
          count: 2
          selectors:
          - cel: {expression: 'device.attributes["resource.kubernetes.io"].pciBusID == "0008:06:00.0"'}
)"),
                                                    gb300());
  EXPECT_EQ(result.verdict, Verdict::kUnsatisfiable);
  EXPECT_EQ(result.nodes.at(0).shortfall, Shortfall::kNotEnoughDevices);
  EXPECT_EQ(result.nodes[0].reason, "request \"gpu\" needs 2 devices, 1 match");
}

// What topoguard cannot judge exactly is "may match" and makes the answer unknown, never a no:
// a DeviceClass missing from the state, or a selector the evaluator does not implement.
TEST(FeasibilityTest, UnknownIsNeverUnsatisfiable) {
  const ClaimFeasibility missing_class =
      check_feasibility(claim(aligned(1, "no-such-class", 1)), p4d());
  EXPECT_EQ(missing_class.verdict, Verdict::kUnknown);
  ASSERT_EQ(missing_class.notes.size(), 1u);
  EXPECT_EQ(missing_class.notes[0],
            "DeviceClass \"no-such-class\" of request \"nic\" is not in the cluster state: any "
            "device may match");

  // Even if the missing class selected any device, no GB300 device shares a GPU's root: that
  // "no" holds whatever the unknown part turns out to be.
  EXPECT_EQ(check_feasibility(claim(aligned(1, "no-such-class", 1)), gb300()).verdict,
            Verdict::kUnsatisfiable);

  const ClaimFeasibility unknown_selector = check_feasibility(claim(R"(
kind: ResourceClaimTemplate
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.nvidia.com
          selectors:
          - cel: {expression: 'device.attributes["gpu.nvidia.com"].productName.lowerAscii() == "nvidia gb300"'}
)"),
                                                              gb300());
  EXPECT_EQ(unknown_selector.verdict, Verdict::kUnknown) << unknown_selector.nodes.at(0).reason;
  EXPECT_FALSE(unknown_selector.notes.empty());
}

// A DeviceClass whose selector does not parse (the API server accepts only selectors that do,
// so topoguard's parser is what fails) is kept with its error: what it matches is unknown, so a
// claim naming it is never unsatisfiable on the strength of its other selectors.
TEST(FeasibilityTest, ClassSelectorThatDoesNotParseIsUnknown) {
  const std::string gpu_slice = R"(
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n1-gpu}
spec:
  driver: gpu.example.com
  nodeName: n1
  pool: {name: n1, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    attributes: {model: {string: a100}}
  - name: gpu-1
    attributes: {model: {string: a100}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: h100}
spec:
  selectors: [{cel: {expression: "device.attributes['gpu.example.com'].model == 'h100'"}}]
)";
  const std::string broken_class = R"(
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: broken}
spec:
  selectors:
  - cel: {expression: "device.attributes['gpu.example.com'].model == 'h100'"}
  - cel: {expression: "device.attributes['gpu.example.com'].model == "}
)";
  const std::string two_gpus = R"(
kind: ResourceClaimTemplate
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: CLASS, count: 2}
)";
  const auto with_class = [&](const std::string& name) {
    std::string yaml = two_gpus;
    yaml.replace(yaml.find("CLASS"), 5, name);
    return claim(yaml);
  };
  const ClusterState state = testing::build_state(gpu_slice + broken_class);
  const DeviceClass* broken = state.device_class("broken");
  ASSERT_NE(broken, nullptr);
  EXPECT_FALSE(broken->selectors_readable());
  ASSERT_EQ(broken->selector_errors.size(), 1U);
  EXPECT_EQ(broken->selector_errors[0].location.field, "/spec/selectors/1/cel/expression");
  EXPECT_EQ(broken->programs.size(), 1U);

  // The readable class matches no device.
  EXPECT_EQ(check_feasibility(with_class("h100"), state).verdict, Verdict::kUnsatisfiable);
  const ClaimFeasibility result = check_feasibility(with_class("broken"), state);
  EXPECT_EQ(result.verdict, Verdict::kUnknown);
  EXPECT_EQ(result.notes, (std::vector<std::string>{
                              "a selector of DeviceClass \"broken\" does not parse: any device "
                              "may match request \"gpu\""}));
}

// A generated cluster in v1beta1 shape (`basic`) with two nodes: firstAvailable falls back to a
// one-GPU subrequest that fits, allocationMode All takes every NIC of a node and fails where
// they sit on different roots.
TEST(FeasibilityTest, FirstAvailableAndAllOnGeneratedNodes) {
  const ClusterState state = testing::build_state(R"(
apiVersion: resource.k8s.io/v1beta1
kind: ResourceSlice
metadata: {name: a-gpu}
spec:
  driver: gpu.example.com
  nodeName: node-a
  pool: {name: node-a}
  devices:
  - {name: gpu-0, basic: {attributes: {resource.kubernetes.io/pcieRoot: {string: pci0000:00}}}}
  - {name: gpu-1, basic: {attributes: {resource.kubernetes.io/pcieRoot: {string: pci0000:80}}}}
---
apiVersion: resource.k8s.io/v1beta1
kind: ResourceSlice
metadata: {name: a-nic}
spec:
  driver: sriovnetwork.k8snetworkplumbingwg.io
  nodeName: node-a
  pool: {name: node-a}
  devices:
  - {name: vf-0, basic: {attributes: {resource.kubernetes.io/pcieRoot: {string: pci0000:00}}}}
  - {name: vf-1, basic: {attributes: {resource.kubernetes.io/pcieRoot: {string: pci0000:80}}}}
---
apiVersion: resource.k8s.io/v1beta1
kind: ResourceSlice
metadata: {name: b-nic}
spec:
  driver: sriovnetwork.k8snetworkplumbingwg.io
  nodeName: node-b
  pool: {name: node-b}
  devices:
  - {name: vf-0, basic: {attributes: {resource.kubernetes.io/pcieRoot: {string: pci0000:00}}}}
---
apiVersion: resource.k8s.io/v1beta1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  selectors: [{cel: {expression: device.driver == "gpu.example.com"}}]
---
apiVersion: resource.k8s.io/v1beta1
kind: DeviceClass
metadata: {name: vf}
spec:
  selectors: [{cel: {expression: device.driver == "sriovnetwork.k8snetworkplumbingwg.io"}}]
)");
  const ClaimFeasibility fallback = check_feasibility(claim(R"(
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaim
spec:
  devices:
    requests:
    - name: gpu
      firstAvailable:
      - {name: two, deviceClassName: gpu.example.com, count: 2}
      - {name: one, deviceClassName: gpu.example.com, count: 1}
    - {name: nic, deviceClassName: vf}
    constraints:
    - {requests: [gpu, nic], matchAttribute: resource.kubernetes.io/pcieRoot}
)"),
                                                      state);
  EXPECT_EQ(fallback.verdict, Verdict::kSatisfiable);
  ASSERT_EQ(fallback.nodes.size(), 2u);
  EXPECT_EQ(fallback.nodes[0].assignment.at(0).first, "gpu/one");
  EXPECT_EQ(fallback.nodes[1].verdict, Verdict::kUnsatisfiable);  // node-b has no GPU
  EXPECT_EQ(fallback.nodes[1].shortfall, Shortfall::kNotEnoughDevices);

  const ClaimFeasibility all = check_feasibility(claim(R"(
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaim
spec:
  devices:
    requests:
    - {name: gpu, deviceClassName: gpu.example.com}
    - {name: nics, deviceClassName: vf, allocationMode: All}
    constraints:
    - {requests: [gpu, nics], matchAttribute: resource.kubernetes.io/pcieRoot}
)"),
                                                 state);
  // The allocator takes gpu-0 (pci0000:00), then All must take vf-1 (pci0000:80), which the
  // constraint refuses: Allocate fails with an error (allocator-oracle agrees), so the Pod is
  // never scheduled.
  EXPECT_EQ(all.verdict, Verdict::kUnsatisfiable);
  EXPECT_EQ(all.nodes.at(0).shortfall, Shortfall::kAllocationError) << all.nodes[0].reason;
  ASSERT_TRUE(all.allocation_error.has_value());
  EXPECT_EQ(all.allocation_error->cause, AllocationError::Cause::kAllModeConstraint);
  EXPECT_EQ(all.allocation_error->request, "nics");
  EXPECT_EQ(all.allocation_error->device, "sriovnetwork.k8snetworkplumbingwg.io/node-a/vf-1");
}

// No slice at all: the answer is unknown, not "no node can".
TEST(FeasibilityTest, EmptyClusterIsUnknown) {
  const ClusterState state = testing::build_state(device_classes());
  const ClaimFeasibility result = check_feasibility(claim(aligned(1, "dranet.net", 1)), state);
  EXPECT_EQ(result.verdict, Verdict::kUnknown);
}

}  // namespace
}  // namespace topoguard::cluster
