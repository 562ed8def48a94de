#include "topoguard/audit/audit_runner.h"

#include <gtest/gtest.h>

#include "audit_test_support.h"

namespace topoguard::audit {
namespace {

// With the cluster state on, the input's slices are resources, an unreadable slice is an error
// at its file, line and field after the read errors, and SARIF fix edits are attached on request.
TEST(AuditRunnerTest, ClusterStateAndFixEditsOptions) {
  const std::string slices = R"(apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: good}
spec:
  driver: gpu.nvidia.com
  nodeName: n
  pool: {name: n}
  devices:
  - {name: gpu-0, attributes: {resource.kubernetes.io/pcieRoot: {string: pci0000:00}}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: bad}
spec:
  driver: gpu.nvidia.com
  nodeName: n
  pool: {name: n}
  devices:
  - name: gpu-1
    attributes:
      numa: {int: "zero"}
)";
  const ManifestSet set =
      parse_manifests({{"slices.yaml", slices}, {"t.yaml", testing::kUnalignedTemplate}});

  const AuditRun plain = run_audit(set, testing::builtin_policies());
  EXPECT_TRUE(plain.report.errors.empty());
  EXPECT_EQ(plain.report.summary.skipped, 2u);
  ASSERT_FALSE(plain.report.findings.empty());
  EXPECT_FALSE(plain.report.findings[0].fix_edit);

  const AuditRun with_state = run_audit(set, testing::builtin_policies(),
                                        RunOptions{.cluster_state = true, .fix_edits = true});
  ASSERT_EQ(with_state.report.errors.size(), 1u);
  const Error& error = with_state.report.errors[0];
  EXPECT_EQ(error.location.file, "slices.yaml");
  EXPECT_EQ(error.location.line, 21);
  EXPECT_EQ(error.location.field, "/spec/devices/0/attributes/numa/int");
  EXPECT_EQ(with_state.report.summary.skipped, 0u);
  ASSERT_FALSE(with_state.report.findings.empty());
  EXPECT_TRUE(with_state.report.findings[0].fix_edit);
}

// The inventory spans every file of the input: a Deployment in one file inherits the verdict of
// a template in another, and findings are sorted by file then line.
TEST(AuditRunnerTest, InventorySpansFilesAndFindingsAreSorted) {
  const std::string deployment = R"(apiVersion: apps/v1
kind: Deployment
metadata: {name: serve, namespace: ml}
spec:
  template:
    spec:
      resourceClaims:
      - {name: devices, resourceClaimTemplateName: gpu-nic}
      - {name: other, resourceClaimTemplateName: not-here}
      containers: [{name: main}]
)";
  const ManifestSet set = parse_manifests(
      {{"b.yaml", testing::kUnalignedTemplate}, {"a.yaml", deployment}});
  const AuditRun run = run_audit(set, testing::builtin_policies());
  const AuditReport& report = run.report;
  EXPECT_TRUE(report.errors.empty());
  ASSERT_EQ(report.findings.size(), 3u);
  // a.yaml comes first (sorted by file name), its lines in order.
  EXPECT_EQ(report.findings[0].file, "a.yaml");
  EXPECT_EQ(report.findings[0].line, 8);
  EXPECT_EQ(report.findings[0].finding.rule, policy::RuleId::kMissingPcieAlignment);
  EXPECT_TRUE(report.findings[0].finding.fix.empty());
  EXPECT_EQ(report.findings[1].file, "a.yaml");
  EXPECT_EQ(report.findings[1].line, 9);
  EXPECT_EQ(report.findings[1].finding.rule, policy::RuleId::kUnresolvedClaim);
  EXPECT_EQ(report.findings[2].file, "b.yaml");
  EXPECT_EQ(report.findings[2].line, 9);
  EXPECT_EQ(report.summary.resources, 2u);
  EXPECT_EQ(report.summary.deny, 2u);
  EXPECT_EQ(report.summary.audit, 1u);
  ASSERT_EQ(run.evaluations.size(), 2u);
  EXPECT_EQ(run.evaluations[0].manifest, &set.manifests[0]);
}

// DeviceClasses and NetworkAttachmentDefinitions count as resources; other kinds as skipped.
TEST(AuditRunnerTest, CountsResourcesAndSkipped) {
  const ManifestSet set = parse_manifests({{"in.yaml", R"(apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.nvidia.com}
---
apiVersion: k8s.cni.cncf.io/v1
kind: NetworkAttachmentDefinition
metadata: {name: net}
---
apiVersion: v1
kind: Service
metadata: {name: s}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: slice}
)"}});
  const AuditReport report = run_audit(set, testing::builtin_policies()).report;
  EXPECT_EQ(report.summary.resources, 2u);
  EXPECT_EQ(report.summary.skipped, 2u);
  EXPECT_TRUE(report.findings.empty());
}

// A claim with malformed fields is an input error with its file and line.
TEST(AuditRunnerTest, EngineErrorsGetFileAndLine) {
  const ManifestSet set = parse_manifests({{"in.yaml", R"(apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c}
spec:
  devices:
    requests: 7
)"}});
  const AuditReport report = run_audit(set, testing::builtin_policies()).report;
  ASSERT_EQ(report.errors.size(), 1u);
  EXPECT_EQ(report.errors[0].location.file, "in.yaml");
  EXPECT_EQ(report.errors[0].location.line, 6);
  EXPECT_EQ(exit_code(report, policy::Action::kDeny), kExitInvalidInput);
}

// Every evaluated object is listed with where it starts and the rules it was checked against
// (the enabled rules for its kind, unresolved-claim only for workloads); findings point at it.
TEST(AuditRunnerTest, ListsEvaluatedResourcesWithCheckedRules) {
  const ManifestSet set = parse_manifests(
      {{"in.yaml", testing::kUnalignedTemplate + "---\n" + testing::kPluginPod + "---\n" +
                       testing::kConfigMap}});
  const AuditReport report = run_audit(set, testing::builtin_policies()).report;
  ASSERT_EQ(report.resources.size(), 2u);
  const AuditedResource& claim = report.resources[0];
  EXPECT_EQ(claim.ref.kind, "ResourceClaimTemplate");
  EXPECT_EQ(claim.file, "in.yaml");
  EXPECT_EQ(claim.line, 1);
  std::vector<policy::RuleId> rules;
  for (const engine::CheckedRule& checked : claim.checked) {
    EXPECT_EQ(checked.policy, "default");
    rules.push_back(checked.rule);
  }
  EXPECT_EQ(rules, (std::vector<policy::RuleId>{policy::RuleId::kMissingPcieAlignment,
                                                policy::RuleId::kNumaOnlyAlignment,
                                                policy::RuleId::kMultiDeviceAlignment,
                                                policy::RuleId::kOverriddenAlignmentAttribute}));
  EXPECT_EQ(report.resources[1].ref.kind, "Pod");
  EXPECT_EQ(report.resources[1].line, 16);
  EXPECT_EQ(report.resources[1].checked.size(), 5u);
  ASSERT_EQ(report.findings.size(), 2u);
  EXPECT_EQ(report.findings[0].resource, 0u);
  EXPECT_EQ(report.findings[1].resource, 1u);
}

}  // namespace
}  // namespace topoguard::audit
