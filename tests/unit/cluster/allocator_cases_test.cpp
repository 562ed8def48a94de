// Allocator-style table tests of feasibility for the 1.37 allocator features: device taints and
// tolerations (with DeviceTaintRule), distinctAttribute, consumable capacity with requestPolicy,
// shared counters of partitionable devices, list-valued attributes and the allocations of other
// ResourceClaims. Rows named like a case of k8s.io/dynamic-resource-allocation's
// structured/internal/allocatortesting/allocator_testing.go (commit 3d036712) restate that case
// for one claim on one node: the allocator's "no result" is kUnsatisfiable here, a result
// kSatisfiable. The other rows are topoguard's own (the issue's examples, edges of the rules).
#include <gtest/gtest.h>

#include "cluster_test_support.h"
#include "note_name.h"
#include "topoguard/cluster/feasibility.h"

namespace topoguard::cluster {
namespace {

// Classes A (driver-a) and B (driver-b), and a ResourceSlice of driver-a on node-1, pool-1, with
// `devices` (a YAML flow list) and `extra` spec fields.
std::string slice_a(const std::string& devices, const std::string& extra = "") {
  return R"(apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: class-a}
spec: {selectors: [{cel: {expression: device.driver == "driver-a"}}]}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: class-b}
spec: {selectors: [{cel: {expression: device.driver == "driver-b"}}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: slice-1}
spec:
  driver: driver-a
  nodeName: node-1
  pool: {name: pool-1, resourceSliceCount: 1}
  devices: )" +
         devices + "\n" + extra;
}

struct AllocatorCase {
  std::string_view note;
  std::string state;
  std::string devices;  // the claim's spec.devices, YAML
  Verdict expected;
  Shortfall shortfall = Shortfall::kNone;
  bool only_now = false;
  // For kSatisfiable: the first request's devices, "device" names in pool-1 of driver-a.
  std::vector<std::string> first = {};
};

class AllocatorCaseTest : public ::testing::TestWithParam<AllocatorCase> {};

TEST_P(AllocatorCaseTest, AsTheAllocatorDecides) {
  const AllocatorCase& c = GetParam();
  const ClusterState state = testing::build_state(c.state);
  const std::vector<Json> objects = testing::parse_documents(
      "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: claim-0, "
      "namespace: ns}\nspec:\n  devices: " +
      c.devices + "\n");
  auto spec = k8s::read_claim_spec(objects.at(0));
  ASSERT_TRUE(spec) << spec.error().to_string();
  FeasibilityOptions options;
  options.own_claim = "ns/claim-0";
  const ClaimFeasibility result = check_feasibility(*spec, state, options);
  ASSERT_EQ(result.nodes.size(), 1u);
  EXPECT_EQ(result.verdict, c.expected) << result.nodes[0].reason;
  EXPECT_EQ(result.nodes[0].shortfall, c.shortfall) << result.nodes[0].reason;
  EXPECT_EQ(result.only_now, c.only_now);
  if (!c.first.empty()) {
    std::vector<std::string> ids;
    for (const std::string& name : c.first) {
      ids.push_back("driver-a/pool-1/" + name);
    }
    ASSERT_FALSE(result.nodes[0].assignment.empty());
    EXPECT_EQ(result.nodes[0].assignment[0].second, ids);
  }
}

const std::string kOneRequest = "{requests: [{name: req-0, exactly: {deviceClassName: class-a}}]}";

std::string one_request(const std::string& exactly_fields) {
  return "{requests: [{name: req-0, exactly: {deviceClassName: class-a, " + exactly_fields +
         "}}]}";
}

// The upstream taint fixtures: NoSchedule taint-key=taint-value, NoExecute
// taint-key=taint-value-2, and tolerations of either.
const std::string kTwoTainted =
    "[{name: device-1, taints: [{key: taint-key, value: taint-value, effect: NoSchedule}]}, "
    "{name: device-2, taints: [{key: taint-key, value: taint-value-2, effect: NoExecute}]}]";
const std::string kOneDoublyTainted =
    "[{name: device-1, taints: [{key: taint-key, value: taint-value, effect: NoSchedule}, "
    "{key: taint-key, value: taint-value-2, effect: NoExecute}]}]";
const std::string kTolerateNoSchedule = "{operator: Exists, key: taint-key, effect: NoSchedule}";
const std::string kTolerateNoExecute =
    "{operator: Equal, key: taint-key, value: taint-value-2, effect: NoExecute}";

INSTANTIATE_TEST_SUITE_P(
    Taints, AllocatorCaseTest,
    ::testing::Values(
        AllocatorCase{"tainted_two_devices", slice_a(kTwoTainted), kOneRequest,
                      Verdict::kUnsatisfiable, Shortfall::kNotEnoughDevices},
        AllocatorCase{"tainted_one_device_two_taints", slice_a(kOneDoublyTainted), kOneRequest,
                      Verdict::kUnsatisfiable, Shortfall::kNotEnoughDevices},
        AllocatorCase{"tainted_two_devices_tolerated", slice_a(kTwoTainted),
                      one_request("tolerations: [" + kTolerateNoExecute + "]"),
                      Verdict::kSatisfiable, Shortfall::kNone, false, {"device-2"}},
        AllocatorCase{"tainted_one_device_two_taints_one_tolerated", slice_a(kOneDoublyTainted),
                      one_request("tolerations: [" + kTolerateNoSchedule + "]"),
                      Verdict::kUnsatisfiable, Shortfall::kNotEnoughDevices},
        AllocatorCase{"tainted_one_device_two_taints_both_tolerated", slice_a(kOneDoublyTainted),
                      one_request("tolerations: [" + kTolerateNoSchedule + ", " +
                                  kTolerateNoExecute + "]"),
                      Verdict::kSatisfiable, Shortfall::kNone, false, {"device-1"}},
        AllocatorCase{"tainted_no_effect",
                      slice_a("[{name: device-1, taints: [{key: k, value: v, effect: None}]}]"),
                      kOneRequest, Verdict::kSatisfiable},
        // Consumers treat effects they do not know like None (API doc of DeviceTaint.effect).
        AllocatorCase{"unknown_effect_is_like_none",
                      slice_a("[{name: device-1, taints: [{key: k, effect: NoFutureUse}]}]"),
                      kOneRequest, Verdict::kSatisfiable},
        AllocatorCase{"toleration_exists_without_key_tolerates_all", slice_a(kOneDoublyTainted),
                      one_request("tolerations: [{operator: Exists}]"), Verdict::kSatisfiable},
        AllocatorCase{"toleration_equal_other_value", slice_a(kTwoTainted),
                      one_request("tolerations: [{key: taint-key, value: other}]"),
                      Verdict::kUnsatisfiable, Shortfall::kNotEnoughDevices},
        AllocatorCase{"tainted_prioritized_list",
                      slice_a("[{name: device-1, taints: [{key: taint-key, value: taint-value, "
                              "effect: NoSchedule}]}]"),
                      "{requests: [{name: req-0, firstAvailable: [{name: sub-0, "
                      "deviceClassName: class-b}, {name: sub-1, deviceClassName: class-a}]}]}",
                      Verdict::kUnsatisfiable, Shortfall::kNotEnoughDevices},
        AllocatorCase{"tainted_two_devices_prioritized_list_tolerated", slice_a(kTwoTainted),
                      "{requests: [{name: req-0, firstAvailable: [{name: sub-0, "
                      "deviceClassName: class-a}, {name: sub-1, deviceClassName: class-a, "
                      "tolerations: [" +
                          kTolerateNoExecute + "]}]}]}",
                      Verdict::kSatisfiable, Shortfall::kNone, false, {"device-2"}},
        // Admin access does not bypass taints.
        AllocatorCase{"tainted_admin_access",
                      slice_a("[{name: device-1, taints: [{key: taint-key, value: taint-value, "
                              "effect: NoSchedule}]}]"),
                      one_request("adminAccess: true"), Verdict::kUnsatisfiable,
                      Shortfall::kNotEnoughDevices},
        AllocatorCase{"tainted_all_devices_single",
                      slice_a("[{name: device-1, taints: [{key: taint-key, value: taint-value, "
                              "effect: NoSchedule}]}, {name: device-2}]"),
                      one_request("allocationMode: All"), Verdict::kUnsatisfiable,
                      Shortfall::kNotEnoughDevices},
        // DeviceTaintRule: its taint lands on the devices its selector picks (driver, pool,
        // device; unset ones match all); one without a selector picks none.
        AllocatorCase{"taint_rule_on_the_device",
                      slice_a("[{name: device-1}]",
                              "---\napiVersion: resource.k8s.io/v1\nkind: DeviceTaintRule\n"
                              "metadata: {name: maintenance}\nspec: {deviceSelector: {driver: "
                              "driver-a, pool: pool-1, device: device-1}, taint: {key: m, "
                              "effect: NoExecute}}\n"),
                      kOneRequest, Verdict::kUnsatisfiable, Shortfall::kNotEnoughDevices},
        AllocatorCase{"taint_rule_v1beta2_whole_driver_tolerated",
                      slice_a("[{name: device-1}]",
                              "---\napiVersion: resource.k8s.io/v1beta2\nkind: DeviceTaintRule\n"
                              "metadata: {name: maintenance}\nspec: {deviceSelector: {driver: "
                              "driver-a}, taint: {key: m, value: x, effect: NoSchedule}}\n"),
                      one_request("tolerations: [{key: m, operator: Exists}]"),
                      Verdict::kSatisfiable},
        AllocatorCase{"taint_rule_v1alpha3_other_pool",
                      slice_a("[{name: device-1}]",
                              "---\napiVersion: resource.k8s.io/v1alpha3\nkind: DeviceTaintRule\n"
                              "metadata: {name: maintenance}\nspec: {deviceSelector: {pool: "
                              "pool-2}, taint: {key: m, effect: NoSchedule}}\n"),
                      kOneRequest, Verdict::kSatisfiable},
        // Before 1.35 a v1alpha3 rule could also select by DeviceClass or CEL, which topoguard
        // does not evaluate: whether the device is tainted is unknown.
        AllocatorCase{"taint_rule_with_cel_selectors_is_unknown",
                      slice_a("[{name: device-1}]",
                              "---\napiVersion: resource.k8s.io/v1alpha3\nkind: DeviceTaintRule\n"
                              "metadata: {name: old}\nspec: {deviceSelector: {driver: driver-a, "
                              "selectors: [{cel: {expression: 'true'}}]}, taint: {key: m, "
                              "effect: NoSchedule}}\n"),
                      kOneRequest, Verdict::kUnknown},
        AllocatorCase{"taint_rule_without_selector",
                      slice_a("[{name: device-1}]",
                              "---\napiVersion: resource.k8s.io/v1\nkind: DeviceTaintRule\n"
                              "metadata: {name: nothing}\nspec: {taint: {key: m, effect: "
                              "NoSchedule}}\n"),
                      kOneRequest, Verdict::kSatisfiable}),
    topoguard::testing::NoteName{});

// The upstream distinct fixtures: four devices with driverVersion, numa and boolAttribute.
const std::string kDistinctDevices =
    "[{name: device-1, allowMultipleAllocations: true, attributes: {driverVersion: {version: "
    "1.0.0}, numa: {int: 0}, boolAttribute: {bool: true}}}, "
    "{name: device-2, allowMultipleAllocations: true, attributes: {driverVersion: {version: "
    "1.0.1}, numa: {int: 1}, boolAttribute: {bool: false}}}, "
    "{name: device-3, allowMultipleAllocations: true, attributes: {driverVersion: {version: "
    "1.0.2}, numa: {int: 2}, boolAttribute: {bool: true}}}, "
    "{name: device-4, allowMultipleAllocations: true, attributes: {driverVersion: {version: "
    "1.0.0}, numa: {int: 3}, boolAttribute: {bool: true}}}]";

// Devices device-1, device-2, ... of driver-a with the given numa values.
std::string numa_devices(const std::vector<int>& numa) {
  std::string text = "[";
  for (std::size_t i = 0; i < numa.size(); ++i) {
    text += std::string(i == 0 ? "" : ", ") + "{name: device-" + std::to_string(i + 1) +
            ", attributes: {numa: {int: " + std::to_string(numa[i]) + "}}}";
  }
  return text + "]";
}

// Two requests of two driver-a devices each under a distinctAttribute on numa.
const std::string kTwoOfTwo =
    "{requests: [{name: req-0, exactly: {deviceClassName: class-a, count: 2}}, {name: req-1, "
    "exactly: {deviceClassName: class-a, count: 2}}], constraints: [{distinctAttribute: "
    "driver-a/numa}]}";

// device-1 (numa 0, root r1), device-2 (1, r2), device-3 (0, r1); b-1 of driver-b on r1.
const std::string kRootedDevices =
    "[{name: device-1, attributes: {numa: {int: 0}, example.com/root: {string: r1}}}, {name: "
    "device-2, attributes: {numa: {int: 1}, example.com/root: {string: r2}}}, {name: device-3, "
    "attributes: {numa: {int: 0}, example.com/root: {string: r1}}}]";
const std::string kOneRootedB =
    "---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: slice-b}\nspec: "
    "{driver: driver-b, nodeName: node-1, pool: {name: pool-b}, devices: [{name: b-1, attributes: "
    "{example.com/root: {string: r1}}}]}\n";

std::string requests_a(int count) {
  std::string text = "[";
  for (int i = 0; i < count; ++i) {
    text += std::string(i == 0 ? "" : ", ") + "{name: req-" + std::to_string(i) +
            ", exactly: {deviceClassName: class-a}}";
  }
  return text + "]";
}

INSTANTIATE_TEST_SUITE_P(
    DistinctAttribute, AllocatorCaseTest,
    ::testing::Values(
        AllocatorCase{"with_distinct_constraints", slice_a(kDistinctDevices),
                      "{requests: " + requests_a(4) +
                          ", constraints: [{distinctAttribute: driver-a/boolAttribute, requests: "
                          "[req-0, req-1]}, {distinctAttribute: driver-a/driverVersion, "
                          "requests: [req-0, req-1, req-2]}, {distinctAttribute: driver-a/numa, "
                          "requests: [req-0, req-1, req-2, req-3]}]}",
                      Verdict::kSatisfiable, Shortfall::kNone, false, {"device-1"}},
        AllocatorCase{"with_distinct_constraints_attribute_not_set",
                      slice_a("[{name: device-1, allowMultipleAllocations: true}]"),
                      "{requests: " + requests_a(1) +
                          ", constraints: [{distinctAttribute: driver-a/boolAttribute, requests: "
                          "[req-0]}]}",
                      Verdict::kUnsatisfiable, Shortfall::kAttributeMissing},
        AllocatorCase{"with_distinct_constraints_with_subrequests",
                      slice_a("[{name: device-1, allowMultipleAllocations: true, attributes: "
                              "{boolAttribute: {bool: true}}}, {name: device-2, "
                              "allowMultipleAllocations: true, attributes: {boolAttribute: "
                              "{bool: false}}}]"),
                      "{requests: [{name: req-0, firstAvailable: [{name: sub-0, deviceClassName: "
                      "class-a, selectors: [{cel: {expression: "
                      "'device.attributes[\"driver-a\"].boolAttribute'}}]}, {name: sub-1, "
                      "deviceClassName: class-a}]}, {name: req-1, firstAvailable: [{name: sub-0, "
                      "deviceClassName: class-a, selectors: [{cel: {expression: "
                      "'device.attributes[\"driver-a\"].boolAttribute'}}]}, {name: sub-1, "
                      "deviceClassName: class-a}]}], constraints: [{distinctAttribute: "
                      "driver-a/boolAttribute, requests: [req-0, req-1]}]}",
                      Verdict::kSatisfiable, Shortfall::kNone, false, {"device-1"}},
        // A device that allows multiple allocations still has one value: two requests under a
        // distinct constraint cannot both take it.
        AllocatorCase{"distinct_constraint_one_multi_allocatable_device",
                      slice_a("[{name: device-1, allowMultipleAllocations: true, attributes: "
                              "{stringAttribute: {string: v}}}]"),
                      "{requests: " + requests_a(2) +
                          ", constraints: [{distinctAttribute: driver-a/stringAttribute}]}",
                      Verdict::kUnsatisfiable, Shortfall::kConflict},
        AllocatorCase{"list_attributes_distinct_pairwise_disjoint",
                      slice_a("[{name: device-1, attributes: {ports: {strings: [p0, p1]}}}, "
                              "{name: device-2, attributes: {ports: {strings: [p2]}}}]"),
                      "{requests: " + requests_a(2) +
                          ", constraints: [{distinctAttribute: driver-a/ports}]}",
                      Verdict::kSatisfiable},
        AllocatorCase{"list_attributes_distinct_with_common_elements",
                      slice_a("[{name: device-1, attributes: {ports: {strings: [p0, p1]}}}, "
                              "{name: device-2, attributes: {ports: {string: p1}}}]"),
                      "{requests: " + requests_a(2) +
                          ", constraints: [{distinctAttribute: driver-a/ports}]}",
                      Verdict::kUnsatisfiable, Shortfall::kConflict},
        // The issue's example: the two VFs under the GPU's root share their port.
        AllocatorCase{"two_aligned_vfs_share_a_port",
                      slice_a("[{name: vf-0, attributes: {resource.kubernetes.io/pcieRoot: "
                              "{string: pci0000:00}, port: {int: 1}}}, {name: vf-1, attributes: "
                              "{resource.kubernetes.io/pcieRoot: {string: pci0000:00}, port: "
                              "{int: 1}}}, {name: vf-2, attributes: "
                              "{resource.kubernetes.io/pcieRoot: {string: pci0000:80}, port: "
                              "{int: 2}}}]"),
                      "{requests: " + requests_a(2) +
                          ", constraints: [{matchAttribute: resource.kubernetes.io/pcieRoot}, "
                          "{distinctAttribute: driver-a/port}]}",
                      Verdict::kUnsatisfiable, Shortfall::kConflict},
        // Three devices of one request, values 0, 1, 0: not pairwise distinct. constraint.go
        // v0.37.2 compares a device with every device it holds (an older commit kept only the
        // last value per request, which let this pass); allocator-oracle agrees.
        AllocatorCase{"distinct_within_one_request_compares_with_every_device",
                      slice_a(numa_devices({0, 1, 0})),
                      "{requests: [{name: req-0, exactly: {deviceClassName: class-a, count: 3}}], "
                      "constraints: [{distinctAttribute: driver-a/numa}]}",
                      Verdict::kUnsatisfiable, Shortfall::kConflict},
        AllocatorCase{"distinct_within_one_request_next_values_equal",
                      slice_a(numa_devices({0, 0})),
                      "{requests: [{name: req-0, exactly: {deviceClassName: class-a, count: 2}}], "
                      "constraints: [{distinctAttribute: driver-a/numa}]}",
                      Verdict::kUnsatisfiable, Shortfall::kConflict},
        // Two requests of two devices over values 0, 1, 0, 2: no four are pairwise distinct.
        AllocatorCase{"distinct_two_requests_of_two_values_repeat",
                      slice_a(numa_devices({0, 1, 0, 2})), kTwoOfTwo,
                      Verdict::kUnsatisfiable, Shortfall::kConflict},
        AllocatorCase{"distinct_two_requests_of_two_four_values",
                      slice_a(numa_devices({0, 1, 2, 3})), kTwoOfTwo,
                      Verdict::kSatisfiable, Shortfall::kNone, false, {"device-1", "device-2"}},
        // Over 0, 0, 1, 1: req-1's second device must differ from its first and from req-0's
        // last, and req-1's first from req-0's last: two values cannot do that.
        AllocatorCase{"distinct_two_requests_of_two_two_values",
                      slice_a(numa_devices({0, 0, 1, 1})), kTwoOfTwo, Verdict::kUnsatisfiable,
                      Shortfall::kConflict},
        // Four devices wanted, three there (each request alone could have two).
        AllocatorCase{"distinct_two_requests_of_two_three_devices",
                      slice_a(numa_devices({0, 1, 2})), kTwoOfTwo, Verdict::kUnsatisfiable,
                      Shortfall::kNoSharedValue},
        // req-0 takes device-1 (0) and device-2 (1), req-1's only device (1) fails; taking
        // device-2 back drops only its value, so device-3 (0) repeats device-1's: no allocation.
        AllocatorCase{"distinct_taken_back_drops_only_that_device",
                      slice_a(numa_devices({0, 1, 0}),
                              "---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\n"
                              "metadata: {name: slice-b}\nspec: {driver: driver-b, nodeName: "
                              "node-1, pool: {name: pool-b}, devices: [{name: b-1, attributes: "
                              "{driver-a/numa: {int: 1}}}]}\n"),
                      "{requests: [{name: req-0, exactly: {deviceClassName: class-a, count: 2}}, "
                      "{name: req-1, exactly: {deviceClassName: class-b}}], constraints: "
                      "[{distinctAttribute: driver-a/numa}]}",
                      Verdict::kUnsatisfiable, Shortfall::kConflict},
        // A constraint that refuses a device makes the constraints before it take the device
        // back: distinctAttribute drops device-2's value when the matchAttribute after it
        // refuses device-2, and keeps device-1's (0), which device-3 repeats.
        AllocatorCase{"distinct_taken_back_when_a_later_constraint_refuses",
                      slice_a(kRootedDevices, kOneRootedB),
                      "{requests: [{name: req-0, exactly: {deviceClassName: class-a, count: 2}}, "
                      "{name: req-1, exactly: {deviceClassName: class-b}}], constraints: "
                      "[{distinctAttribute: driver-a/numa, requests: [req-0]}, {matchAttribute: "
                      "example.com/root}]}",
                      Verdict::kUnsatisfiable, Shortfall::kConflict},
        // The same with matchAttribute first: it refuses device-2 before distinctAttribute sees
        // it, device-1's value stays, and device-3 repeats it.
        AllocatorCase{"distinct_keeps_when_an_earlier_constraint_refuses",
                      slice_a(kRootedDevices, kOneRootedB),
                      "{requests: [{name: req-0, exactly: {deviceClassName: class-a, count: 2}}, "
                      "{name: req-1, exactly: {deviceClassName: class-b}}], constraints: "
                      "[{matchAttribute: example.com/root}, {distinctAttribute: driver-a/numa, "
                      "requests: [req-0]}]}",
                      Verdict::kUnsatisfiable, Shortfall::kConflict}),
    topoguard::testing::NoteName{});

// Upstream capacity fixtures: capacity0 with {default 2, validRange {min 2, step 2, max 4}}.
std::string ranged(const std::string& name, const std::string& value) {
  return "{name: " + name + ", allowMultipleAllocations: true, capacity: {capacity0: {value: " +
         value + ", requestPolicy: {default: 2, validRange: {min: 2, step: 2, max: 4}}}}}";
}

std::string with_capacity(int requests, const std::string& amount) {
  std::string text = "{requests: [";
  for (int i = 0; i < requests; ++i) {
    text += std::string(i == 0 ? "" : ", ") + "{name: req-" + std::to_string(i) +
            ", exactly: {deviceClassName: class-a" +
            (amount.empty() ? "" : ", capacity: {requests: {capacity0: " + amount + "}}") + "}}";
  }
  return text + "]}";
}

INSTANTIATE_TEST_SUITE_P(
    ConsumableCapacity, AllocatorCaseTest,
    ::testing::Values(
        // The issue's example: 200Gi of a 100Gi NIC that does not share its capacity.
        AllocatorCase{"dedicated_device_too_small",
                      slice_a("[{name: nic-0, capacity: {bandwidth: {value: 100Gi}}}]"),
                      one_request("capacity: {requests: {bandwidth: 200Gi}}"),
                      Verdict::kUnsatisfiable, Shortfall::kNotEnoughDevices},
        AllocatorCase{"consumable_capacity_dedicated_device_with_consumable_capacity_request",
                      slice_a("[{name: nic-0, capacity: {bandwidth: {value: 100Gi}}}]"),
                      one_request("capacity: {requests: {bandwidth: 100Gi}}"),
                      Verdict::kSatisfiable},
        AllocatorCase{"consumable_capacity_multi_allocatable_device_with_missing_capacity_request",
                      slice_a("[{name: device-1, allowMultipleAllocations: true, capacity: "
                              "{capacity1: {value: 1}}}]"),
                      with_capacity(1, "1"), Verdict::kUnsatisfiable,
                      Shortfall::kNotEnoughDevices},
        // Two shares of 1 on a device of 2 without a policy.
        AllocatorCase{"consumable_capacity_multi_allocatable_device_without_policy_with_capacity_"
                      "request",
                      slice_a("[{name: device-1, allowMultipleAllocations: true, capacity: "
                              "{capacity0: {value: 2}}}]"),
                      with_capacity(2, "1"), Verdict::kSatisfiable},
        // Without a request and a policy, a share is the whole capacity.
        AllocatorCase{"multi_allocatable_without_request_takes_everything",
                      slice_a("[{name: device-1, allowMultipleAllocations: true, capacity: "
                              "{capacity0: {value: 2}}}]"),
                      with_capacity(2, ""), Verdict::kUnsatisfiable, Shortfall::kConflict},
        // 1 rounds up to the range's min 2: two shares fit in 4, three do not.
        AllocatorCase{"consumable_capacity_multi_allocatable_device_with_range_policy_with_"
                      "capacity_request",
                      slice_a("[" + ranged("device-1", "4") + "]"), with_capacity(2, "1"),
                      Verdict::kSatisfiable},
        AllocatorCase{"range_policy_three_shares_do_not_fit",
                      slice_a("[" + ranged("device-1", "4") + "]"), with_capacity(3, "1"),
                      Verdict::kUnsatisfiable, Shortfall::kConflict},
        // 3 rounds up to 2 + 2 = 4.
        AllocatorCase{"consumable_capacity_multi_allocatable_device_with_range_policy_step",
                      slice_a("[" + ranged("device-1", "4") + "]"), with_capacity(1, "3"),
                      Verdict::kSatisfiable},
        AllocatorCase{"range_policy_step_rounding_leaves_no_room_for_a_second",
                      slice_a("[" + ranged("device-1", "4") + "]"), with_capacity(2, "3"),
                      Verdict::kUnsatisfiable, Shortfall::kConflict},
        AllocatorCase{"consumable_capacity_multi_allocatable_device_with_request_over_max_sharing_"
                      "policy",
                      slice_a("[" + ranged("device-1", "10") + "]"), with_capacity(1, "6"),
                      Verdict::kUnsatisfiable, Shortfall::kNotEnoughDevices},
        AllocatorCase{"consumable_capacity_multi_allocatable_device_with_valid_values_policy_round_"
                      "up",
                      slice_a("[{name: device-1, allowMultipleAllocations: true, capacity: "
                              "{capacity0: {value: 3, requestPolicy: {default: 1, validValues: "
                              "[1, 3]}}}}]"),
                      with_capacity(1, "2"), Verdict::kSatisfiable},
        AllocatorCase{"valid_values_above_the_largest_breaks_the_policy",
                      slice_a("[{name: device-1, allowMultipleAllocations: true, capacity: "
                              "{capacity0: {value: 8, requestPolicy: {default: 1, validValues: "
                              "[1, 3]}}}}]"),
                      with_capacity(1, "4"), Verdict::kUnsatisfiable,
                      Shortfall::kNotEnoughDevices},
        // Shares of one claim spread over devices when one is full.
        AllocatorCase{"consumable_capacity_multi_allocatable_device_with_allocated_capacity_next_"
                      "device",
                      slice_a("[" + ranged("device-1", "4") + ", " + ranged("device-2", "4") +
                              "]"),
                      with_capacity(3, "2"), Verdict::kSatisfiable}),
    topoguard::testing::NoteName{});

// A shareable device whose capacity0 of `value` has a validRange of `min`, `step` and `max`
// (default: min).
std::string stepped(const std::string& value, const std::string& min, const std::string& step,
                    const std::string& max) {
  return slice_a(
      "[{name: device-1, allowMultipleAllocations: true, capacity: {capacity0: {value: " + value +
      ", requestPolicy: {default: " + min + ", validRange: {min: " + min + ", step: " + step +
      ", max: " + max + "}}}}}]");
}

// Fractional quantities in validRange steps: the allocator rounds min + n * step exactly (in
// int64 units through Quantity.Value() for whole bounds, in milli-units with
// DRAFractionalCapacityRange for fractional ones), so 1.3 on a 500m step takes 1.5.
INSTANTIATE_TEST_SUITE_P(
    FractionalCapacity, AllocatorCaseTest,
    ::testing::Values(
        // 1.3 -> 1.5: two shares fill 3, a third does not fit.
        AllocatorCase{"half_step_two_shares_fit", stepped("3", "500m", "500m", "3"),
                      with_capacity(2, "'1.3'"), Verdict::kSatisfiable},
        AllocatorCase{"half_step_three_shares_do_not_fit", stepped("3", "500m", "500m", "3"),
                      with_capacity(3, "'1.3'"), Verdict::kUnsatisfiable, Shortfall::kConflict},
        // 1.5 is on a step already: three shares of it do not fit 4, two do.
        AllocatorCase{"on_the_step_stays", stepped("4", "500m", "500m", "4"),
                      with_capacity(2, "'1.5'"), Verdict::kSatisfiable},
        // 250m -> 300m on a 100m step: three shares fit 1, four do not.
        AllocatorCase{"tenth_step_three_shares_fit", stepped("1", "100m", "100m", "1"),
                      with_capacity(3, "250m"), Verdict::kSatisfiable},
        AllocatorCase{"tenth_step_four_shares_do_not_fit", stepped("1", "100m", "100m", "1"),
                      with_capacity(4, "250m"), Verdict::kUnsatisfiable, Shortfall::kConflict},
        // 0.5Gi is a whole number of bytes: 600Mi -> 1Gi, two shares fill 2Gi.
        AllocatorCase{"half_gibibyte_step_two_shares_fit", stepped("2Gi", "512Mi", "0.5Gi", "2Gi"),
                      with_capacity(2, "600Mi"), Verdict::kSatisfiable},
        AllocatorCase{"half_gibibyte_step_three_shares_do_not_fit",
                      stepped("2Gi", "512Mi", "0.5Gi", "2Gi"), with_capacity(3, "600Mi"),
                      Verdict::kUnsatisfiable, Shortfall::kConflict},
        // Whole bounds, fractional request: 2.5 rounds to 4 (Value() takes 3, then the step).
        AllocatorCase{"whole_step_fractional_request_rounds_up",
                      slice_a("[" + ranged("device-1", "4") + "]"), with_capacity(1, "'2.5'"),
                      Verdict::kSatisfiable},
        AllocatorCase{"whole_step_fractional_request_leaves_no_room",
                      slice_a("[" + ranged("device-1", "4") + "]"), with_capacity(2, "'2.5'"),
                      Verdict::kUnsatisfiable, Shortfall::kConflict},
        // Below min, a fractional request takes min: 1.3 -> 2, two shares fill 4.
        AllocatorCase{"fractional_request_below_min_takes_min",
                      slice_a("[" + ranged("device-1", "4") + "]"), with_capacity(2, "'1.3'"),
                      Verdict::kSatisfiable},
        // 1.2 rounds to 1.5, above max 1: the device cannot serve the request at all.
        AllocatorCase{"rounded_above_max_breaks_the_policy", stepped("3", "500m", "500m", "1"),
                      with_capacity(1, "'1.2'"), Verdict::kUnsatisfiable,
                      Shortfall::kNotEnoughDevices},
        // Bounds finer than a milli-unit: the allocator's milli arithmetic would round them.
        AllocatorCase{"sub_milli_step_is_unknown", stepped("3", "1500u", "1500u", "3"),
                      with_capacity(1, "1"), Verdict::kUnknown}),
    topoguard::testing::NoteName{});

// A counter set of 8Gi memory; device-a and device-b take 6Gi each, device-c 2Gi.
std::string partitioned(const std::string& extra = "") {
  return slice_a(
      "[{name: device-a, consumesCounters: [{counterSet: gpu-0, counters: {memory: {value: "
      "6Gi}}}], attributes: {big: {bool: true}}}, {name: device-b, consumesCounters: "
      "[{counterSet: gpu-0, counters: {memory: {value: 6Gi}}}], attributes: {big: {bool: "
      "true}}}, {name: device-c, consumesCounters: [{counterSet: gpu-0, counters: {memory: "
      "{value: 2Gi}}}], attributes: {big: {bool: false}}}]",
      "  sharedCounters: [{name: gpu-0, counters: {memory: {value: 8Gi}}}]\n" + extra);
}

const std::string kTwoBig =
    "{requests: [{name: req-0, exactly: {deviceClassName: class-a, count: 2, selectors: [{cel: "
    "{expression: 'device.attributes[\"driver-a\"].big'}}]}}]}";

std::string allocated(const std::string& results) {
  return "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: other, "
         "namespace: ns}\nspec: {devices: {requests: []}}\nstatus: {allocation: {devices: "
         "{results: " +
         results + "}}}\n";
}

INSTANTIATE_TEST_SUITE_P(
    CountersAndAllocations, AllocatorCaseTest,
    ::testing::Values(
        AllocatorCase{"partitionable_devices_two_that_fit",
                      partitioned(), "{requests: [{name: req-0, exactly: {deviceClassName: "
                                     "class-a, count: 2}}]}",
                      Verdict::kSatisfiable, Shortfall::kNone, false, {"device-a", "device-c"}},
        AllocatorCase{"partitionable_devices_overallocated_counter_set", partitioned(), kTwoBig,
                      Verdict::kUnsatisfiable, Shortfall::kConflict},
        AllocatorCase{"partitionable_devices_references_unknown_counter_set",
                      slice_a("[{name: device-1, consumesCounters: [{counterSet: gpu-9, counters: "
                              "{memory: {value: 1}}}]}]"),
                      kOneRequest, Verdict::kUnknown},
        AllocatorCase{"partitionable_devices_allocated_device_takes_counters",
                      partitioned(allocated("[{request: r, driver: driver-a, pool: pool-1, "
                                            "device: device-a}]")),
                      "{requests: [{name: req-0, exactly: {deviceClassName: class-a, count: 2}}]}",
                      Verdict::kUnsatisfiable, Shortfall::kConflict, true},
        AllocatorCase{"already_allocated_devices",
                      slice_a("[{name: device-1}]",
                              allocated("[{request: r, driver: driver-a, pool: pool-1, device: "
                                        "device-1}]")),
                      kOneRequest, Verdict::kUnsatisfiable, Shortfall::kNotEnoughDevices, true},
        AllocatorCase{"count_devices_some_allocated_admin_access",
                      slice_a("[{name: device-1}]",
                              allocated("[{request: r, driver: driver-a, pool: pool-1, device: "
                                        "device-1}]")),
                      one_request("adminAccess: true"), Verdict::kSatisfiable},
        AllocatorCase{"admin_access_result_holds_nothing",
                      slice_a("[{name: device-1}]",
                              allocated("[{request: r, driver: driver-a, pool: pool-1, device: "
                                        "device-1, adminAccess: true}]")),
                      kOneRequest, Verdict::kSatisfiable},
        AllocatorCase{"consumable_capacity_multi_allocatable_device_with_allocated_capacity_use_"
                      "remaining",
                      slice_a("[" + ranged("device-1", "4") + "]",
                              allocated("[{request: r, driver: driver-a, pool: pool-1, device: "
                                        "device-1, shareID: 7a1e, consumedCapacity: {capacity0: "
                                        "2}}]")),
                      with_capacity(1, "2"), Verdict::kSatisfiable},
        AllocatorCase{"shared_device_full_now",
                      slice_a("[" + ranged("device-1", "4") + "]",
                              allocated("[{request: r, driver: driver-a, pool: pool-1, device: "
                                        "device-1, shareID: 7a1e, consumedCapacity: {capacity0: "
                                        "4}}]")),
                      with_capacity(1, "2"), Verdict::kUnsatisfiable,
                      Shortfall::kNotEnoughDevices, true},
        AllocatorCase{"allocations_do_not_rescue_what_hardware_cannot",
                      slice_a("[{name: device-1}]",
                              allocated("[{request: r, driver: driver-a, pool: pool-1, device: "
                                        "device-1}]")),
                      "{requests: [{name: req-0, exactly: {deviceClassName: class-a, count: 2}}]}",
                      Verdict::kUnsatisfiable, Shortfall::kNotEnoughDevices, false}),
    topoguard::testing::NoteName{});

INSTANTIATE_TEST_SUITE_P(
    ListAttributes, AllocatorCaseTest,
    ::testing::Values(
        AllocatorCase{"list_attributes_match_constraint_list_of_string_values_with_common_elements",
                      slice_a("[{name: device-1, attributes: {roots: {strings: [a, b]}}}, {name: "
                              "device-2, attributes: {roots: {strings: [b, c]}}}]"),
                      "{requests: " + requests_a(2) +
                          ", constraints: [{matchAttribute: driver-a/roots}]}",
                      Verdict::kSatisfiable},
        AllocatorCase{"list_attributes_match_constraint_mixed_scalar_and_list_without_common_"
                      "elements",
                      slice_a("[{name: device-1, attributes: {roots: {strings: [a, b]}}}, {name: "
                              "device-2, attributes: {roots: {string: c}}}]"),
                      "{requests: " + requests_a(2) +
                          ", constraints: [{matchAttribute: driver-a/roots}]}",
                      Verdict::kUnsatisfiable, Shortfall::kNoSharedValue}),
    topoguard::testing::NoteName{});

// Derived attributes (KEP-6080): GPUs of driver-a (class-a, slice-1) and NICs of driver-b
// (class-b, slice-b) on node-1, `gpus` and `nics` YAML flow lists of devices.
std::string gpus_and_nics(const std::string& gpus, const std::string& nics,
                          const std::string& extra = "") {
  return slice_a(gpus,
                 "---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: "
                 "slice-b}\nspec: {driver: driver-b, nodeName: node-1, pool: {name: pool-b}, "
                 "devices: " +
                     nics + "}\n" + extra);
}

// A device with pcieRoot `root` and numaNode `numa`.
std::string placed(const std::string& name, const std::string& root, int numa,
                   const std::string& more = "") {
  return "{name: " + name + ", attributes: {resource.kubernetes.io/pcieRoot: {string: " + root +
         "}, resource.kubernetes.io/numaNode: {int: " + std::to_string(numa) + "}" + more + "}}";
}

// gpu-0 under pci0000:00 and nic-0 under pci0000:80, both on NUMA node 0.
const std::string kSplitRoots = gpus_and_nics("[" + placed("gpu-0", "pci0000:00", 0) + "]",
                                              "[" + placed("nic-0", "pci0000:80", 0) + "]");
const std::string kSharedRoot = gpus_and_nics("[" + placed("gpu-0", "pci0000:00", 0) + "]",
                                              "[" + placed("nic-0", "pci0000:00", 0) + "]");
const std::string kSplitNuma = gpus_and_nics("[" + placed("gpu-0", "pci0000:00", 0) + "]",
                                             "[" + placed("nic-0", "pci0000:80", 1) + "]");

const std::string kReadRoot = R"('device.attributes["resource.kubernetes.io"].pcieRoot')";
const std::string kReadNuma = R"('device.attributes["resource.kubernetes.io"].numaNode')";

// A gpu (class-a) and a nic (class-b) request with extra `exactly` fields, under `constraint`.
std::string gpu_nic(const std::string& gpu_fields, const std::string& nic_fields,
                    const std::string& constraint) {
  return "{requests: [{name: gpu, exactly: {deviceClassName: class-a" +
         (gpu_fields.empty() ? "" : ", " + gpu_fields) +
         "}}, {name: nic, exactly: {deviceClassName: class-b" +
         (nic_fields.empty() ? "" : ", " + nic_fields) + "}}], constraints: [" + constraint + "]}";
}

std::string derives(const std::string& name, const std::string& expression) {
  return "derivedAttributes: [{name: " + name + ", expression: " + expression + "}]";
}

const std::string kPcieRoot = "{matchAttribute: resource.kubernetes.io/pcieRoot}";

INSTANTIATE_TEST_SUITE_P(
    DerivedAttributes, AllocatorCaseTest,
    ::testing::Values(
        AllocatorCase{"pcie_root_on_split_roots", kSplitRoots, gpu_nic("", "", kPcieRoot),
                      Verdict::kUnsatisfiable, Shortfall::kNoSharedValue},
        // The issue's example: a constant pcieRoot on both requests makes the constraint hold
        // for devices on different roots, as the allocator decides.
        AllocatorCase{"forged_pcie_root_on_both_holds", kSplitRoots,
                      gpu_nic(derives("resource.kubernetes.io/pcieRoot", R"('"any"')"),
                              derives("resource.kubernetes.io/pcieRoot", R"('"any"')"), kPcieRoot),
                      Verdict::kSatisfiable, Shortfall::kNone, false, {"gpu-0"}},
        // Devices of the other request keep their own attribute.
        AllocatorCase{"forged_pcie_root_on_one_side_meets_the_real_one", kSplitRoots,
                      gpu_nic(derives("resource.kubernetes.io/pcieRoot", R"('"any"')"), "",
                              kPcieRoot),
                      Verdict::kUnsatisfiable, Shortfall::kNoSharedValue},
        AllocatorCase{"forged_pcie_root_equal_to_the_other_side", kSplitRoots,
                      gpu_nic(derives("resource.kubernetes.io/pcieRoot", R"('"pci0000:80"')"), "",
                              kPcieRoot),
                      Verdict::kSatisfiable},
        // `root`, exactly a read of pcieRoot on both requests, behaves like pcieRoot.
        AllocatorCase{"root_alias_on_split_roots", kSplitRoots,
                      gpu_nic(derives("root", kReadRoot), derives("root", kReadRoot),
                              "{matchAttribute: root}"),
                      Verdict::kUnsatisfiable, Shortfall::kNoSharedValue},
        AllocatorCase{"root_alias_on_a_shared_root", kSharedRoot,
                      gpu_nic(derives("root", kReadRoot), derives("root", kReadRoot),
                              "{matchAttribute: root}"),
                      Verdict::kSatisfiable},
        // A request that does not derive `root` has no such attribute.
        AllocatorCase{"root_alias_on_one_side", kSharedRoot,
                      gpu_nic(derives("root", kReadRoot), "", "{matchAttribute: root}"),
                      Verdict::kUnsatisfiable, Shortfall::kAttributeMissing},
        // A NUMA node derived on both: devices on different roots of one node fit.
        AllocatorCase{"numa_alias_on_split_roots", kSplitRoots,
                      gpu_nic(derives("derived/numa", kReadNuma),
                              derives("derived/numa", kReadNuma), "{matchAttribute: derived/numa}"),
                      Verdict::kSatisfiable},
        AllocatorCase{"numa_alias_on_split_numa_nodes", kSplitNuma,
                      gpu_nic(derives("derived/numa", kReadNuma),
                              derives("derived/numa", kReadNuma), "{matchAttribute: derived/numa}"),
                      Verdict::kUnsatisfiable, Shortfall::kNoSharedValue},
        // A derived list shares an element with the NIC's root.
        AllocatorCase{"derived_list_shares_an_element", kSplitRoots,
                      gpu_nic(derives("root", R"('["pci0000:00", "pci0000:80"]')"),
                              derives("root", kReadRoot), "{matchAttribute: root}"),
                      Verdict::kSatisfiable},
        // distinctAttribute compares derived values too: both NICs derive the same port.
        AllocatorCase{"distinct_on_a_derived_constant",
                      gpus_and_nics("[]", "[" + placed("nic-0", "pci0000:00", 0) + ", " +
                                              placed("nic-1", "pci0000:80", 1) + "]"),
                      "{requests: [{name: a, exactly: {deviceClassName: class-b, " +
                          derives("derived/port", "'1'") +
                          "}}, {name: b, exactly: {deviceClassName: class-b, " +
                          derives("derived/port", "'1'") +
                          "}}], constraints: [{distinctAttribute: derived/port}]}",
                      Verdict::kUnsatisfiable, Shortfall::kConflict},
        // A constraint name without a domain finds an attribute the driver published under
        // that short name (lookupAttribute: the name as written first).
        AllocatorCase{"short_name_finds_a_short_attribute",
                      gpus_and_nics("[{name: gpu-0, attributes: {numaNode: {int: 0}}}]",
                                    "[{name: nic-0, attributes: {numaNode: {int: 0}}}]"),
                      gpu_nic("", "", "{matchAttribute: numaNode}"), Verdict::kSatisfiable},
        AllocatorCase{"short_name_does_not_find_a_qualified_attribute", kSplitRoots,
                      gpu_nic("", "", "{matchAttribute: numaNode}"), Verdict::kUnsatisfiable,
                      Shortfall::kAttributeMissing},
        // An expression reading an attribute the only GPU lacks: a CEL runtime error, which
        // aborts the allocation.
        AllocatorCase{"missing_attribute_fails_the_allocation", kSharedRoot,
                      gpu_nic(derives("root", R"('device.attributes["driver-a"].root')"),
                              derives("root", kReadRoot), "{matchAttribute: root}"),
                      Verdict::kUnsatisfiable, Shortfall::kAllocationError},
        AllocatorCase{"wrong_type_fails_the_allocation", kSharedRoot,
                      gpu_nic(derives("root", "'1.5'"), derives("root", "'1.5'"),
                              "{matchAttribute: root}"),
                      Verdict::kUnsatisfiable, Shortfall::kAllocationError},
        // A value the evaluator cannot know (a list-valued attribute) leaves the answer open.
        AllocatorCase{"unknown_value_is_unknown",
                      gpus_and_nics("[" + placed("gpu-0", "pci0000:00", 0,
                                                 ", ports: {strings: [p0, p1]}") + "]",
                                    "[" + placed("nic-0", "pci0000:00", 0) + "]"),
                      gpu_nic(derives("root", R"('device.attributes["driver-a"].ports')"),
                              derives("root", kReadRoot), "{matchAttribute: root}"),
                      Verdict::kUnknown},
        // The allocator evaluates a derived attribute where a constraint first compares the
        // device: gpu-0 fits before the search reaches gpu-1, whose expression fails.
        AllocatorCase{"error_on_a_device_the_search_never_reaches",
                      gpus_and_nics("[" + placed("gpu-0", "pci0000:00", 0,
                                                 ", root: {string: pci0000:00}") + ", " +
                                        placed("gpu-1", "pci0000:00", 0) + "]",
                                    "[" + placed("nic-0", "pci0000:00", 0) + "]"),
                      gpu_nic(derives("root", R"('device.attributes["driver-a"].root')"),
                              derives("root", kReadRoot), "{matchAttribute: root}"),
                      Verdict::kSatisfiable, Shortfall::kNone, false, {"gpu-0"}},
        // The NIC refuses gpu-0's root, so the search takes gpu-0 back and compares gpu-1.
        AllocatorCase{"error_reached_after_a_refused_device",
                      gpus_and_nics("[" + placed("gpu-0", "pci0000:00", 0,
                                                 ", root: {string: pci0000:00}") + ", " +
                                        placed("gpu-1", "pci0000:80", 0) + "]",
                                    "[" + placed("nic-0", "pci0000:80", 0) + "]"),
                      gpu_nic(derives("root", R"('device.attributes["driver-a"].root')"),
                              derives("root", kReadRoot), "{matchAttribute: root}"),
                      Verdict::kUnsatisfiable, Shortfall::kAllocationError},
        // Too few devices for the count: the allocator still tries the one there is.
        AllocatorCase{"error_on_the_only_device_of_a_count_it_cannot_meet", kSharedRoot,
                      gpu_nic("count: 2, " +
                                  derives("root", R"('device.attributes["driver-a"].root')"),
                              derives("root", kReadRoot), "{matchAttribute: root}"),
                      Verdict::kUnsatisfiable, Shortfall::kAllocationError},
        // A derived attribute no constraint names is never evaluated.
        AllocatorCase{"error_in_an_attribute_no_constraint_names", kSharedRoot,
                      gpu_nic(derives("root", R"('device.attributes["driver-a"].root')"), "",
                              kPcieRoot),
                      Verdict::kSatisfiable},
        // Held now; free, its derived value (a list-valued attribute) is not known: neither
        // "never" nor "not now" is certain.
        AllocatorCase{"held_device_with_an_unknown_value_is_unknown",
                      gpus_and_nics("[" + placed("gpu-0", "pci0000:00", 0,
                                                 ", ports: {strings: [p0, p1]}") + "]",
                                    "[]",
                                    allocated("[{request: r, driver: driver-a, pool: pool-1, "
                                              "device: gpu-0}]")),
                      "{requests: [{name: gpu, exactly: {deviceClassName: class-a, " +
                          derives("root", R"('device.attributes["driver-a"].ports')") +
                          "}}], constraints: [{matchAttribute: root}]}",
                      Verdict::kUnknown, Shortfall::kNotEnoughDevices},
        // Devices other claims hold are passed over before the allocator looks at them.
        AllocatorCase{"error_on_a_held_device_does_not_count",
                      gpus_and_nics("[" + placed("gpu-0", "pci0000:00", 0) + ", " +
                                        placed("gpu-1", "pci0000:00", 0,
                                               ", root: {string: pci0000:00}") +
                                        "]",
                                    "[" + placed("nic-0", "pci0000:00", 0) + "]",
                                    allocated("[{request: r, driver: driver-a, pool: pool-1, "
                                              "device: gpu-0}]")),
                      gpu_nic(derives("root", R"('device.attributes["driver-a"].root')"),
                              derives("root", kReadRoot), "{matchAttribute: root}"),
                      Verdict::kSatisfiable, Shortfall::kNone, false, {"gpu-1"}},
        // gpu-1 may match (its selector reads a list-valued attribute) and its expression
        // fails: if it matches, the allocation aborts, so gpu-0 fitting is not enough.
        AllocatorCase{"error_on_a_device_that_may_match_is_unknown",
                      gpus_and_nics("[" + placed("gpu-0", "pci0000:00", 0,
                                                 ", root: {string: pci0000:00}") + ", " +
                                        placed("gpu-1", "pci0000:00", 0,
                                               ", ports: {strings: [p0]}") +
                                        "]",
                                    "[" + placed("nic-0", "pci0000:00", 0) + "]"),
                      gpu_nic("selectors: [{cel: {expression: '!has(device.attributes[\"driver-"
                              "a\"].ports) || device.attributes[\"driver-a\"].ports.size() > "
                              "0'}}], " +
                                  derives("root", R"('device.attributes["driver-a"].root')"),
                              derives("root", kReadRoot), "{matchAttribute: root}"),
                      Verdict::kUnknown}),
    topoguard::testing::NoteName{});

// The allocation error names the request, the derived attribute, the device, its node and the
// CEL error, and points at the derived attribute.
TEST(DerivedAttributesTest, AllocationErrorSaysWhere) {
  const ClusterState state = testing::build_state(kSharedRoot);
  const std::vector<Json> objects = testing::parse_documents(
      "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c, namespace: "
      "ns}\nspec:\n  devices: " +
      gpu_nic(derives("root", R"('device.attributes["driver-a"].root')"),
              derives("root", kReadRoot), "{matchAttribute: root}") +
      "\n");
  auto spec = k8s::read_claim_spec(objects.at(0));
  ASSERT_TRUE(spec) << spec.error().to_string();
  const ClaimFeasibility result = check_feasibility(*spec, state);
  ASSERT_TRUE(result.allocation_error);
  EXPECT_EQ(result.allocation_error->request, "gpu");
  EXPECT_EQ(result.allocation_error->attribute, "root");
  EXPECT_EQ(result.allocation_error->device, "driver-a/pool-1/gpu-0");
  EXPECT_EQ(result.allocation_error->node, "node-1");
  EXPECT_FALSE(result.allocation_error->message.empty());
  EXPECT_EQ(result.allocation_error->pointer,
            "/spec/devices/requests/0/exactly/derivedAttributes/0");
  EXPECT_EQ(result.nodes.at(0).reason,
            "derived attribute \"root\" of request \"gpu\" fails on driver-a/pool-1/gpu-0: " +
                result.allocation_error->message);
}

// An error on one node fails the Pod whatever another node offers: the scheduler's filter
// returns the error.
TEST(DerivedAttributesTest, ErrorOnOneNodeFailsEveryNode) {
  const ClusterState state = testing::build_state(
      kSharedRoot +
      "---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: slice-2}\n"
      "spec: {driver: driver-a, nodeName: node-2, pool: {name: pool-2}, devices: [{name: gpu-9, "
      "attributes: {root: {string: r}}}]}\n---\napiVersion: resource.k8s.io/v1\nkind: "
      "ResourceSlice\nmetadata: {name: slice-3}\nspec: {driver: driver-b, nodeName: node-2, "
      "pool: {name: pool-3}, devices: [{name: nic-9, attributes: {root: {string: r}}}]}\n");
  const std::vector<Json> objects = testing::parse_documents(
      "kind: ResourceClaim\nmetadata: {name: c, namespace: ns}\nspec:\n  devices: " +
      gpu_nic(derives("root", R"('device.attributes["driver-a"].root')"), "",
              "{matchAttribute: root}") +
      "\n");
  auto spec = k8s::read_claim_spec(objects.at(0));
  ASSERT_TRUE(spec);
  const ClaimFeasibility result = check_feasibility(*spec, state);
  ASSERT_EQ(result.nodes.size(), 2u);
  EXPECT_EQ(result.nodes[0].shortfall, Shortfall::kAllocationError);
  EXPECT_EQ(result.nodes[1].verdict, Verdict::kSatisfiable) << result.nodes[1].reason;
  EXPECT_EQ(result.verdict, Verdict::kUnsatisfiable);
  ASSERT_TRUE(result.allocation_error);
  EXPECT_EQ(result.allocation_error->node, "node-1");
}

// A node where an allocationMode All request under a constraint is unknown (a device that may
// match changes the order the allocator takes All's devices in) may be one where the allocator
// stops with an error, which fails the Pod whatever node-1 offers.
TEST(DerivedAttributesTest, UnknownNodeThatMayAbortLeavesTheClaimUnknown) {
  const ClusterState state = testing::build_state(
      slice_a("[" + placed("gpu-0", "pci0000:00", 0) + "]") +
      "---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: slice-2}\n"
      "spec: {driver: driver-a, nodeName: node-2, pool: {name: pool-2}, devices: [" +
      placed("gpu-0", "pci0000:00", 0) + ", " +
      placed("gpu-1", "pci0000:80", 0, ", ports: {strings: [p0]}") + "]}\n");
  const std::vector<Json> objects = testing::parse_documents(
      "kind: ResourceClaim\nmetadata: {name: c, namespace: ns}\nspec:\n  devices: {requests: "
      "[{name: gpu, exactly: {deviceClassName: class-a, allocationMode: All, selectors: [{cel: "
      "{expression: '!has(device.attributes[\"driver-a\"].ports) || "
      "device.attributes[\"driver-a\"].ports.size() > 0'}}]}}], constraints: " +
      std::string("[") + kPcieRoot + "]}\n");
  auto spec = k8s::read_claim_spec(objects.at(0));
  ASSERT_TRUE(spec) << spec.error().to_string();
  const ClaimFeasibility result = check_feasibility(*spec, state);
  ASSERT_EQ(result.nodes.size(), 2u);
  EXPECT_EQ(result.nodes[0].verdict, Verdict::kSatisfiable) << result.nodes[0].reason;
  EXPECT_EQ(result.nodes[1].verdict, Verdict::kUnknown) << result.nodes[1].reason;
  EXPECT_EQ(result.verdict, Verdict::kUnknown);
}

// Every evaluation is charged to the node's step budget: past it, the answer is unknown.
TEST(DerivedAttributesTest, EvaluationsCountAgainstTheStepBudget) {
  const ClusterState state = testing::build_state(kSharedRoot);
  const std::vector<Json> objects = testing::parse_documents(
      "kind: ResourceClaim\nmetadata: {name: c, namespace: ns}\nspec:\n  devices: " +
      gpu_nic(derives("root", kReadRoot), derives("root", kReadRoot), "{matchAttribute: root}") +
      "\n");
  auto spec = k8s::read_claim_spec(objects.at(0));
  ASSERT_TRUE(spec);
  FeasibilityOptions options;
  options.max_steps_per_node = 2;  // two evaluations, no step left for the search
  const ClaimFeasibility bounded = check_feasibility(*spec, state, options);
  EXPECT_EQ(bounded.verdict, Verdict::kUnknown);
  EXPECT_NE(bounded.nodes.at(0).reason.find("derived attributes"), std::string::npos);
  options.max_steps_per_node = 20;
  EXPECT_EQ(check_feasibility(*spec, state, options).verdict, Verdict::kSatisfiable);
}

// The claim's own allocation holds nothing for itself.
TEST(AllocatorCasesTest, OwnAllocationIsNotHeld) {
  const ClusterState state = testing::build_state(slice_a(
      "[{name: device-1}]",
      "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: claim-0, "
      "namespace: ns}\nspec: {devices: {requests: []}}\nstatus: {allocation: {devices: {results: "
      "[{request: req-0, driver: driver-a, pool: pool-1, device: device-1}]}}}\n"));
  ASSERT_EQ(state.allocations().size(), 1u);
  const std::vector<Json> objects = testing::parse_documents(
      "kind: ResourceClaim\nmetadata: {name: claim-0, namespace: ns}\nspec:\n  devices: " +
      kOneRequest + "\n");
  auto spec = k8s::read_claim_spec(objects.at(0));
  ASSERT_TRUE(spec);
  FeasibilityOptions options;
  options.own_claim = "ns/claim-0";
  EXPECT_EQ(check_feasibility(*spec, state, options).verdict, Verdict::kSatisfiable);
  options.own_claim = "ns/another";
  const ClaimFeasibility held = check_feasibility(*spec, state, options);
  EXPECT_EQ(held.verdict, Verdict::kUnsatisfiable);
  EXPECT_TRUE(held.only_now);
  EXPECT_EQ(held.nodes.at(0).reason,
            "request \"req-0\" needs 1 device, 0 usable of the 1 its selectors pick (1 held by "
            "other claims)");
}

}  // namespace
}  // namespace topoguard::cluster
