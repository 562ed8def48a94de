#include "topoguard/engine/evaluate.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine_test_support.h"
#include "note_name.h"

namespace topoguard::engine {
namespace {

using policy::RuleId;
using testing::builtin_policies;
using testing::expect;
using testing::ExpectedFinding;
using testing::InventoryFixture;
using testing::parse_one;

constexpr std::string_view kPcieRoot = "resource.kubernetes.io/pcieRoot";

std::string constraint(const std::string& gpu, const std::string& nic) {
  return R"({"requests":[")" + gpu + R"(",")" + nic + R"("],"matchAttribute":")" +
         std::string(kPcieRoot) + R"("})";
}

// The fix that adds a whole `constraints` array at `path`, one constraint per pair.
std::string add_array(const std::string& path,
                      const std::vector<std::pair<std::string, std::string>>& pairs) {
  std::string values;
  for (const auto& [gpu, nic] : pairs) {
    values += (values.empty() ? "" : ",") + constraint(gpu, nic);
  }
  return R"([{"op":"add","path":")" + path + R"(","value":[)" + values + "]}]";
}

// The fix that appends one constraint per pair to an existing array at `path`.
std::string append(const std::string& path,
                   const std::vector<std::pair<std::string, std::string>>& pairs) {
  std::string operations;
  for (const auto& [gpu, nic] : pairs) {
    operations += (operations.empty() ? "" : ",") + std::string(R"({"op":"add","path":")") +
                  path + R"(/-","value":)" + constraint(gpu, nic) + "}";
  }
  return "[" + operations + "]";
}

const std::string kTemplateConstraints = "/spec/spec/devices/constraints";
const std::string kClaimConstraints = "/spec/devices/constraints";

struct RuleCase {
  std::string_view note;
  std::string object;
  std::vector<ExpectedFinding> expected;
  std::string inventory;
  Inventory::Claims claims;
};

RuleCase rule_case(std::string_view note, std::string object, std::vector<ExpectedFinding> expected,
                   std::string inventory = "",
                   Inventory::Claims claims = Inventory::Claims::kUnknown) {
  return RuleCase{note, std::move(object), std::move(expected), std::move(inventory), claims};
}

void PrintTo(const RuleCase& c, std::ostream* os) { *os << c.note; }

class RuleTest : public ::testing::TestWithParam<RuleCase> {};

// Each object yields exactly the listed findings (rule, pointer, fix, message) under the
// built-in policy; every fix applied with nlohmann's patch() re-evaluates with no fixable
// finding left, and evaluating twice gives the same output.
TEST_P(RuleTest, YieldsExactFindings) {
  const RuleCase& c = GetParam();
  InventoryFixture fixture(c.inventory, c.claims);
  const Json object = parse_one(c.object);
  const Evaluation evaluation = evaluate(object, builtin_policies(), fixture.inventory());
  testing::expect_findings(evaluation, c.expected);
  for (const Finding& finding : evaluation.findings) {
    EXPECT_EQ(finding.policy, "default");
    EXPECT_EQ(finding.action, testing::builtin_action(finding.rule));
    EXPECT_EQ(finding.fix_enabled, !finding.fix.empty());  // built-in: mutate on for fixable
    EXPECT_EQ(finding.resource, k8s::object_ref(object));
  }
  testing::expect_fixes_converge(object, evaluation, builtin_policies(), fixture.inventory());
}

// ---------------------------------------------------------------------------------------------
// Claims and templates.

const std::string kV1TemplateHead = R"(apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: t, namespace: ml}
spec:
  spec:
    devices:
)";

std::string v1_template(const std::string& devices_body) { return kV1TemplateHead + devices_body; }

const std::string kGpuNicRequests = R"(      requests:
      - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}
      - {name: nic, exactly: {deviceClassName: dranet}}
)";

const std::string kUnalignedTemplate = v1_template(kGpuNicRequests);
const std::string kAlignedTemplate = v1_template(kGpuNicRequests + R"(      constraints:
      - {requests: [gpu, nic], matchAttribute: resource.kubernetes.io/pcieRoot}
)");

const std::vector<ExpectedFinding> kMissingGpuNic{
    expect(RuleId::kMissingPcieAlignment, "/spec/spec/devices",
           add_array(kTemplateConstraints, {{"gpu", "nic"}}),
           {R"(GPU request "gpu" with NIC request "nic")", "not tied by a "
                                                           "resource.kubernetes.io/pcieRoot",
            "{requests: [gpu, nic], matchAttribute: resource.kubernetes.io/pcieRoot}"})};

