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

// Unchanged documents and comments keep their bytes; the fixed document gets the constraint
// and re-audits clean.
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

// Lines of a unified diff that start with `marker` ('+' or '-'), headers excluded.
std::vector<std::string> diff_lines(const std::string& diff, char marker) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < diff.size()) {
    std::size_t end = diff.find('\n', start);
    end = end == std::string::npos ? diff.size() : end;
    const std::string line = diff.substr(start, end - start);
    if (!line.empty() && line[0] == marker && !line.starts_with("---") &&
        !line.starts_with("+++")) {
      lines.push_back(line.substr(1));
    }
    start = end + 1;
  }
  return lines;
}

// A block YAML fix adds exactly the constraint lines, at the indentation of the mapping's keys
// and in the sequence style of its siblings; comments and every other line stay.
TEST(ManifestFixerTest, BlockYamlGetsOnlyAddedLines) {
  const std::string text = "# keep me\n" + testing::kUnalignedTemplate + "# trailing\n";
  const Fixed fixed = fix({{"in.yaml", text}});
  const FixedFile& file = fixed.outcome.files.at(0);
  ASSERT_TRUE(file.changed());
  EXPECT_EQ(file.text, "# keep me\n" + testing::kUnalignedTemplate +
                           "      constraints:\n"
                           "      - requests: [gpu, nic]\n"
                           "        matchAttribute: resource.kubernetes.io/pcieRoot\n"
                           "# trailing\n");
  const std::string diff = unified_diff("in.yaml", text, file.edits);
  EXPECT_THAT(diff, StartsWith("--- a/in.yaml\n+++ b/in.yaml\n@@ -13,4 +13,7 @@\n"));
  EXPECT_TRUE(diff_lines(diff, '-').empty()) << diff;
  EXPECT_EQ(diff_lines(diff, '+'),
            (std::vector<std::string>{"      constraints:", "      - requests: [gpu, nic]",
                                      "        matchAttribute: resource.kubernetes.io/pcieRoot"}));
  expect_no_fixable_finding(file.text);
}

// A JSON document stays JSON: the member is inserted first, on its own lines in the file's
// indentation, so the diff only adds lines.
TEST(ManifestFixerTest, JsonStaysJsonWithAddedLinesOnly) {
  const std::string text = R"({
  "apiVersion": "resource.k8s.io/v1",
  "kind": "ResourceClaim",
  "metadata": {"name": "c", "namespace": "ml"},
  "spec": {
    "devices": {
      "requests": [
        {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}},
        {"name": "nic", "exactly": {"deviceClassName": "dranet"}}
      ]
    }
  }
}
)";
  const Fixed fixed = fix({{"claim.json", text}});
  const FixedFile& file = fixed.outcome.files.at(0);
  ASSERT_TRUE(file.changed());
  const Json parsed = Json::parse(file.text);  // still JSON
  EXPECT_EQ(parsed.at("spec").at("devices").at("constraints"),
            Json::parse(R"([{"requests":["gpu","nic"],
                            "matchAttribute":"resource.kubernetes.io/pcieRoot"}])"));
  const std::string diff = unified_diff("claim.json", text, file.edits);
  EXPECT_TRUE(diff_lines(diff, '-').empty()) << diff;
  EXPECT_EQ(diff_lines(diff, '+').front(), "      \"constraints\": [");
  expect_no_fixable_finding(file.text);
}

// Appending to an existing JSON constraints array inserts the new element first, so the old
// last element needs no comma.
TEST(ManifestFixerTest, JsonArrayAppendAddsLinesOnly) {
  const std::string text = R"({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
 "metadata": {"name": "c", "namespace": "ml"},
 "spec": {"devices": {
   "requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}},
                {"name": "nic", "exactly": {"deviceClassName": "dranet"}}],
   "constraints": [
     {"requests": ["gpu"], "matchAttribute": "gpu.nvidia.com/parentUUID"}
   ]}}}
)";
  const Fixed fixed = fix({{"claim.json", text}});
  const FixedFile& file = fixed.outcome.files.at(0);
  ASSERT_TRUE(file.changed());
  const Json parsed = Json::parse(file.text);
  EXPECT_EQ(parsed.at("spec").at("devices").at("constraints").size(), 2u);
  EXPECT_TRUE(diff_lines(unified_diff("claim.json", text, file.edits), '-').empty());
  expect_no_fixable_finding(file.text);
}

