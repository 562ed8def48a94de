#include "topoguard/audit/report_writer.h"

#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "audit_test_support.h"

namespace topoguard::audit {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

using testing::sample_report;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    lines.push_back(line);
  }
  return lines;
}

// One line per finding, `file:line: <action> <rule> <Kind> <namespace>/<name> (policy <policy>):
// <message>`, in
// file/line order, then the summary line and where the rules are explained; nothing on the
// error stream.
TEST(TextReportTest, OneLinePerFindingThenSummary) {
  std::ostringstream out;
  std::ostringstream errors;
  make_report_writer(ReportFormat::kText)->write(sample_report(), out, errors);
  const std::vector<std::string> lines = lines_of(out.str());
  ASSERT_EQ(lines.size(), 4u) << out.str();
  EXPECT_THAT(lines[0], StartsWith("in.yaml:9: deny missing-pcie-alignment "
                                   "ResourceClaimTemplate ml/gpu-nic (policy default): GPU request \"gpu\" with "
                                   "NIC request \"nic\": not tied"));
  EXPECT_THAT(lines[0], HasSubstr("[fix: topoguard fix]"));
  EXPECT_THAT(lines[1], StartsWith("in.yaml:26: warn device-plugin-pairing Pod default/p "
                                   "(policy default): GPU "
                                   "from extended resource nvidia.com/gpu and NIC from extended "
                                   "resource rdma/ib"));
  EXPECT_EQ(lines[2], "summary: 2 resources, 1 skipped, 1 deny, 1 warn, 0 audit, 0 exempted, 0 errors");
  EXPECT_EQ(lines[3], "why and how to fix: topoguard explain RULE");
  EXPECT_EQ(errors.str(), "");
}

// With colour (a terminal), only the action word is coloured: deny bold red, warn yellow; taking
// the SGR sequences out gives the plain report back byte for byte.
TEST(TextReportTest, ColourOnlyOnTheAction) {
  std::ostringstream plain;
  std::ostringstream coloured;
  std::ostringstream errors;
  make_report_writer(ReportFormat::kText)->write(sample_report(), plain, errors);
  ReportOptions options;
  options.color = true;
  make_report_writer(ReportFormat::kText, options)->write(sample_report(), coloured, errors);
  const std::vector<std::string> lines = lines_of(coloured.str());
  ASSERT_EQ(lines.size(), 4u) << coloured.str();
  EXPECT_THAT(lines[0], StartsWith("in.yaml:9: \033[1;31mdeny\033[0m missing-pcie-alignment "));
  EXPECT_THAT(lines[1], StartsWith("in.yaml:26: \033[33mwarn\033[0m device-plugin-pairing "));
  std::string stripped = coloured.str();
  for (const std::string sgr : {"\033[1;31m", "\033[33m", "\033[0m"}) {
    for (std::size_t at = stripped.find(sgr); at != std::string::npos; at = stripped.find(sgr)) {
      stripped.erase(at, sgr.size());
    }
  }
  EXPECT_EQ(stripped, plain.str());
}

// Input errors go to the error stream as file:line and are counted in the summary.
TEST(TextReportTest, ErrorsGoToErrorStream) {
  const ManifestSet set =
      parse_manifests({{"bad.yaml", "kind: Pod\nmetadata: {name: [\n"}, {"ok.yaml", testing::kPluginPod}});
  const AuditReport report = run_audit(set, testing::builtin_policies()).report;
  std::ostringstream out;
  std::ostringstream errors;
  make_report_writer(ReportFormat::kText)->write(report, out, errors);
  // yaml-cpp notices the unclosed flow sequence at the end of input (line 3).
  EXPECT_THAT(errors.str(), StartsWith("bad.yaml:3: "));
  EXPECT_THAT(out.str(), HasSubstr("ok.yaml:11: warn device-plugin-pairing Pod default/p"));
  EXPECT_THAT(out.str(), HasSubstr("summary: 1 resources, 0 skipped, 0 deny, 1 warn, 0 audit, "
                                   "0 exempted, 1 errors"));
}

