#include "topoguard/cluster/cluster_state.h"

#include <gtest/gtest.h>

#include "cluster_test_support.h"
#include "note_name.h"

namespace topoguard::cluster {
namespace {

using testing::build_state;
using testing::parse_documents;

struct VersionCase {
  std::string_view note;
  std::string yaml;
};

class SliceVersionsTest : public ::testing::TestWithParam<VersionCase> {};

// The same device reads the same from v1beta1 (`basic` wrapper), v1beta2 and v1 slices:
// typed attributes, unqualified names in the driver's domain, capacity quantities.
TEST_P(SliceVersionsTest, NormalisesDevice) {
  const ClusterState state = build_state(GetParam().yaml);
  ASSERT_EQ(state.devices().size(), 1u);
  const Device& device = state.devices()[0];
  EXPECT_EQ(device.id(), "gpu.nvidia.com/node-a/gpu-0");
  EXPECT_EQ(device.node, "node-a");
  ASSERT_NE(device.attribute("resource.kubernetes.io/pcieRoot"), nullptr);
  EXPECT_EQ(device.attribute("resource.kubernetes.io/pcieRoot")->to_string(), "pci0000:10");
  const AttributeValue* type = device.attribute("gpu.nvidia.com/type");
  ASSERT_NE(type, nullptr);
  EXPECT_EQ(type->type, AttributeValue::Type::kString);
  const AttributeValue* index = device.attribute("gpu.nvidia.com/index");
  ASSERT_NE(index, nullptr);
  EXPECT_EQ(index->type, AttributeValue::Type::kInt);
  EXPECT_EQ(index->values, std::vector<AttributeValue::Scalar>{std::int64_t{3}});
  const AttributeValue* mig = device.attribute("gpu.nvidia.com/migCapable");
  ASSERT_NE(mig, nullptr);
  EXPECT_EQ(mig->values, std::vector<AttributeValue::Scalar>{true});
  const AttributeValue* version = device.attribute("gpu.nvidia.com/driverVersion");
  ASSERT_NE(version, nullptr);
  EXPECT_EQ(version->type, AttributeValue::Type::kVersion);
  EXPECT_EQ(device.capacity.find("gpu.nvidia.com/memory")->second, "40Gi");
  ASSERT_EQ(state.nodes().size(), 1u);
  EXPECT_EQ(state.nodes()[0].devices, std::vector<std::size_t>{0});
}

// The device's properties, indented by `indent` spaces.
std::string properties(std::size_t indent) {
  const std::string pad(indent, ' ');
  return pad + "attributes:\n" + pad + "  resource.kubernetes.io/pcieRoot: {string: pci0000:10}\n" +
         pad + "  type: {string: gpu}\n" + pad + "  index: {int: 3}\n" + pad +
         "  migCapable: {bool: true}\n" + pad + "  driverVersion: {version: 580.126.9}\n" + pad +
         "capacity:\n" + pad + "  memory: {value: 40Gi}\n";
}

std::string slice(std::string_view api_version, bool basic) {
  return "apiVersion: resource.k8s.io/" + std::string(api_version) +
         "\nkind: ResourceSlice\nmetadata: {name: s}\nspec:\n  driver: gpu.nvidia.com\n"
         "  nodeName: node-a\n  pool: {name: node-a, generation: 1, resourceSliceCount: 1}\n"
         "  devices:\n  - name: gpu-0\n" +
         (basic ? "    basic:\n" + properties(6) : properties(4));
}

INSTANTIATE_TEST_SUITE_P(Versions, SliceVersionsTest,
                         ::testing::Values(VersionCase{"v1beta1_basic", slice("v1beta1", true)},
                                           VersionCase{"v1beta2", slice("v1beta2", false)},
                                           VersionCase{"v1", slice("v1", false)}),
                         topoguard::testing::NoteName{});

// A driver's short `pcieRoot` lives in the driver's domain and never answers the standard name;
// a qualified name wins over the same name written short.
TEST(ClusterStateTest, ShortNamesBelongToTheDriverDomain) {
  const ClusterState state = build_state(R"(
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: dra.net
  nodeName: n
  pool: {name: n}
  devices:
  - name: eth0
    attributes:
      pcieRoot: {string: pci0000:10}
      dra.net/numaNode: {int: 1}
      numaNode: {int: 0}
)");
  ASSERT_EQ(state.devices().size(), 1u);
  const Device& device = state.devices()[0];
  EXPECT_EQ(device.attribute("resource.kubernetes.io/pcieRoot"), nullptr);
  ASSERT_NE(device.attribute("dra.net/pcieRoot"), nullptr);
  EXPECT_EQ(device.attribute("dra.net/numaNode")->to_string(), "1");
  // Under its short name each answers with what was published short.
  EXPECT_EQ(device.attribute("pcieRoot")->to_string(), "pci0000:10");
  EXPECT_EQ(device.attribute("numaNode")->to_string(), "0");
  EXPECT_EQ(device.attribute("rdma"), nullptr);
}

// Short names are found wherever their entry falls among many attributes (past the 64 that a
// device marks in place), and only when published short: a qualified name in the driver's
// domain does not answer a short lookup, nor does one of a domain that begins with the driver's.
TEST(ClusterStateTest, FindsShortNamesAmongManyAttributes) {
  std::string yaml = R"(
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: dra.net
  nodeName: n
  pool: {name: n}
  devices:
  - name: eth0
    attributes:
      dra.net/qualifiedOnly: {int: 1}
      dra.netx/other: {int: 2}
      dra.net/same: {int: 3}
      same: {int: 3}
)";
  for (int i = 0; i < 80; ++i) {
    yaml += "      a" + std::to_string(100 + i) + ": {int: " + std::to_string(i) + "}\n";
  }
  const ClusterState state = build_state(yaml);
  ASSERT_EQ(state.devices().size(), 1u);
  const Device& device = state.devices()[0];
  for (int i = 0; i < 80; ++i) {
    const std::string name = "a" + std::to_string(100 + i);
    ASSERT_NE(device.attribute(name), nullptr) << name;
    EXPECT_EQ(device.attribute(name)->to_string(), std::to_string(i)) << name;
    EXPECT_EQ(device.attribute("dra.net/" + name)->to_string(), std::to_string(i)) << name;
  }
  EXPECT_EQ(device.attribute("same")->to_string(), "3");
  EXPECT_EQ(device.attribute("qualifiedOnly"), nullptr);
  EXPECT_EQ(device.attribute("other"), nullptr);
  EXPECT_EQ(device.attribute("dra.netx/other")->to_string(), "2");
  std::size_t visited = 0;
  device.for_each_short_attribute([&](std::string_view name, const AttributeValue& value) {
    EXPECT_EQ(device.attribute(name), &value) << name;
    ++visited;
  });
  EXPECT_EQ(visited, 81u);
}

// List-valued attributes (DRAListTypeAttributes) compare as sets; a scalar is a one-element set;
// values of different types never match; versions ignore build metadata.
TEST(ClusterStateTest, AttributeValuesCompareAsTypedSets) {
  const ClusterState state = build_state(R"(
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: dra.cpu
  nodeName: n
  pool: {name: n}
  devices:
  - name: a
    attributes:
      resource.kubernetes.io/pcieRoot: {strings: [pci0000:00, pci0000:10]}
      v: {version: 1.2.3+build.7}
      i: {int: 10}
  - name: b
    attributes:
      resource.kubernetes.io/pcieRoot: {string: pci0000:10}
      v: {version: 1.2.3}
      i: {string: "10"}
)");
  ASSERT_EQ(state.devices().size(), 2u);
  const Device& a = state.devices()[0];
  const Device& b = state.devices()[1];
  const auto* root_a = a.attribute("resource.kubernetes.io/pcieRoot");
  EXPECT_TRUE(root_a->list);
  EXPECT_EQ(root_a->to_string(), "[pci0000:00, pci0000:10]");
  EXPECT_TRUE(root_a->shares_element(*b.attribute("resource.kubernetes.io/pcieRoot")));
  EXPECT_TRUE(a.attribute("dra.cpu/v")->shares_element(*b.attribute("dra.cpu/v")));
  EXPECT_FALSE(a.attribute("dra.cpu/i")->shares_element(*b.attribute("dra.cpu/i")));
}

// Only the newest generation of a pool counts; a pool with fewer slices than announced marks
// its node incomplete; allNodes devices join every node; nodeSelector devices are kept apart.
TEST(ClusterStateTest, PoolsGenerationsAndNodeScopes) {
  const ClusterState state = build_state(R"(
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: old}
spec: {driver: d, nodeName: n1, pool: {name: p1, generation: 1}, devices: [{name: stale}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: new}
spec: {driver: d, nodeName: n1, pool: {name: p1, generation: 2}, devices: [{name: fresh}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: half}
spec: {driver: d, nodeName: n2, pool: {name: p2, resourceSliceCount: 2}, devices: [{name: x}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: shared}
spec: {driver: net, allNodes: true, pool: {name: fabric}, devices: [{name: switch}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: rack}
spec:
  driver: net
  nodeSelector: {nodeSelectorTerms: [{matchExpressions: [{key: rack, operator: In, values: [a]}]}]}
  pool: {name: rack-a}
  devices: [{name: tor}]
)");
  ASSERT_EQ(state.nodes().size(), 2u);
  const Node& n1 = state.nodes()[0];
  const Node& n2 = state.nodes()[1];
  EXPECT_EQ(n1.name, "n1");
  ASSERT_EQ(n1.devices.size(), 2u);
  EXPECT_EQ(state.devices()[n1.devices[0]].name, "fresh");
  EXPECT_EQ(state.devices()[n1.devices[1]].name, "switch");
  EXPECT_FALSE(n1.incomplete);
  EXPECT_TRUE(n2.incomplete);
  ASSERT_EQ(state.selector_devices().size(), 1u);
  EXPECT_EQ(state.devices()[state.selector_devices()[0]].name, "tor");
  EXPECT_EQ(state.slice_count(), 4u);
}

// A slice read once is shared by the states built from it: a DeviceTaintRule taints a copy,
// never the shared device; a slice that could not be read stays an error at its field and
// leaves its node incomplete.
TEST(ClusterStateTest, SlicesReadOnceAreSharedBetweenStates) {
  const std::vector<Json> objects = parse_documents(R"(
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: gpus}
spec: {driver: d, nodeName: n1, pool: {name: p1}, devices: [{name: gpu-0}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: broken}
spec: {driver: d, nodeName: n2, pool: {name: p2}, devices: [{name: 7}]}
---
apiVersion: resource.k8s.io/v1
kind: DeviceTaintRule
metadata: {name: maintenance}
spec: {deviceSelector: {driver: d}, taint: {key: m, effect: NoSchedule}}
)");
  const Result<ParsedSlicePtr> gpus = k8s::read_resource_slice(objects[0]);
  const Result<ParsedSlicePtr> broken = k8s::read_resource_slice(objects[1]);
  ASSERT_TRUE(gpus);
  ASSERT_FALSE(broken);
  EXPECT_EQ(broken.error().location.field, "/spec/devices/0/name");
  const auto build = [&](bool with_rule) {
    ClusterStateBuilder builder;
    EXPECT_TRUE(builder.add_slice(objects[0], gpus));
    EXPECT_FALSE(builder.add_slice(objects[1], broken));
    if (with_rule) {
      EXPECT_TRUE(builder.add(objects[2]));
    }
    return std::move(builder).finish();
  };
  const ClusterState tainted = build(true);
  const ClusterState clean = build(false);
  ASSERT_EQ(tainted.devices().size(), 1u);
  ASSERT_EQ(clean.devices().size(), 1u);
  EXPECT_EQ(tainted.devices()[0].taints().size(), 1u);
  EXPECT_TRUE(clean.devices()[0].taints().empty());
  EXPECT_TRUE(clean.nodes().back().incomplete);          // n2: its slice could not be read
  EXPECT_EQ(&clean.devices()[0], &(*gpus)->devices[0]);  // shared, not copied
  EXPECT_NE(&tainted.devices()[0], &(*gpus)->devices[0]);
}

// Device ids are found through 32-bit hashes. These names are chosen so that, with libstdc++'s
// std::hash, gpu-109376 and gpu-175726 have one hash, as do gpu-162751 and gpu-180340: each id
// still finds its own device, and an id whose hash a device shares finds nothing.
TEST(ClusterStateTest, FindsDevicesWhoseIdHashesCollide) {
  const ClusterState state = build_state(R"(
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: gpus}
spec: {driver: gpu.nvidia.com, nodeName: node-a, pool: {name: node-a}, devices: [
  {name: gpu-175726}, {name: gpu-1}, {name: gpu-109376}, {name: gpu-180340}]}
)");
  for (const std::string name : {"gpu-175726", "gpu-1", "gpu-109376", "gpu-180340"}) {
    const auto index = state.device_index("gpu.nvidia.com/node-a/" + name);
    ASSERT_TRUE(index) << name;
    EXPECT_EQ(state.devices()[*index].name.get(), name);
  }
  EXPECT_FALSE(state.device_index("gpu.nvidia.com/node-a/gpu-162751"));
  EXPECT_FALSE(state.device_index("gpu.nvidia.com/node-b/gpu-109376"));
  EXPECT_FALSE(state.device_index("gpu.nvidia.com/gpu-109376"));
}

// perDeviceNodeSelection puts each device on its own node; DeviceClasses keep their selectors.
TEST(ClusterStateTest, PerDeviceNodesAndDeviceClasses) {
  const ClusterState state = build_state(R"(
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: d
  perDeviceNodeSelection: true
  pool: {name: p}
  devices:
  - {name: a, nodeName: n1}
  - {name: b, nodeName: n2}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: efa}
spec:
  selectors:
  - cel: {expression: device.driver == "dra.net"}
  extendedResourceName: vpc.amazonaws.com/efa
)");
  ASSERT_EQ(state.nodes().size(), 2u);
  EXPECT_EQ(state.devices()[state.nodes()[1].devices.at(0)].name, "b");
  const DeviceClass* efa = state.device_class("efa");
  ASSERT_NE(efa, nullptr);
  EXPECT_EQ(efa->selectors, std::vector<std::string>{"device.driver == \"dra.net\""});
  EXPECT_EQ(efa->extended_resource_name, "vpc.amazonaws.com/efa");
}

struct ErrorCase {
  std::string_view note;
  std::string yaml;
  std::string field;
  ErrorCode code;
};

class BadSliceTest : public ::testing::TestWithParam<ErrorCase> {};

// A broken slice is an error naming the field; it is dropped and its node marked incomplete.
TEST_P(BadSliceTest, NamesTheField) {
  const ErrorCase& c = GetParam();
  const std::vector<Json> objects = parse_documents(c.yaml);
  ASSERT_EQ(objects.size(), 1u);
  ClusterStateBuilder builder;
  auto added = builder.add(objects[0]);
  ASSERT_FALSE(added);
  EXPECT_EQ(added.error().location.field, c.field) << added.error().to_string();
  EXPECT_EQ(added.error().code, c.code) << added.error().to_string();
  const ClusterState state = std::move(builder).finish();
  EXPECT_TRUE(state.devices().empty());
  EXPECT_TRUE(state.incomplete() || (!state.nodes().empty() && state.nodes()[0].incomplete));
}

std::string bad_device(std::string_view body) {
  return "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec:\n"
         "  driver: d\n  nodeName: n\n  pool: {name: p}\n  devices:\n  - name: x\n" +
         std::string(body);
}

INSTANTIATE_TEST_SUITE_P(
    Errors, BadSliceTest,
    ::testing::Values(
        ErrorCase{"no_driver",
                  "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nspec: {nodeName: n, "
                  "pool: {name: p}}\n",
                  "/spec/driver", ErrorCode::kMissingField},
        ErrorCase{"no_pool",
                  "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nspec: {driver: d, "
                  "nodeName: n}\n",
                  "/spec/pool", ErrorCode::kMissingField},
        ErrorCase{"no_node_scope",
                  "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nspec: {driver: d, "
                  "pool: {name: p}}\n",
                  "/spec", ErrorCode::kMissingField},
        ErrorCase{"devices_not_a_list",
                  "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nspec: {driver: d, "
                  "nodeName: n, pool: {name: p}, devices: {}}\n",
                  "/spec/devices", ErrorCode::kWrongType},
        ErrorCase{"int_attribute_holds_a_string",
                  bad_device("    attributes: {numa: {int: zero}}\n"),
                  "/spec/devices/0/attributes/numa/int", ErrorCode::kWrongType},
        ErrorCase{"two_values", bad_device("    attributes: {numa: {int: 0, string: a}}\n"),
                  "/spec/devices/0/attributes/numa/string", ErrorCode::kInvalidValue},
        ErrorCase{"no_value", bad_device("    attributes: {numa: {}}\n"),
                  "/spec/devices/0/attributes/numa", ErrorCode::kMissingField},
        ErrorCase{"unknown_value_type", bad_device("    attributes: {numa: {float: 0.5}}\n"),
                  "/spec/devices/0/attributes/numa/float", ErrorCode::kUnknownField},
        ErrorCase{"bad_version", bad_device("    attributes: {v: {version: \"1.2\"}}\n"),
                  "/spec/devices/0/attributes/v/version", ErrorCode::kInvalidValue},
        ErrorCase{"qualified_name_escaped",
                  bad_device("    attributes: {resource.kubernetes.io/pcieRoot: {string: 1}}\n"),
                  "/spec/devices/0/attributes/resource.kubernetes.io~1pcieRoot/string",
                  ErrorCode::kWrongType},
        ErrorCase{"bad_quantity", bad_device("    capacity: {memory: {value: 40GB}}\n"),
                  "/spec/devices/0/capacity/memory/value", ErrorCode::kInvalidValue},
        ErrorCase{"basic_not_an_object", bad_device("    basic: []\n"), "/spec/devices/0/basic",
                  ErrorCode::kWrongType},
        ErrorCase{"duplicate_device", bad_device("  - name: x\n"), "/spec/devices/1/name",
                  ErrorCode::kInvalidValue}),
    topoguard::testing::NoteName{});

// The real captures: dranet's AWS p4d slices (8 A100 GPUs on 4 roots, EFA and ENA NICs) and
// Azure GB300 slices (4 GPUs, 4 ConnectX VFs without pcieRoot), as `kubectl get -o yaml` Lists.
TEST(ClusterStateTest, ReadsRealCaptures) {
  const ClusterState p4d = testing::load_corpus_state(
      {"dranet/examples/aws_eks_examples/gpu-efa/resourceslice-gpu.yaml",
       "dranet/examples/aws_eks_examples/gpu-efa/resourceslice-dranet.yaml"});
  ASSERT_EQ(p4d.nodes().size(), 1u);
  EXPECT_EQ(p4d.nodes()[0].name, "ip-192-168-153-160.ec2.internal");
  EXPECT_EQ(p4d.devices().size(), 15u);  // 8 GPUs, 4 EFA, 3 ENA
  EXPECT_EQ(p4d.devices()[0].capacity.find("gpu.nvidia.com/memory")->second, "40Gi");

  const ClusterState gb300 = testing::load_corpus_state(
      {"dranet/examples/azure_aks_examples/gb300/resourceslice-gpu.yaml",
       "dranet/examples/azure_aks_examples/gb300/resourceslice-dranet.yaml"});
  ASSERT_EQ(gb300.nodes().size(), 1u);
  EXPECT_EQ(gb300.devices().size(), 8u);
  for (const Device& device : gb300.devices()) {
    EXPECT_EQ(device.attribute("resource.kubernetes.io/pcieRoot") != nullptr,
              device.driver == "gpu.nvidia.com")
        << device.id();
  }
}

}  // namespace
}  // namespace topoguard::cluster