// YAML the insertion cannot be trusted with (an anchored devices mapping shared by two
// templates) is re-rendered whole instead, and still re-audits clean.
TEST(ManifestFixerTest, UnusualYamlFallsBackToRendering) {
  const std::string text = R"(apiVersion: v1
kind: List
items:
- apiVersion: resource.k8s.io/v1
  kind: ResourceClaimTemplate
  metadata: {name: a, namespace: ml}
  spec:
    spec:
      devices: &devices
        requests:
        - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}
        - {name: nic, exactly: {deviceClassName: dranet}}
- apiVersion: resource.k8s.io/v1
  kind: ResourceClaimTemplate
  metadata: {name: b, namespace: ml}
  spec:
    spec:
      devices: *devices
)";
  const Fixed fixed = fix({{"in.yaml", text}});
  const FixedFile& file = fixed.outcome.files.at(0);
  ASSERT_TRUE(file.changed());
  EXPECT_EQ(file.changes.size(), 2u);
  expect_no_fixable_finding(file.text);
}

// The diff of an edit inside a line shows the line removed and added, and a file without a
// final newline gets git's marker.
TEST(UnifiedDiffTest, InLineEditsAndMissingFinalNewline) {
  const std::string original = "a\nb: [x]\nc\nd\ne\nf\ng\nh\ni\nj\nk";
  const std::vector<TextEdit> edits{TextEdit{6, 6, "y, "}, TextEdit{original.size(),
                                                             original.size(), "\nl\n"}};
  EXPECT_EQ(unified_diff("f.yaml", original, edits),
            "--- a/f.yaml\n+++ b/f.yaml\n@@ -1,5 +1,5 @@\n a\n-b: [x]\n+b: [y, x]\n c\n d\n e\n"
            "@@ -8,4 +8,5 @@\n h\n i\n j\n-k\n\\ No newline at end of file\n+k\n+l\n");
  EXPECT_EQ(unified_diff("f.yaml", original, {}), "");
}

// attach_fix_edits gives each finding with an enabled fix the whole lines its document's fix
// changes (here: inserted after the last line of the template) and the text `fix` writes there;
// findings without a fix get none.
TEST(ManifestFixerTest, AttachFixEditsGivesChangedLinesAndText) {
  Fixed fixed = fix({{"in.yaml", testing::kConfigMap + "---\n# the template\n" +
                                     testing::kUnalignedTemplate + "---\n" + testing::kPluginPod}});
  attach_fix_edits(fixed.set, fixed.run);
  EXPECT_TRUE(fixed.run.report.errors.empty());
  const std::vector<ReportedFinding>& findings = fixed.run.report.findings;
  ASSERT_EQ(findings.size(), 2u);
  ASSERT_NE(findings[0].fix_edit, nullptr);
  const SourceEdit& edit = *findings[0].fix_edit;
  // The template is lines 7..20 (after the ConfigMap, "---" and the comment); the constraint
  // lines go after its last line, which the edit keeps.
  EXPECT_EQ(edit.first_line, 20);
  EXPECT_EQ(edit.last_line, 20);
  EXPECT_THAT(edit.text, HasSubstr("\n      constraints:\n      - requests: [gpu, nic]\n"));
  EXPECT_NE(edit.text.back(), '\n');
  // The edit is the fixed file's text for those lines.
  EXPECT_THAT(fixed.outcome.files[0].text, HasSubstr(edit.text + "\n---\n"));
  EXPECT_EQ(findings[1].finding.rule, policy::RuleId::kDevicePluginPairing);
  EXPECT_EQ(findings[1].fix_edit, nullptr);
}

}  // namespace
}  // namespace topoguard::audit