// The JSON report has the documented schema; `fix` only on fixable findings.
TEST(JsonReportTest, StableSchema) {
  const SortedJson report = report_to_json(sample_report());
  const SortedJson& summary = report.at("summary");
  EXPECT_EQ(summary.at("resources"), 2);
  EXPECT_EQ(summary.at("skipped"), 1);
  EXPECT_EQ(summary.at("deny"), 1);
  EXPECT_EQ(summary.at("warn"), 1);
  EXPECT_EQ(summary.at("audit"), 0);
  const SortedJson& findings = report.at("findings");
  ASSERT_EQ(findings.size(), 2u);
  const SortedJson& first = findings[0];
  std::vector<std::string> keys;
  for (const auto& [key, value] : first.items()) {
    keys.push_back(key);
  }
  EXPECT_THAT(keys, ::testing::UnorderedElementsAre("rule", "policy", "action", "message",
                                                    "resource", "source", "path", "fix"));
  EXPECT_EQ(first.at("rule"), "missing-pcie-alignment");
  EXPECT_EQ(first.at("policy"), "default");
  EXPECT_EQ(first.at("action"), "deny");
  EXPECT_EQ(first.at("resource"), (SortedJson{{"apiVersion", "resource.k8s.io/v1"},
                                                   {"kind", "ResourceClaimTemplate"},
                                                   {"namespace", "ml"},
                                                   {"name", "gpu-nic"}}));
  EXPECT_EQ(first.at("source"), (SortedJson{{"file", "in.yaml"}, {"line", 9}}));
  EXPECT_EQ(first.at("path"), "/spec/spec/devices");
  EXPECT_EQ(first.at("fix"), SortedJson::parse(R"([{"op":"add",
      "path":"/spec/spec/devices/constraints","value":[{"requests":["gpu","nic"],
      "matchAttribute":"resource.kubernetes.io/pcieRoot"}]}])"));
  EXPECT_FALSE(findings[1].contains("fix"));
  EXPECT_EQ(findings[1].at("path"), "/spec/containers/0/resources/limits/rdma~1ib");
  EXPECT_EQ(findings[1].at("resource").at("namespace"), "default");
}

// A finding an exception waives is counted as exempted, listed in JSON with the exception and
// `exempted: true`, and in text only with --show-exempted.
TEST(ExemptedReportTest, WaivedFindingsAreReported) {
  const AuditReport report = testing::exempted_sample_report();

  const SortedJson json = report_to_json(report);
  EXPECT_EQ(json.at("summary").at("exempted"), 1);
  ASSERT_EQ(json.at("findings").size(), 2u);
  const SortedJson& first = json.at("findings")[0];
  EXPECT_EQ(first.at("rule"), "missing-pcie-alignment");
  EXPECT_EQ(first.at("exempted"), true);
  EXPECT_EQ(first.at("exception"), (SortedJson{{"name", "team-a-legacy"},
                                                   {"reason", "validated by hand (TICKET-42)"}}));
  EXPECT_FALSE(json.at("findings")[1].contains("exempted"));

  std::ostringstream plain;
  std::ostringstream errors;
  make_report_writer(ReportFormat::kText)->write(report, plain, errors);
  EXPECT_THAT(plain.str(), ::testing::Not(HasSubstr("exempted deny")));
  EXPECT_THAT(plain.str(), HasSubstr(" 0 deny, 1 warn, 0 audit, 1 exempted, 0 errors"));
  std::ostringstream shown;
  make_report_writer(ReportFormat::kText, ReportOptions{true, ""})->write(report, shown, errors);
  const std::vector<std::string> lines = lines_of(shown.str());
  ASSERT_EQ(lines.size(), 4u) << shown.str();  // and where rules are explained
  EXPECT_THAT(lines[0], StartsWith("in.yaml:9: exempted deny missing-pcie-alignment "
                                   "ResourceClaimTemplate ml/gpu-nic (policy default, exception "
                                   "team-a-legacy: validated by hand (TICKET-42)): GPU request"));
  EXPECT_THAT(lines[0], ::testing::Not(HasSubstr("[fix")));
}

// The JSON writer prints exactly report_to_json().
TEST(JsonReportTest, WriterPrintsReportJson) {
  const AuditReport report = sample_report();
  std::ostringstream out;
  std::ostringstream errors;
  make_report_writer(ReportFormat::kJson)->write(report, out, errors);
  EXPECT_EQ(SortedJson::parse(out.str()), report_to_json(report));
}

TEST(ReportFormatTest, ParsesEveryFormatName) {
  EXPECT_EQ(*parse_report_format("text"), ReportFormat::kText);
  EXPECT_EQ(*parse_report_format("json"), ReportFormat::kJson);
  EXPECT_EQ(*parse_report_format("sarif"), ReportFormat::kSarif);
  EXPECT_EQ(*parse_report_format("openreports"), ReportFormat::kOpenReports);
  EXPECT_EQ(*parse_report_format("policyreport"), ReportFormat::kPolicyReport);
  EXPECT_EQ(*parse_report_format("junit"), ReportFormat::kJUnit);
  auto bad = parse_report_format("yaml");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, ErrorCode::kUsage);
}

}  // namespace
}  // namespace topoguard::audit
