// The SARIF writer: rule metadata from the rule table, one located result per finding, input
// errors as notifications, paths as URI references.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "audit_test_support.h"
#include "topoguard/audit/manifest_fixer.h"
#include "topoguard/policy/rule_info.h"

namespace topoguard::audit {
namespace {

using ::testing::HasSubstr;

SortedJson sarif_of(const AuditReport& report, const std::string& help_uri_base = "") {
  return SortedJson::parse(
      testing::render(ReportFormat::kSarif, report, ReportOptions{false, help_uri_base}));
}

// The driver lists every rule in RuleId order (so ruleIndex is the RuleId), with title,
// description, its whole explanation as help and the default action as level; no helpUri, and
// no informationUri, without a configured base (a link to a page that may not exist).
TEST(SarifReportTest, DriverListsEveryRuleWithHelp) {
  const SortedJson sarif = sarif_of(AuditReport{});
  EXPECT_EQ(sarif.at("version"), "2.1.0");
  const SortedJson& driver = sarif.at("runs").at(0).at("tool").at("driver");
  EXPECT_EQ(driver.at("name"), "topoguard");
  const SortedJson& rules = driver.at("rules");
  ASSERT_EQ(rules.size(), policy::kRuleCount);
  for (policy::RuleId rule : policy::kAllRules) {
    const policy::RuleInfo& info = policy::rule_info(rule);
    const SortedJson& descriptor = rules.at(static_cast<std::size_t>(rule));
    EXPECT_EQ(descriptor.at("id"), info.name);
    EXPECT_EQ(descriptor.at("shortDescription").at("text"), info.title);
    EXPECT_EQ(descriptor.at("fullDescription").at("text"), info.description);
    EXPECT_EQ(descriptor.at("help").at("text"), policy::rule_help(rule, policy::HelpFormat::kText));
    EXPECT_EQ(descriptor.at("help").at("markdown"),
              policy::rule_help(rule, policy::HelpFormat::kMarkdown));
    EXPECT_FALSE(descriptor.contains("helpUri")) << descriptor.dump();
  }
  EXPECT_FALSE(driver.contains("informationUri"));
  EXPECT_EQ(rules.at(0).at("name"), "MissingPcieAlignment");
  EXPECT_EQ(rules.at(0).at("defaultConfiguration").at("level"), "error");   // deny
  EXPECT_EQ(rules.at(2).at("defaultConfiguration").at("level"), "warning");  // warn
  EXPECT_EQ(rules.at(5).at("defaultConfiguration").at("level"), "note");     // audit
  EXPECT_EQ(sarif.at("runs").at(0).at("results"), SortedJson::array());
}

// With --help-uri-base, each rule links its row of the rules table there, and the tool the base.
TEST(SarifReportTest, HelpUriOnlyWithConfiguredBase) {
  const std::string base = "https://git.example.com/platform/topoguard/README.md";
  const SortedJson driver =
      sarif_of(AuditReport{}, base).at("runs").at(0).at("tool").at("driver");
  EXPECT_EQ(driver.at("informationUri"), base);
  for (policy::RuleId rule : policy::kAllRules) {
    EXPECT_EQ(driver.at("rules").at(static_cast<std::size_t>(rule)).at("helpUri"),
              base + "#rule-" + std::string(policy::rule_name(rule)));
  }
}

// One result per finding: rule, level from the action, message, file and line of the offending
// field, the resource as logical location, and the fix as a JSONPatch property when it has one.
TEST(SarifReportTest, ResultPerFindingWithLocation) {
  const SortedJson results = sarif_of(testing::sample_report()).at("runs").at(0).at("results");
  ASSERT_EQ(results.size(), 2u);
  const SortedJson& first = results.at(0);
  EXPECT_EQ(first.at("ruleId"), "missing-pcie-alignment");
  EXPECT_EQ(first.at("ruleIndex"), 0);
  EXPECT_EQ(first.at("level"), "error");
  const SortedJson& location = first.at("locations").at(0);
  EXPECT_EQ(location.at("physicalLocation"),
            (SortedJson{{"artifactLocation", {{"uri", "in.yaml"}}},
                            {"region", {{"startLine", 9}}}}));
  EXPECT_EQ(location.at("logicalLocations").at(0).at("fullyQualifiedName"),
            "ResourceClaimTemplate/ml/gpu-nic");
  EXPECT_EQ(first.at("properties").at("path"), "/spec/spec/devices");
  EXPECT_EQ(first.at("properties").at("jsonPatch").at(0).at("path"),
            "/spec/spec/devices/constraints");
  EXPECT_EQ(first.at("partialFingerprints").at("topoguardFinding/v1"),
            "default/missing-pcie-alignment/ResourceClaimTemplate/ml/gpu-nic/spec/spec/devices");
  const SortedJson& second = results.at(1);
  EXPECT_EQ(second.at("ruleId"), "device-plugin-pairing");
  EXPECT_EQ(second.at("ruleIndex"), 2);
  EXPECT_EQ(second.at("level"), "warning");
  EXPECT_FALSE(second.at("properties").contains("jsonPatch"));
}

// A finding an exception waives is a result in report order with an accepted external
// suppression whose justification is the exception's reason; every other result says it has
// none (an empty array).
TEST(SarifReportTest, ExemptedFindingIsSuppressedResult) {
  const SortedJson results =
      sarif_of(testing::exempted_sample_report()).at("runs").at(0).at("results");
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results.at(0).at("ruleId"), "missing-pcie-alignment");
  EXPECT_EQ(results.at(0).at("suppressions"),
            (SortedJson::array({{{"kind", "external"},
                                     {"status", "accepted"},
                                     {"justification", "validated by hand (TICKET-42)"},
                                     {"properties", {{"exception", "team-a-legacy"}}}}})));
  EXPECT_EQ(results.at(1).at("ruleId"), "device-plugin-pairing");
  EXPECT_EQ(results.at(1).at("suppressions"), SortedJson::array());
}

// Input errors make the run unsuccessful and become error notifications with their location.
TEST(SarifReportTest, InputErrorsAreNotifications) {
  const ManifestSet set = parse_manifests({{"bad.yaml", "kind: Pod\nmetadata: {name: [\n"}});
  const SortedJson invocation =
      sarif_of(run_audit(set, testing::builtin_policies()).report)
          .at("runs").at(0).at("invocations").at(0);
  EXPECT_EQ(invocation.at("executionSuccessful"), false);
  const SortedJson& notification = invocation.at("toolExecutionNotifications").at(0);
  EXPECT_EQ(notification.at("level"), "error");
  EXPECT_EQ(notification.at("descriptor").at("id"), "invalid_yaml");
  EXPECT_EQ(notification.at("locations").at(0).at("physicalLocation"),
            (SortedJson{{"artifactLocation", {{"uri", "bad.yaml"}}},
                            {"region", {{"startLine", 3}}}}));
}

// With fix edits attached (as `topoguard audit --format sarif` does), a result with an
// enabled fix carries a SARIF fix: the template's last line (14) replaced by itself plus the
// inserted constraint lines, nothing else of the document.
TEST(SarifReportTest, FixReplacesTheChangedLines) {
  const ManifestSet set = parse_manifests({{"in.yaml", testing::kUnalignedTemplate}});
  AuditRun run = run_audit(set, testing::builtin_policies());
  attach_fix_edits(set, run);
  const SortedJson result = sarif_of(run.report).at("runs").at(0).at("results").at(0);
  const SortedJson& change = result.at("fixes").at(0).at("artifactChanges").at(0);
  EXPECT_EQ(change.at("artifactLocation").at("uri"), "in.yaml");
  const SortedJson& replacement = change.at("replacements").at(0);
  EXPECT_EQ(replacement.at("deletedRegion"),
            (SortedJson{{"startLine", 14}, {"endLine", 14}}));
  EXPECT_EQ(replacement.at("insertedContent").at("text"), run.report.findings[0].fix_edit->text);
  EXPECT_THAT(run.report.findings[0].fix_edit->text,
              HasSubstr("\n      constraints:\n      - requests: [gpu, nic]\n"));
  EXPECT_FALSE(sarif_of(testing::sample_report()).at("runs").at(0).at("results").at(0).contains(
      "fixes"));  // no edits attached: no fixes
}

struct UriCase {
  std::string_view note;
  std::string file;
  int line;
  SortedJson physical_location;
};

class SarifUriTest : public ::testing::TestWithParam<UriCase> {};

// Paths become URI references that SARIF consumers resolve; an unknown line gives no region.
TEST_P(SarifUriTest, PhysicalLocation) {
  const UriCase& c = GetParam();
  AuditReport report;
  report.resources.push_back(AuditedResource{{"v1", "Pod", "ns", "p"}, c.file, c.line, {}, {}});
  engine::Finding finding;
  finding.policy = "default";
  finding.resource = report.resources[0].ref;
  report.findings.push_back(ReportedFinding{finding, c.file, c.line, 0, nullptr});
  const SortedJson result = sarif_of(report).at("runs").at(0).at("results").at(0);
  EXPECT_EQ(result.at("locations").at(0).at("physicalLocation"), c.physical_location);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, SarifUriTest,
    ::testing::Values(
        UriCase{"relative_path_kept", "deploy/a.yaml", 4,
                {{"artifactLocation", {{"uri", "deploy/a.yaml"}}}, {"region", {{"startLine", 4}}}}},
        UriCase{"reserved_characters_percent_encoded", "odd dir/#1.yaml", 2,
                {{"artifactLocation", {{"uri", "odd%20dir/%231.yaml"}}},
                 {"region", {{"startLine", 2}}}}},
        UriCase{"absolute_path_is_file_uri_without_dot_segments", "/work/x/../y/a.yaml", 1,
                {{"artifactLocation", {{"uri", "file:///work/y/a.yaml"}}},
                 {"region", {{"startLine", 1}}}}},
        UriCase{"unknown_line_has_no_region", "a.yaml", 0,
                {{"artifactLocation", {{"uri", "a.yaml"}}}}}),
    [](const ::testing::TestParamInfo<UriCase>& param) { return std::string(param.param.note); });

}  // namespace
}  // namespace topoguard::audit