// The same pair of requests, written in each resource.k8s.io version, with its fix path.
INSTANTIATE_TEST_SUITE_P(
    ApiVersions, RuleTest,
    ::testing::Values(
        rule_case("v1_template_unaligned", kUnalignedTemplate, kMissingGpuNic),
        rule_case("v1beta2_template_unaligned", R"(apiVersion: resource.k8s.io/v1beta2
kind: ResourceClaimTemplate
metadata: {name: t, namespace: ml}
spec:
  spec:
    devices:
)" + kGpuNicRequests,
                  kMissingGpuNic),
        rule_case("v1beta1_flat_template_unaligned", R"(apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaimTemplate
metadata: {name: t, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - {name: gpu, deviceClassName: gpu.nvidia.com}
      - {name: nic, deviceClassName: dranet}
)",
                  kMissingGpuNic),
        rule_case("v1beta1_flat_template_aligned", R"(apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaimTemplate
metadata: {name: t, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - {name: gpu, deviceClassName: gpu.nvidia.com}
      - {name: nic, deviceClassName: dranet}
      constraints:
      - {requests: [gpu, nic], matchAttribute: resource.kubernetes.io/pcieRoot}
)",
                  {}),
        rule_case("v1_claim_unaligned_fix_at_spec_devices", R"(apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c, namespace: ml}
spec:
  devices:
)" + kGpuNicRequests,
                  {expect(RuleId::kMissingPcieAlignment, "/spec/devices",
                          add_array(kClaimConstraints, {{"gpu", "nic"}}))}),
        rule_case("v1beta1_claim_unaligned_fix_at_spec_devices",
                  R"(apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaim
metadata: {name: c, namespace: ml}
spec:
  devices:
    requests:
    - {name: gpu, deviceClassName: gpu.nvidia.com}
    - {name: nic, deviceClassName: dranet}
    constraints: []
)",
                  {expect(RuleId::kMissingPcieAlignment, "/spec/devices",
                          append(kClaimConstraints, {{"gpu", "nic"}}))}),
        rule_case("v1beta2_claim_aligned", R"(apiVersion: resource.k8s.io/v1beta2
kind: ResourceClaim
metadata: {name: c, namespace: ml}
spec:
  devices:
    requests:
    - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}
    - {name: nic, exactly: {deviceClassName: dranet}}
    constraints:
    - {requests: [nic, gpu], matchAttribute: resource.kubernetes.io/pcieRoot}
)",
                  {})),
    topoguard::testing::NoteName());

