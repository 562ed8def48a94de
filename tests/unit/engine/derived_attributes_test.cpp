// Derived attributes (KEP-6080): overridden-alignment-attribute, and constraints on a derived
// name counted as alignment, NUMA or nothing by what their expressions read.
#include <gtest/gtest.h>

#include "engine_test_support.h"
#include "topoguard/engine/evaluate.h"

namespace topoguard::engine {
namespace {

using policy::RuleId;
using testing::expect;

constexpr std::string_view kRootRead = R"(device.attributes["resource.kubernetes.io"].pcieRoot)";
constexpr std::string_view kNumaRead = R"(device.attributes["dra.net"].numaNode)";

// A v1 template with a GPU and a NIC request, each deriving `gpu_derived` / `nic_derived`
// (YAML flow list items, or "" for none), and `constraints` (YAML flow list).
std::string claim(const std::string& gpu_derived, const std::string& nic_derived,
                  const std::string& constraints) {
  const auto request = [](const std::string& name, const std::string& device_class,
                          const std::string& derived) {
    return "      - {name: " + name + ", exactly: {deviceClassName: " + device_class +
           (derived.empty() ? "" : ", derivedAttributes: [" + derived + "]") + "}}\n";
  };
  return "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\n"
         "metadata: {name: t, namespace: ml}\nspec:\n  spec:\n    devices:\n      requests:\n" +
         request("gpu", "gpu.nvidia.com", gpu_derived) + request("nic", "dranet", nic_derived) +
         "      constraints: " + constraints + "\n";
}

std::string derived(std::string_view name, std::string_view expression) {
  std::string quoted;
  for (const char c : expression) {
    quoted += c == '\'' ? "''" : std::string(1, c);
  }
  return "{name: " + std::string(name) + ", expression: '" + quoted + "'}";
}

const std::string kPcieConstraint =
    "[{requests: [gpu, nic], matchAttribute: resource.kubernetes.io/pcieRoot}]";
const std::string kRootConstraint = "[{requests: [gpu, nic], matchAttribute: root}]";
const std::string kGpuDerived = "/spec/spec/devices/requests/0/exactly/derivedAttributes/0";
const std::string kNicDerived = "/spec/spec/devices/requests/1/exactly/derivedAttributes/0";
const std::string kAppendPcie =
    R"([{"op":"add","path":"/spec/spec/devices/constraints/-","value":{"requests":["gpu","nic"],)"
    R"("matchAttribute":"resource.kubernetes.io/pcieRoot"}}])";

// One row: a claim and exactly the findings it yields under the built-in policy.
struct DerivedCase {
  std::string_view note;
  std::string object;
  std::vector<testing::ExpectedFinding> expected;
};

const std::vector<DerivedCase>& derived_cases() {
  static const std::vector<DerivedCase> cases{
      // The issue's forged alignment: both requests make pcieRoot a constant. No fix: a new
      // pcieRoot constraint would compare the same constant.
      DerivedCase{
          "constant_pcie_root_on_both_is_forged",
          claim(derived("resource.kubernetes.io/pcieRoot", R"("any")"),
                derived("resource.kubernetes.io/pcieRoot", R"("any")"), kPcieConstraint),
          {expect(RuleId::kMissingPcieAlignment, "/spec/spec/devices"),
           expect(RuleId::kOverriddenAlignmentAttribute, kGpuDerived, "",
                  {"derives its own resource.kubernetes.io/pcieRoot", "the expression `\"any\"`"}),
           expect(RuleId::kOverriddenAlignmentAttribute, kNicDerived)}},
      DerivedCase{"pcie_root_from_numa_node_is_forged",
                  claim(derived("resource.kubernetes.io/pcieRoot", kNumaRead), "", kPcieConstraint),
                  {expect(RuleId::kMissingPcieAlignment, "/spec/spec/devices"),
                   expect(RuleId::kOverriddenAlignmentAttribute, kGpuDerived, "",
                          {"the device's dra.net/numaNode"})}},
      // A read of the same attribute, with either index form, changes nothing.
      DerivedCase{"pcie_root_read_as_itself_is_harmless",
                  claim(derived("resource.kubernetes.io/pcieRoot",
                                R"(device.attributes["resource.kubernetes.io"]["pcieRoot"])"),
                        "", kPcieConstraint),
                  {}},
      // A NUMA attribute overridden under a NUMA constraint: the NUMA tie is gone too.
      DerivedCase{"numa_attribute_overridden",
                  claim(derived("dra.net/numaNode", "0"), "",
                        "[{requests: [gpu, nic], matchAttribute: dra.net/numaNode}]"),
                  {expect(RuleId::kMissingPcieAlignment, "/spec/spec/devices", kAppendPcie),
                   expect(RuleId::kOverriddenAlignmentAttribute, kGpuDerived)}},
      // has() is a test, not a read: its value is a bool.
      DerivedCase{"has_test_is_not_a_read",
                  claim(derived("resource.kubernetes.io/pcieRoot",
                                R"(has(device.attributes["resource.kubernetes.io"].pcieRoot))"),
                        "", kPcieConstraint),
                  {expect(RuleId::kMissingPcieAlignment, "/spec/spec/devices"),
                   expect(RuleId::kOverriddenAlignmentAttribute, kGpuDerived)}},
      // The alias of the issue: `root` is exactly the device's pcieRoot on both requests.
      DerivedCase{"alias_of_pcie_root_is_aligned",
                  claim(derived("root", kRootRead), derived("root", kRootRead), kRootConstraint),
                  {}},
      DerivedCase{
          "alias_reading_numa_on_one_side_is_numa_only",
          claim(derived("root", kRootRead), derived("root", kNumaRead), kRootConstraint),
          {expect(RuleId::kNumaOnlyAlignment, "/spec/spec/devices/constraints/0", kAppendPcie)}},
      DerivedCase{"alias_of_anything_else_is_no_alignment",
                  claim(derived("root", kRootRead),
                        derived("root", R"(device.attributes["dra.net"].pciAddress + "")"),
                        kRootConstraint),
                  {expect(RuleId::kMissingPcieAlignment, "/spec/spec/devices", kAppendPcie)}},
      // The NIC's driver attribute `root` (if any) is compared there: not an alignment.
      DerivedCase{"alias_derived_on_one_side_only_is_no_alignment",
                  claim(derived("root", kRootRead), "", kRootConstraint),
                  {expect(RuleId::kMissingPcieAlignment, "/spec/spec/devices", kAppendPcie)}},
      // A derived pcieRoot on a request no constraint binds is not reported, but no fix is
      // offered: the fix's constraint would bind it.
      DerivedCase{"override_outside_constraints_blocks_the_fix_only",
                  claim(derived("resource.kubernetes.io/pcieRoot", R"("x")"), "", "[]"),
                  {expect(RuleId::kMissingPcieAlignment, "/spec/spec/devices")}}};
  return cases;
}

// Every row yields exactly its findings, and its fixes converge.
TEST(DerivedAttributesTest, EveryRowYieldsExactFindings) {
  const Inventory inventory;
  for (const DerivedCase& c : derived_cases()) {
    SCOPED_TRACE(c.note);
    const Json object = testing::parse_one(c.object);
    const Evaluation evaluation = evaluate(object, testing::builtin_policies(), inventory);
    testing::expect_findings(evaluation, c.expected);
    testing::expect_fixes_converge(object, evaluation, testing::builtin_policies(), inventory);
  }
}

// An alias over a multi-device request is an alignment constraint like any other.
TEST(DerivedAttributesTest, AliasCountsForMultiDeviceAlignment) {
  const Inventory inventory;
  std::string object =
      claim(derived("root", kRootRead), derived("root", kRootRead), kRootConstraint);
  object.replace(object.find("deviceClassName: dranet"), 23, "deviceClassName: dranet, count: 2");
  const Evaluation evaluation =
      evaluate(testing::parse_one(object), testing::builtin_policies(), inventory);
  testing::expect_findings(
      evaluation, {expect(RuleId::kMultiDeviceAlignment, "/spec/spec/devices/constraints/0")});
}

}  // namespace
}  // namespace topoguard::engine
