#include "topoguard/audit/manifest_fixer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "audit_test_support.h"
#include "topoguard/common/yaml_document.h"

namespace topoguard::audit {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

struct Fixed {
  ManifestSet set;
  AuditRun run;
  FixOutcome outcome;
};

Fixed fix(std::vector<std::pair<std::string, std::string>> texts) {
  Fixed fixed;
  fixed.set = parse_manifests(std::move(texts));
  EXPECT_TRUE(fixed.set.errors.empty());
  fixed.run = run_audit(fixed.set, testing::builtin_policies());
  fixed.outcome = apply_fixes(fixed.set, fixed.run);
  EXPECT_TRUE(fixed.outcome.errors.empty());
  return fixed;
}

// Re-audits a fixed text: no enabled fix is left.
void expect_no_fixable_finding(const std::string& text) {
  const ManifestSet set = parse_manifests({{"fixed.yaml", text}});
  ASSERT_TRUE(set.errors.empty()) << set.errors.front().to_string() << "\n" << text;
  const AuditReport report = run_audit(set, testing::builtin_policies()).report;
  for (const ReportedFinding& reported : report.findings) {
    EXPECT_TRUE(reported.finding.fix.empty()) << reported.finding.message << "\n" << text;
  }
}

const std::string kHead = "# bundle rendered by helm\n";
const std::string kBetween = "---\n# the claim template below lacks alignment\n";
const std::string kTail = "---\n# trailing comment\n" + testing::kConfigMap;

// Unchanged documents and comments keep their bytes; the fixed document is re-rendered with
// the constraint and re-audits clean.
TEST(ManifestFixerTest, FixesOneDocumentKeepsEveryOtherByte) {
  const std::string text =
      kHead + testing::kPluginPod + kBetween + testing::kUnalignedTemplate + kTail;
  const Fixed fixed = fix({{"in.yaml", text}, {"clean.yaml", testing::kConfigMap}});
  ASSERT_EQ(fixed.outcome.files.size(), 2u);
  const FixedFile& file = fixed.outcome.files[0];
  EXPECT_EQ(file.path, "in.yaml");
  ASSERT_TRUE(file.changed());
  ASSERT_EQ(file.changes.size(), 1u);
  EXPECT_THAT(file.changes[0],
              StartsWith("in.yaml:" + std::to_string(9 + 14) +
                         ": fixed missing-pcie-alignment ResourceClaimTemplate ml/gpu-nic:"));
  EXPECT_THAT(file.changes[0], HasSubstr("/spec/spec/devices/constraints"));
  const std::string prefix = kHead + testing::kPluginPod + kBetween;
  EXPECT_THAT(file.text, StartsWith(prefix));
  EXPECT_TRUE(file.text.ends_with(kTail)) << file.text;
  const std::string rendered =
      file.text.substr(prefix.size(), file.text.size() - prefix.size() - kTail.size());
  YamlStream stream = parse_yaml_stream(rendered, "rendered");
  ASSERT_TRUE(stream.errors.empty()) << rendered;
  ASSERT_EQ(stream.documents.size(), 1u);
  EXPECT_EQ(*find_at(stream.documents[0].value, "/spec/spec/devices/constraints"),
            Json::parse(R"([{"requests":["gpu","nic"],
                            "matchAttribute":"resource.kubernetes.io/pcieRoot"}])"));
  expect_no_fixable_finding(file.text);

  EXPECT_EQ(fixed.outcome.files[1].text, testing::kConfigMap);
  EXPECT_FALSE(fixed.outcome.files[1].changed());
}

// A file without fixes comes back byte-identical.
TEST(ManifestFixerTest, FileWithoutFixesIsUnchanged) {
  const std::string text = kHead + testing::kPluginPod + kTail + "\n# end\n";
  const Fixed fixed = fix({{"in.yaml", text}});
  ASSERT_EQ(fixed.outcome.files.size(), 1u);
  EXPECT_FALSE(fixed.outcome.files[0].changed());
  EXPECT_EQ(fixed.outcome.files[0].text, text);
}