// Which constraints tie a GPU to a NIC: absent or empty `requests` cover every request, `req`
// covers all of its subrequests, `req/sub` only that subrequest.
INSTANTIATE_TEST_SUITE_P(
    Coverage, RuleTest,
    ::testing::Values(
        rule_case("named_requests_aligned", kAlignedTemplate, {}),
        rule_case("absent_requests_cover_all", v1_template(kGpuNicRequests + R"(      constraints:
      - {matchAttribute: resource.kubernetes.io/pcieRoot}
)"),
                  {}),
        rule_case("empty_requests_cover_all", v1_template(kGpuNicRequests + R"(      constraints:
      - {requests: [], matchAttribute: resource.kubernetes.io/pcieRoot}
)"),
                  {}),
        rule_case("constraint_on_gpu_only_appends", v1_template(kGpuNicRequests + R"(      constraints:
      - {requests: [gpu], matchAttribute: resource.kubernetes.io/pcieRoot}
)"),
                  {expect(RuleId::kMissingPcieAlignment, "/spec/spec/devices",
                          append(kTemplateConstraints, {{"gpu", "nic"}}))}),
        rule_case("other_attribute_does_not_align", v1_template(kGpuNicRequests + R"(      constraints:
      - {requests: [gpu, nic], matchAttribute: gpu.nvidia.com/parentUUID}
)"),
                  {expect(RuleId::kMissingPcieAlignment, "/spec/spec/devices",
                          append(kTemplateConstraints, {{"gpu", "nic"}}))}),
        rule_case("distinct_attribute_does_not_align", v1_template(kGpuNicRequests + R"(      constraints:
      - {requests: [gpu, nic], distinctAttribute: resource.kubernetes.io/pcieRoot}
)"),
                  {expect(RuleId::kMissingPcieAlignment, "/spec/spec/devices",
                          append(kTemplateConstraints, {{"gpu", "nic"}}))}),
        rule_case("first_available_request_name_covers_subrequests", v1_template(R"(      requests:
      - name: gpu
        firstAvailable:
        - {name: big, deviceClassName: gpu.nvidia.com, count: 1}
        - {name: small, deviceClassName: mig.nvidia.com}
      - {name: nic, exactly: {deviceClassName: dranet}}
      constraints:
      - {requests: [gpu, nic], matchAttribute: resource.kubernetes.io/pcieRoot}
)"),
                  {}),
        rule_case("first_available_all_gpu_subrequests_named", v1_template(R"(      requests:
      - name: gpu
        firstAvailable:
        - {name: big, deviceClassName: gpu.nvidia.com}
        - {name: small, deviceClassName: mig.nvidia.com}
      - {name: nic, exactly: {deviceClassName: dranet}}
      constraints:
      - {requests: [gpu/big, gpu/small, nic], matchAttribute: resource.kubernetes.io/pcieRoot}
)"),
                  {}),
        rule_case("first_available_one_gpu_subrequest_missing", v1_template(R"(      requests:
      - name: gpu
        firstAvailable:
        - {name: big, deviceClassName: gpu.nvidia.com}
        - {name: small, deviceClassName: mig.nvidia.com}
      - {name: nic, exactly: {deviceClassName: dranet}}
      constraints:
      - {requests: [gpu/big, nic], matchAttribute: resource.kubernetes.io/pcieRoot}
)"),
                  {expect(RuleId::kMissingPcieAlignment, "/spec/spec/devices",
                          append(kTemplateConstraints, {{"gpu", "nic"}}))}),
        rule_case("first_available_non_gpu_subrequest_need_not_be_named", v1_template(R"(      requests:
      - name: gpu
        firstAvailable:
        - {name: big, deviceClassName: gpu.nvidia.com}
        - {name: cpu, deviceClassName: cpu.example.com}
      - {name: nic, exactly: {deviceClassName: dranet}}
      constraints:
      - {requests: [gpu/big, nic], matchAttribute: resource.kubernetes.io/pcieRoot}
)"),
                  {}),
        rule_case("first_available_nic_subrequests_all_named", v1_template(R"(      requests:
      - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}
      - name: nic
        firstAvailable:
        - {name: rdma, deviceClassName: dranet}
        - {name: vf, deviceClassName: sriovnetwork.k8snetworkplumbingwg.io}
      constraints:
      - {requests: [gpu, nic/rdma], matchAttribute: resource.kubernetes.io/pcieRoot}
)"),
                  {expect(RuleId::kMissingPcieAlignment, "/spec/spec/devices",
                          append(kTemplateConstraints, {{"gpu", "nic"}}))}),
        rule_case("gpu_only_claim_is_clean", v1_template(R"(      requests:
      - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com, count: 4}}
)"),
                  {}),
        rule_case("nic_only_claim_is_clean", v1_template(R"(      requests:
      - {name: nic, exactly: {deviceClassName: dranet}}
)"),
                  {}),
        rule_case("nic_recognised_by_request_cel_driver", v1_template(R"(      requests:
      - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}
      - name: vf
        exactly:
          deviceClassName: site-vf
          selectors: [{cel: {expression: "device.driver == 'sriovnetwork.k8snetworkplumbingwg.io'"}}]
)"),
                  {expect(RuleId::kMissingPcieAlignment, "/spec/spec/devices",
                          add_array(kTemplateConstraints, {{"gpu", "vf"}}))}),
        rule_case("nic_recognised_by_device_class_in_inventory", v1_template(R"(      requests:
      - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}
      - {name: rdma, exactly: {deviceClassName: site-rdma}}
)"),
                  {expect(RuleId::kMissingPcieAlignment, "/spec/spec/devices",
                          add_array(kTemplateConstraints, {{"gpu", "rdma"}}))},
                  R"(apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: site-rdma}
spec:
  selectors: [{cel: {expression: 'device.driver == "dra.net"'}}]
)"),
        rule_case("unknown_class_without_inventory_is_not_a_nic", v1_template(R"(      requests:
      - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}
      - {name: rdma, exactly: {deviceClassName: site-rdma}}
)"),
                  {})),
    topoguard::testing::NoteName());

