// Golden cases as folders (kyverno-test shape): tests/golden/cases/<case>/ holds case.yaml
// (note, optional policies relative to the folder, optional clusterState: true to read the
// input's ResourceSlices as the cluster state), input.yaml (audited as one input),
// expected-report.json (report_to_json, source.file "input.yaml") and expected-fixed.yaml when
// `topoguard fix` changes something (its absence asserts that nothing changes), and optionally
// expected-report.{sarif,openreports.json,policyreport.json,junit.xml}: the other report
// formats, compared byte for byte when present.
// UPDATE_GOLDEN=1 rewrites the expected files; review the diff before committing.
#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "topoguard/audit/audit_runner.h"
#include "topoguard/audit/cluster_state_loader.h"
#include "topoguard/audit/manifest_fixer.h"
#include "topoguard/audit/manifest_reader.h"
#include "topoguard/audit/report_writer.h"
#include "topoguard/common/yaml_document.h"
#include "topoguard/policy/policy_loader.h"

namespace topoguard::golden {
namespace {

namespace fs = std::filesystem;

const fs::path kCasesDir = TOPOGUARD_GOLDEN_CASES_DIR;

const std::array<std::pair<audit::ReportFormat, std::string_view>, 4> kFormatFiles{{
    {audit::ReportFormat::kSarif, "expected-report.sarif"},
    {audit::ReportFormat::kOpenReports, "expected-report.openreports.json"},
    {audit::ReportFormat::kPolicyReport, "expected-report.policyreport.json"},
    {audit::ReportFormat::kJUnit, "expected-report.junit.xml"},
}};

std::vector<std::string> case_names() {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(kCasesDir)) {
    if (entry.is_directory()) {
      names.push_back(entry.path().filename().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

bool updating() {
  const char* value = std::getenv("UPDATE_GOLDEN");
  return value != nullptr && std::string(value) == "1";
}

struct CaseSpec {
  std::string note;
  std::vector<std::string> policies;  // absolute paths; empty: the built-in policy
  bool cluster_state = false;
};

CaseSpec read_case(const fs::path& dir) {
  CaseSpec spec;
  YamlStream stream = parse_yaml_stream(read_text(dir / "case.yaml"), "case.yaml");
  EXPECT_TRUE(stream.errors.empty());
  if (stream.documents.empty()) {
    ADD_FAILURE() << "empty case.yaml in " << dir;
    return spec;
  }
  const Json& document = stream.documents[0].value;
  for (const auto& [key, value] : document.items()) {
    EXPECT_TRUE(key == "note" || key == "policies" || key == "clusterState")
        << "unknown case.yaml field " << key;
  }
  spec.note = string_member(document, "note");
  spec.cluster_state = document.value("clusterState", false);
  if (const Json* policies = member(document, "policies")) {
    for (const Json& file : *policies) {
      spec.policies.push_back((dir / file.get<std::string>()).string());
    }
  }
  return spec;
}

audit::AuditRun audit_text(const audit::ManifestSet& set, const policy::PolicySet& policies,
                           bool with_cluster_state) {
  if (!with_cluster_state) {
    return audit::run_audit(set, policies);
  }
  const audit::LoadedClusterState cluster = audit::load_cluster_state(set);
  EXPECT_TRUE(cluster.errors.empty());
  return audit::run_audit(set, policies, &cluster.state);
}

class GoldenTest : public ::testing::TestWithParam<std::string> {};

// The audit report and the fixed manifests equal the expected files; the fixed manifests
// re-audit with no enabled fix left.
TEST_P(GoldenTest, MatchesExpectedFiles) {
  const fs::path dir = kCasesDir / GetParam();
  const CaseSpec spec = read_case(dir);
  EXPECT_FALSE(spec.note.empty()) << "case.yaml needs a note";
  SCOPED_TRACE(spec.note);
  auto policies = spec.policies.empty() ? policy::load_builtin_policies()
                                        : policy::load_policy_files(spec.policies);
  ASSERT_TRUE(policies) << policies.error().to_string();

  const audit::ManifestSet set =
      audit::parse_manifests({{"input.yaml", read_text(dir / "input.yaml")}});
  const audit::AuditRun run = audit_text(set, *policies, spec.cluster_state);
  const nlohmann::json report = audit::report_to_json(run.report);
  const fs::path report_path = dir / "expected-report.json";
  if (updating()) {
    write_text(report_path, report.dump(2) + "\n");
  }
  ASSERT_TRUE(fs::exists(report_path)) << "run with UPDATE_GOLDEN=1 to create " << report_path;
  EXPECT_EQ(report.dump(2), nlohmann::json::parse(read_text(report_path)).dump(2));

  for (const auto& [format, file_name] : kFormatFiles) {
    const fs::path path = dir / file_name;
    if (!fs::exists(path)) {
      continue;
    }
    std::ostringstream out;
    std::ostringstream errors;
    audit::make_report_writer(format)->write(run.report, out, errors);
    if (updating()) {
      write_text(path, out.str());
    }
    EXPECT_EQ(out.str(), read_text(path)) << path;
  }

  const audit::FixOutcome outcome = audit::apply_fixes(set, run);
  EXPECT_TRUE(outcome.errors.empty());
  ASSERT_EQ(outcome.files.size(), 1u);
  const audit::FixedFile& fixed = outcome.files[0];
  const fs::path fixed_path = dir / "expected-fixed.yaml";
  if (updating()) {
    if (fixed.changed()) {
      write_text(fixed_path, fixed.text);
    } else {
      fs::remove(fixed_path);
    }
  }
  if (!fixed.changed()) {
    EXPECT_FALSE(fs::exists(fixed_path)) << "fix changes nothing, but " << fixed_path << " exists";
    EXPECT_EQ(fixed.text, set.files[0].text);
    return;
  }
  ASSERT_TRUE(fs::exists(fixed_path)) << "fix changes the input: run with UPDATE_GOLDEN=1";
  EXPECT_EQ(fixed.text, read_text(fixed_path));

  const audit::ManifestSet again = audit::parse_manifests({{"input.yaml", fixed.text}});
  EXPECT_TRUE(again.errors.empty());
  const audit::AuditRun rerun = audit_text(again, *policies, spec.cluster_state);
  for (const audit::ReportedFinding& reported : rerun.report.findings) {
    EXPECT_FALSE(reported.finding.fix_enabled)
        << "fixed output still has a fixable finding: " << reported.finding.message;
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, GoldenTest, ::testing::ValuesIn(case_names()),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           return param.param;
                         });

}  // namespace
}  // namespace topoguard::golden