// Items of a `kind: List` are fixed in place; the List stays a List.
TEST(ManifestFixerTest, FixesListItemsInPlace) {
  const std::string text = R"(apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: cm}
- apiVersion: resource.k8s.io/v1beta1
  kind: ResourceClaim
  metadata: {name: c, namespace: ml}
  spec:
    devices:
      requests:
      - {name: gpu, deviceClassName: gpu.nvidia.com}
      - {name: nic, deviceClassName: dranet}
      constraints:
      - {requests: [gpu], matchAttribute: gpu.nvidia.com/parentUUID}
)";
  const Fixed fixed = fix({{"list.yaml", text}});
  ASSERT_EQ(fixed.run.report.findings.size(), 1u);
  EXPECT_EQ(fixed.run.report.findings[0].line, 11);
  const FixedFile& file = fixed.outcome.files.at(0);
  ASSERT_TRUE(file.changed());
  YamlStream stream = parse_yaml_stream(file.text, "fixed");
  ASSERT_TRUE(stream.errors.empty()) << file.text;
  ASSERT_EQ(stream.documents.size(), 1u);
  const Json& list = stream.documents[0].value;
  EXPECT_EQ(list.at("kind"), "List");
  EXPECT_EQ(list.at("items").size(), 2u);
  EXPECT_EQ(*find_at(list, "/items/1/spec/devices/constraints"),
            Json::parse(R"([{"requests":["gpu"],"matchAttribute":"gpu.nvidia.com/parentUUID"},
                            {"requests":["gpu","nic"],
                             "matchAttribute":"resource.kubernetes.io/pcieRoot"}])"));
  EXPECT_EQ(list.at("items")[0], Json::parse(R"({"apiVersion":"v1","kind":"ConfigMap",
                                                 "metadata":{"name":"cm"}})"));
  expect_no_fixable_finding(file.text);
}

// Two fixable documents in one file are both fixed; a broken document's bytes are kept.
TEST(ManifestFixerTest, FixesSeveralDocumentsKeepsBrokenOnes) {
  const std::string broken = "---\nkind: Pod\nmetadata: {name: [\n";
  std::string second = testing::kUnalignedTemplate;
  second.replace(second.find("gpu-nic"), 7, "second");
  const std::string text = testing::kUnalignedTemplate + broken + "---\n" + second;
  const ManifestSet set = parse_manifests({{"in.yaml", text}});
  ASSERT_EQ(set.errors.size(), 1u);
  const AuditRun run = run_audit(set, testing::builtin_policies());
  const FixOutcome outcome = apply_fixes(set, run);
  ASSERT_EQ(outcome.files.size(), 1u);
  EXPECT_EQ(outcome.files[0].changes.size(), 2u);
  EXPECT_THAT(outcome.files[0].text, HasSubstr(broken));
}

// attach_fix_edits gives each finding with an enabled fix the lines of its document (content
// only: not the "---" line or comments before it) and the text `fix` writes there; findings
// without a fix get none.
TEST(ManifestFixerTest, AttachFixEditsGivesDocumentLinesAndText) {
  Fixed fixed = fix({{"in.yaml", testing::kConfigMap + "---\n# the template\n" +
                                     testing::kUnalignedTemplate + "---\n" + testing::kPluginPod}});
  attach_fix_edits(fixed.set, fixed.run);
  EXPECT_TRUE(fixed.run.report.errors.empty());
  const std::vector<ReportedFinding>& findings = fixed.run.report.findings;
  ASSERT_EQ(findings.size(), 2u);
  ASSERT_NE(findings[0].fix_edit, nullptr);
  const SourceEdit& edit = *findings[0].fix_edit;
  EXPECT_EQ(edit.first_line, 7);  // after the ConfigMap (4 lines), "---" and the comment
  EXPECT_EQ(edit.last_line, 20);
  EXPECT_THAT(edit.text, StartsWith("apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\n"));
  EXPECT_NE(edit.text.back(), '\n');
  // The edit is the fixed file's text for those lines.
  EXPECT_THAT(fixed.outcome.files[0].text, HasSubstr("# the template\n" + edit.text + "\n---\n"));
  EXPECT_EQ(findings[1].finding.rule, policy::RuleId::kDevicePluginPairing);
  EXPECT_EQ(findings[1].fix_edit, nullptr);
}

}  // namespace
}  // namespace topoguard::audit