// How unaligned requests are paired for the fix.
INSTANTIATE_TEST_SUITE_P(
    Pairing, RuleTest,
    ::testing::Values(
        rule_case("two_pairs_in_document_order", v1_template(R"(      requests:
      - {name: gpu-a, exactly: {deviceClassName: gpu.nvidia.com}}
      - {name: gpu-b, exactly: {deviceClassName: gpu.nvidia.com}}
      - {name: nic-a, exactly: {deviceClassName: dranet}}
      - {name: nic-b, exactly: {deviceClassName: dranet}}
)"),
                  {expect(RuleId::kMissingPcieAlignment, "/spec/spec/devices",
                          add_array(kTemplateConstraints, {{"gpu-a", "nic-a"}, {"gpu-b", "nic-b"}}),
                          {R"(GPU request "gpu-a" with NIC request "nic-a", GPU request "gpu-b" )"
                           R"(with NIC request "nic-b")"})}),
        rule_case("two_pairs_one_already_tied_appends_the_other", v1_template(R"(      requests:
      - {name: gpu0, exactly: {deviceClassName: gpu.nvidia.com}}
      - {name: nic0, exactly: {deviceClassName: dranet}}
      - {name: gpu1, exactly: {deviceClassName: gpu.nvidia.com}}
      - {name: nic1, exactly: {deviceClassName: dranet}}
      constraints:
      - {requests: [gpu0, nic0], matchAttribute: resource.kubernetes.io/pcieRoot}
)"),
                  {expect(RuleId::kMissingPcieAlignment, "/spec/spec/devices",
                          append(kTemplateConstraints, {{"gpu1", "nic1"}}))}),
        rule_case("one_gpu_two_nics_is_ambiguous", v1_template(R"(      requests:
      - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}
      - {name: nic0, exactly: {deviceClassName: dranet}}
      - {name: nic1, exactly: {deviceClassName: dranet}}
)"),
                  {expect(RuleId::kMissingPcieAlignment, "/spec/spec/devices", "",
                          {"cannot be paired automatically",
                           "1 GPU request(s) [gpu], 2 NIC request(s) [nic0, nic1]",
                           "{requests: [gpu, nic0], matchAttribute: "
                           "resource.kubernetes.io/pcieRoot}"})}),
        rule_case("two_gpus_one_nic_is_ambiguous", v1_template(R"(      requests:
      - {name: gpu0, exactly: {deviceClassName: gpu.nvidia.com}}
      - {name: gpu1, exactly: {deviceClassName: gpu.nvidia.com}}
      - {name: nic, exactly: {deviceClassName: dranet}}
)"),
                  {expect(RuleId::kMissingPcieAlignment, "/spec/spec/devices", "",
                          {"cannot be paired automatically", "2 GPU request(s) [gpu0, gpu1]"})})),
    topoguard::testing::NoteName());

// An existing cross pairing (gpu0 with nic1) is respected: only the untied requests are paired,
// since pcieRoot equality is transitive and document-order pairs would put all four on one root.
INSTANTIATE_TEST_SUITE_P(
    CrossPairing, RuleTest,
    ::testing::Values(rule_case("fix_respects_existing_cross_pairing", v1_template(R"(      requests:
      - {name: gpu0, exactly: {deviceClassName: gpu.nvidia.com}}
      - {name: gpu1, exactly: {deviceClassName: gpu.nvidia.com}}
      - {name: nic0, exactly: {deviceClassName: dranet}}
      - {name: nic1, exactly: {deviceClassName: dranet}}
      constraints:
      - {requests: [gpu0, nic1], matchAttribute: resource.kubernetes.io/pcieRoot}
)"),
                                {expect(RuleId::kMissingPcieAlignment, "/spec/spec/devices",
                                        append(kTemplateConstraints, {{"gpu1", "nic0"}}))})),
    topoguard::testing::NoteName());

// NUMA-only alignment keeps the NUMA constraint and adds the PCIe one.
INSTANTIATE_TEST_SUITE_P(
    NumaOnly, RuleTest,
    ::testing::Values(
        rule_case("dranet_numa_match_attribute", v1_template(kGpuNicRequests + R"(      constraints:
      - {requests: [gpu, nic], matchAttribute: dra.net/numaNode}
)"),
                  {expect(RuleId::kNumaOnlyAlignment, "/spec/spec/devices/constraints/0",
                          append(kTemplateConstraints, {{"gpu", "nic"}}),
                          {"aligned only by NUMA node", "194.6", "127.1",
                           "keep the NUMA constraint"})}),
        rule_case("standard_numa_node_attribute", v1_template(kGpuNicRequests + R"(      constraints:
      - {matchAttribute: resource.kubernetes.io/numaNode}
)"),
                  {expect(RuleId::kNumaOnlyAlignment, "/spec/spec/devices/constraints/0",
                          append(kTemplateConstraints, {{"gpu", "nic"}}))}),
        rule_case("cel_selector_pins_dranet_numa_node", v1_template(R"(      requests:
      - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}
      - name: nic
        exactly:
          deviceClassName: dranet
          selectors: [{cel: {expression: 'device.attributes["dra.net"].numaNode == 0'}}]
)"),
                  {expect(RuleId::kNumaOnlyAlignment, "/spec/spec/devices/requests/1",
                          add_array(kTemplateConstraints, {{"gpu", "nic"}}))}),
        rule_case("numa_and_pcie_constraints_is_clean", v1_template(kGpuNicRequests + R"(      constraints:
      - {requests: [gpu, nic], matchAttribute: dra.net/numaNode}
      - {requests: [gpu, nic], matchAttribute: resource.kubernetes.io/pcieRoot}
)"),
                  {})),
    topoguard::testing::NoteName());

// An alignment constraint over several devices of one request cannot be satisfied on typical
// servers; NUMA constraints are not alignment constraints.
INSTANTIATE_TEST_SUITE_P(
    MultiDevice, RuleTest,
    ::testing::Values(
        rule_case("count_two_both_requests", v1_template(R"(      requests:
      - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com, count: 2}}
      - {name: nic, exactly: {deviceClassName: dranet, count: 2}}
      constraints:
      - {requests: [gpu, nic], matchAttribute: resource.kubernetes.io/pcieRoot}
)"),
                  {expect(RuleId::kMultiDeviceAlignment, "/spec/spec/devices/constraints/0", "",
                          {"covers gpu (count 2), nic (count 2)", "stays Pending",
                           "one constraint per GPU/NIC pair"})}),
        rule_case("allocation_mode_all", v1_template(R"(      requests:
      - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com, allocationMode: All}}
      - {name: nic, exactly: {deviceClassName: dranet}}
      constraints:
      - {matchAttribute: resource.kubernetes.io/pcieRoot}
)"),
                  {expect(RuleId::kMultiDeviceAlignment, "/spec/spec/devices/constraints/0", "",
                          {"gpu (allocationMode All)"})}),
        rule_case("v1beta1_flat_count_two", R"(apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaim
metadata: {name: c, namespace: ml}
spec:
  devices:
    requests:
    - {name: gpu, deviceClassName: gpu.nvidia.com}
    - {name: nic, deviceClassName: dranet, count: 2}
    constraints:
    - {requests: [gpu, nic], matchAttribute: resource.kubernetes.io/pcieRoot}
)",
                  {expect(RuleId::kMultiDeviceAlignment, "/spec/devices/constraints/0", "",
                          {"covers nic (count 2)"})}),
        rule_case("first_available_subrequest_count_two", v1_template(R"(      requests:
      - name: gpu
        firstAvailable:
        - {name: two, deviceClassName: gpu.nvidia.com, count: 2}
        - {name: one, deviceClassName: gpu.nvidia.com}
      - {name: nic, exactly: {deviceClassName: dranet}}
      constraints:
      - {requests: [gpu, nic], matchAttribute: resource.kubernetes.io/pcieRoot}
)"),
                  {expect(RuleId::kMultiDeviceAlignment, "/spec/spec/devices/constraints/0", "",
                          {"gpu/two (count 2)"})}),
        rule_case("count_two_outside_the_constraint", v1_template(R"(      requests:
      - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}
      - {name: nic, exactly: {deviceClassName: dranet}}
      - {name: extra, exactly: {deviceClassName: gpu.nvidia.com, count: 2}}
      - {name: nic2, exactly: {deviceClassName: dranet}}
      constraints:
      - {requests: [gpu, nic], matchAttribute: resource.kubernetes.io/pcieRoot}
      - {requests: [extra, nic2], matchAttribute: dra.net/numaNode}
)"),
                  {expect(RuleId::kNumaOnlyAlignment, "/spec/spec/devices/constraints/1", "",
                          {"[extra] asks for several devices", "one constraint per pair"})}),
        rule_case("count_two_under_numa_constraint_only_is_numa_only", v1_template(R"(      requests:
      - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com, count: 2}}
      - {name: nic, exactly: {deviceClassName: dranet, count: 2}}
      constraints:
      - {requests: [gpu, nic], matchAttribute: dra.net/numaNode}
)"),
                  {expect(RuleId::kNumaOnlyAlignment, "/spec/spec/devices/constraints/0", "",
                          {"[gpu] asks for several devices", "Split them into one-device"})})),
    topoguard::testing::NoteName());

// ---------------------------------------------------------------------------------------------
// Workloads.

std::string indent(const std::string& text, int spaces) {
  std::string out;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    end = end == std::string::npos ? text.size() : end + 1;
    out += std::string(static_cast<std::size_t>(spaces), ' ') + text.substr(start, end - start);
    start = end;
  }
  return out;
}

// A workload of `kind` in namespace ml whose pod templates all have `pod_spec` (zero-indented).
std::string workload(const std::string& kind, const std::string& pod_spec,
                     const std::string& namespace_name = "ml",
                     const std::string& annotations = "") {
  const std::string head = "metadata: {name: w, namespace: " + namespace_name + "}\n";
  const std::string template_metadata =
      annotations.empty() ? "metadata: {labels: {app: w}}\n"
                          : "metadata:\n  labels: {app: w}\n  annotations:\n" +
                                indent(annotations, 4);
  const std::string pod_template = template_metadata + "spec:\n" + indent(pod_spec, 2);
  if (kind == "Pod") {
    return "apiVersion: v1\nkind: Pod\n" +
           (annotations.empty() ? head
                                : "metadata:\n  name: w\n  namespace: " + namespace_name +
                                      "\n  annotations:\n" + indent(annotations, 4)) +
           "spec:\n" + indent(pod_spec, 2);
  }
  if (kind == "CronJob") {
    return "apiVersion: batch/v1\nkind: CronJob\n" + head +
           "spec:\n  schedule: '0 * * * *'\n  jobTemplate:\n    spec:\n      template:\n" +
           indent(pod_template, 8);
  }
  if (kind == "LeaderWorkerSet") {
    return "apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\n" + head +
           "spec:\n  leaderWorkerTemplate:\n    size: 2\n    leaderTemplate:\n" +
           indent(pod_template, 6) + "    workerTemplate:\n" + indent(pod_template, 6);
  }
  if (kind == "DisaggregatedSet") {
    return "apiVersion: disaggregatedset.x-k8s.io/v1\nkind: DisaggregatedSet\n" + head +
           "spec:\n  roles:\n  - name: prefill\n    spec:\n      leaderWorkerTemplate:\n"
           "        workerTemplate:\n" +
           indent(pod_template, 10) +
           "  - name: decode\n    spec:\n      leaderWorkerTemplate:\n        workerTemplate:\n" +
           indent(pod_template, 10);
  }
  const std::string api_version = kind == "Job"                     ? "batch/v1"
                                  : kind == "ReplicationController" ? "v1"
                                                                    : "apps/v1";
  return "apiVersion: " + api_version + "\nkind: " + kind + "\n" + head +
         "spec:\n  template:\n" + indent(pod_template, 4);
}

const std::string kPluginSpec = R"(containers:
- name: main
  resources:
    limits: {cpu: "4", nvidia.com/gpu: "1", rdma/ib: "1"}
)";
const std::string kPluginNicPointer = "/containers/0/resources/limits/rdma~1ib";

std::vector<ExpectedFinding> plugin_findings(const std::vector<std::string>& spec_pointers) {
  std::vector<ExpectedFinding> findings;
  for (const std::string& spec : spec_pointers) {
    findings.push_back(expect(RuleId::kDevicePluginPairing, spec + kPluginNicPointer, "",
                              {"GPU from extended resource nvidia.com/gpu",
                               "NIC from extended resource rdma/ib",
                               "matchAttribute: resource.kubernetes.io/pcieRoot"}));
  }
  return findings;
}

// Every workload kind of the pod-template table reports at its own pod spec path.
INSTANTIATE_TEST_SUITE_P(
    WorkloadKinds, RuleTest,
    ::testing::Values(
        rule_case("Pod", workload("Pod", kPluginSpec), plugin_findings({"/spec"})),
        rule_case("Deployment", workload("Deployment", kPluginSpec),
                  plugin_findings({"/spec/template/spec"})),
        rule_case("ReplicaSet", workload("ReplicaSet", kPluginSpec),
                  plugin_findings({"/spec/template/spec"})),
        rule_case("StatefulSet", workload("StatefulSet", kPluginSpec),
                  plugin_findings({"/spec/template/spec"})),
        rule_case("DaemonSet", workload("DaemonSet", kPluginSpec),
                  plugin_findings({"/spec/template/spec"})),
        rule_case("Job", workload("Job", kPluginSpec), plugin_findings({"/spec/template/spec"})),
        rule_case("ReplicationController", workload("ReplicationController", kPluginSpec),
                  plugin_findings({"/spec/template/spec"})),
        rule_case("CronJob", workload("CronJob", kPluginSpec),
                  plugin_findings({"/spec/jobTemplate/spec/template/spec"})),
        rule_case("LeaderWorkerSet_leader_and_worker", workload("LeaderWorkerSet", kPluginSpec),
                  plugin_findings({"/spec/leaderWorkerTemplate/leaderTemplate/spec",
                                   "/spec/leaderWorkerTemplate/workerTemplate/spec"})),
        rule_case("DisaggregatedSet_roles", workload("DisaggregatedSet", kPluginSpec),
                  plugin_findings({"/spec/roles/0/spec/leaderWorkerTemplate/workerTemplate/spec",
                                   "/spec/roles/1/spec/leaderWorkerTemplate/workerTemplate/spec"})),
        rule_case("unknown_kind_is_not_evaluated",
                  "apiVersion: example.com/v1\nkind: Deployment\nmetadata: {name: w}\n"
                  "spec:\n  template:\n    spec:\n" +
                      indent(kPluginSpec, 6),
                  {}),
        rule_case("kube_system_pod_is_skipped", workload("Pod", kPluginSpec, "kube-system"), {}),
        rule_case("kube_system_template_is_skipped",
                  "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\n"
                  "metadata: {name: t, namespace: kube-system}\nspec:\n  spec:\n    devices:\n" +
                      kGpuNicRequests,
                  {}),
        rule_case("no_namespace_means_default_and_is_checked",
                  "apiVersion: v1\nkind: Pod\nmetadata: {name: w}\nspec:\n" +
                      indent(kPluginSpec, 2),
                  plugin_findings({"/spec"}))),
    topoguard::testing::NoteName());

const std::string kGpuOnlyTemplate = R"(apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: gpu-only, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}
)";
const std::string kNicOnlyTemplate = R"(apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: nic-only, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - {name: nic, exactly: {deviceClassName: dranet}}
)";
const std::string kRdmaNad = R"(apiVersion: k8s.cni.cncf.io/v1
kind: NetworkAttachmentDefinition
metadata:
  name: rdma-net
  namespace: ml
  annotations: {k8s.v1.cni.cncf.io/resourceName: rdma/hca_shared}
)";
const std::string kVfDeviceClass = R"(apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: vf}
spec:
  selectors: [{cel: {expression: "device.driver == 'sriovnetwork.k8snetworkplumbingwg.io'"}}]
  extendedResourceName: example.com/vf
)";
const std::string kGpuContainer = R"(containers:
- name: main
  resources:
    limits: {nvidia.com/gpu: "1"}
)";

std::string claims_spec(const std::string& claims) {
  return "resourceClaims:\n" + claims + R"(containers:
- name: main
  resources:
    claims: [{name: devices}]
)";
}

// The device-plugin path: extended resources, Multus networks and DRA extended resources.
INSTANTIATE_TEST_SUITE_P(
    DevicePlugins, RuleTest,
    ::testing::Values(
        rule_case("gpu_and_nic_in_two_containers", workload("Pod", R"(containers:
- name: model
  resources:
    limits: {nvidia.com/gpu: "8"}
- name: net
  resources:
    requests: {rdma/ib: "1"}
)"),
                  {expect(RuleId::kDevicePluginPairing, "/spec/containers/1/resources/requests/rdma~1ib")}),
        rule_case("nic_in_init_container", workload("Pod", R"(initContainers:
- name: sidecar
  restartPolicy: Always
  resources:
    limits: {rdma/ib: "1"}
containers:
- name: model
  resources:
    limits: {nvidia.com/gpu: "1"}
)"),
                  {expect(RuleId::kDevicePluginPairing,
                          "/spec/initContainers/0/resources/limits/rdma~1ib")}),
        rule_case("gpu_only_plugin_is_clean", workload("Deployment", kGpuContainer), {}),
        rule_case("nic_only_plugin_is_clean", workload("Pod", R"(containers:
- name: net
  resources:
    limits: {rdma/ib: "1", intel.com/intel_sriov_netdevice: "1"}
)"),
                  {}),
        rule_case("multus_network_of_a_nic_resource",
                  workload("Deployment", kGpuContainer, "ml",
                           "k8s.v1.cni.cncf.io/networks: rdma-net\n"),
                  {expect(RuleId::kDevicePluginPairing,
                          "/spec/template/metadata/annotations/k8s.v1.cni.cncf.io~1networks", "",
                          {R"(NIC from Multus network "rdma-net" (resource rdma/hca_shared))",
                           "GPU from extended resource nvidia.com/gpu"})},
                  kRdmaNad),
        rule_case("multus_network_in_another_namespace",
                  workload("Pod", kGpuContainer, "serving",
                           "k8s.v1.cni.cncf.io/networks: ml/rdma-net@net1\n"),
                  {expect(RuleId::kDevicePluginPairing,
                          "/metadata/annotations/k8s.v1.cni.cncf.io~1networks")},
                  kRdmaNad),
        rule_case("multus_network_unknown_is_clean",
                  workload("Pod", kGpuContainer, "ml", "k8s.v1.cni.cncf.io/networks: other\n"),
                  {}, kRdmaNad),
        rule_case("dra_extended_resource_of_a_nic_class", workload("Pod", R"(containers:
- name: main
  resources:
    limits: {nvidia.com/gpu: "1", example.com/vf: "1"}
)"),
                  {expect(RuleId::kDevicePluginPairing,
                          "/spec/containers/0/resources/limits/example.com~1vf", "",
                          {"NIC from extended resource example.com/vf"})},
                  kVfDeviceClass),
        rule_case("dra_implicit_extended_resource_of_a_nic_class", workload("Pod", R"(containers:
- name: main
  resources:
    limits: {nvidia.com/gpu: "1", deviceclass.resource.kubernetes.io/vf: "1"}
)"),
                  {expect(RuleId::kDevicePluginPairing,
                          "/spec/containers/0/resources/limits/deviceclass.resource.kubernetes.io~1vf")},
                  kVfDeviceClass),
        rule_case("dra_extended_resource_unknown_class_is_clean", workload("Pod", R"(containers:
- name: main
  resources:
    limits: {nvidia.com/gpu: "1", example.com/vf: "1"}
)"),
                  {}),
        rule_case("gpu_claim_and_plugin_nic", workload("Pod", R"(resourceClaims:
- {name: gpu, resourceClaimTemplateName: gpu-only}
containers:
- name: main
  resources:
    claims: [{name: gpu}]
    limits: {rdma/ib: "1"}
)"),
                  {expect(RuleId::kDevicePluginPairing,
                          "/spec/containers/0/resources/limits/rdma~1ib", "",
                          {R"(GPU from claim "gpu" (ResourceClaimTemplate gpu-only))"})},
                  kGpuOnlyTemplate, Inventory::Claims::kKnown)),
    topoguard::testing::NoteName());

// Pods that reference claims: split claims, inherited verdicts and unresolved references.
INSTANTIATE_TEST_SUITE_P(
    PodClaims, RuleTest,
    ::testing::Values(
        rule_case("split_claims", workload("Pod", R"(resourceClaims:
- {name: gpu, resourceClaimTemplateName: gpu-only}
- {name: nic, resourceClaimTemplateName: nic-only}
containers:
- name: main
  resources:
    claims: [{name: gpu}, {name: nic}]
)"),
                  {expect(RuleId::kSplitClaims, "/spec/resourceClaims", "",
                          {R"(GPU from claim "gpu" (ResourceClaimTemplate gpu-only))",
                           R"(NIC from claim "nic" (ResourceClaimTemplate nic-only))",
                           "constraints never span claims"})},
                  kGpuOnlyTemplate + "---\n" + kNicOnlyTemplate, Inventory::Claims::kKnown),
        rule_case("split_claims_in_a_deployment", workload("Deployment", R"(resourceClaims:
- {name: gpu, resourceClaimTemplateName: gpu-only}
- {name: nic, resourceClaimTemplateName: nic-only}
containers: [{name: main}]
)"),
                  {expect(RuleId::kSplitClaims, "/spec/template/spec/resourceClaims")},
                  kGpuOnlyTemplate + "---\n" + kNicOnlyTemplate, Inventory::Claims::kUnknown),
        rule_case("inherits_unaligned_template",
                  workload("Deployment",
                           claims_spec("- {name: devices, resourceClaimTemplateName: t}\n")),
                  {expect(RuleId::kMissingPcieAlignment,
                          "/spec/template/spec/resourceClaims/0", "",
                          {R"(claim "devices" (ResourceClaimTemplate t))",
                           "does not tie GPU and NIC to one PCIe root"})},
                  kUnalignedTemplate, Inventory::Claims::kKnown),
        rule_case("inherits_aligned_template",
                  workload("Pod", claims_spec("- {name: devices, resourceClaimTemplateName: t}\n")),
                  {}, kAlignedTemplate, Inventory::Claims::kKnown),
        rule_case("inherits_numa_only_template",
                  workload("Pod", claims_spec("- {name: devices, resourceClaimTemplateName: t}\n")),
                  {expect(RuleId::kNumaOnlyAlignment, "/spec/resourceClaims/0", "",
                          {"ties GPU and NIC only by NUMA node"})},
                  v1_template(kGpuNicRequests + R"(      constraints:
      - {matchAttribute: dra.net/numaNode}
)"),
                  Inventory::Claims::kKnown),
        rule_case("inherits_unaligned_claim_by_name",
                  workload("StatefulSet", claims_spec("- {name: devices, resourceClaimName: c}\n")),
                  {expect(RuleId::kMissingPcieAlignment,
                          "/spec/template/spec/resourceClaims/0", "",
                          {R"(claim "devices" (ResourceClaim c))"})},
                  "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
                  "metadata: {name: c, namespace: ml}\nspec:\n  devices:\n" +
                      kGpuNicRequests,
                  Inventory::Claims::kKnown),
        rule_case("unresolved_template_when_claims_known",
                  workload("Pod",
                           claims_spec("- {name: devices, resourceClaimTemplateName: gone}\n")),
                  {expect(RuleId::kUnresolvedClaim, "/spec/resourceClaims/0", "",
                          {R"(pod claim "devices" references ResourceClaimTemplate "gone" in )"
                           "namespace ml"})},
                  kUnalignedTemplate, Inventory::Claims::kKnown),
        rule_case("unresolved_claim_when_claims_known",
                  workload("Job", claims_spec("- {name: devices, resourceClaimName: gone}\n")),
                  {expect(RuleId::kUnresolvedClaim, "/spec/template/spec/resourceClaims/0", "",
                          {R"(references ResourceClaim "gone")"})},
                  "", Inventory::Claims::kKnown),
        rule_case("template_of_another_namespace_is_unresolved",
                  workload("Pod", claims_spec("- {name: devices, resourceClaimTemplateName: t}\n"),
                           "serving"),
                  {expect(RuleId::kUnresolvedClaim, "/spec/resourceClaims/0")},
                  kUnalignedTemplate, Inventory::Claims::kKnown),
        rule_case("unresolved_not_reported_when_claims_unknown",
                  workload("Pod",
                           claims_spec("- {name: devices, resourceClaimTemplateName: gone}\n")),
                  {}, "", Inventory::Claims::kUnknown)),
    topoguard::testing::NoteName());

}  // namespace
}  // namespace topoguard::engine
