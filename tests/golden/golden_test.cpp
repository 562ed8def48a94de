// Golden cases as folders (kyverno-test shape): tests/golden/cases/<case>/ holds case.yaml
// (note, optional policies relative to the folder, optional clusterState: true to read the
// input's ResourceSlices as the cluster state), input.yaml (audited as one input),
// expected-report.json (report_to_json, source.file "input.yaml") and expected-fix.diff (the
// unified diff `topoguard fix --diff` prints) when the fix changes something (its absence
// asserts that nothing changes), and optionally
// expected-report.{sarif,openreports.json,policyreport.json,junit.xml}: the other report
// formats, compared byte for byte when present.
// UPDATE_GOLDEN=1 rewrites the expected files; review the diff before committing.
// A property test runs every case again under its policies plus derived ones, written to files
// whose names and order are permuted, and asserts that nothing observable changes.
#include <algorithm>
#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <gtest/gtest.h>

#include "temp_dir.h"
#include "topoguard/admission/admission_handler.h"
#include "topoguard/audit/audit_runner.h"
#include "topoguard/audit/manifest_fixer.h"
#include "topoguard/audit/manifest_reader.h"
#include "topoguard/audit/report_writer.h"
#include "topoguard/common/yaml_document.h"
#include "topoguard/policy/policy_loader.h"
#include "test_paths.h"

namespace topoguard::golden {
namespace {

namespace fs = std::filesystem;

const fs::path kCasesDir = fs::path(test::source_dir()) / "tests" / "golden" / "cases";

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
                           bool with_cluster_state, bool fix_edits = false) {
  return audit::run_audit(set, policies,
                          audit::RunOptions{.cluster_state = with_cluster_state,
                                            .fix_edits = fix_edits});
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
  const SortedJson report = audit::report_to_json(run.report);
  const fs::path report_path = dir / "expected-report.json";
  if (updating()) {
    write_text(report_path, report.dump(2) + "\n");
  }
  ASSERT_TRUE(fs::exists(report_path)) << "run with UPDATE_GOLDEN=1 to create " << report_path;
  EXPECT_EQ(report.dump(2), SortedJson::parse(read_text(report_path)).dump(2));

  for (const auto& [format, file_name] : kFormatFiles) {
    const fs::path path = dir / file_name;
    if (!fs::exists(path)) {
      continue;
    }
    // As `topoguard audit` does: SARIF results carry their document's fix as a text edit.
    const audit::AuditRun format_run =
        format == audit::ReportFormat::kSarif
            ? audit_text(set, *policies, spec.cluster_state, /*fix_edits=*/true)
            : run;
    std::ostringstream out;
    std::ostringstream errors;
    audit::make_report_writer(format)->write(format_run.report, out, errors);
    if (updating()) {
      write_text(path, out.str());
    }
    EXPECT_EQ(out.str(), read_text(path)) << path;
  }

  const audit::FixOutcome outcome = audit::apply_fixes(set, run);
  EXPECT_TRUE(outcome.errors.empty());
  ASSERT_EQ(outcome.files.size(), 1u);
  const audit::FixedFile& fixed = outcome.files[0];
  const fs::path diff_path = dir / "expected-fix.diff";
  const std::string diff = audit::unified_diff("input.yaml", set.files[0].text, fixed.edits);
  if (updating()) {
    if (fixed.changed()) {
      write_text(diff_path, diff);
    } else {
      fs::remove(diff_path);
    }
  }
  if (!fixed.changed()) {
    EXPECT_FALSE(fs::exists(diff_path)) << "fix changes nothing, but " << diff_path << " exists";
    EXPECT_EQ(fixed.text, set.files[0].text);
    return;
  }
  ASSERT_TRUE(fs::exists(diff_path)) << "fix changes the input: run with UPDATE_GOLDEN=1";
  EXPECT_EQ(diff, read_text(diff_path));
  // A fix only adds lines, except inside a collection written on one line (flow style).
  std::size_t removed = 0;
  std::istringstream diff_lines(diff);
  for (std::string line; std::getline(diff_lines, line);) {
    removed += line.starts_with("-") && !line.starts_with("---") ? 1 : 0;
  }
  EXPECT_EQ(removed > 0, GetParam() == "flow_style_yaml") << diff;

  const audit::ManifestSet again = audit::parse_manifests({{"input.yaml", fixed.text}});
  EXPECT_TRUE(again.errors.empty());
  const audit::AuditRun rerun = audit_text(again, *policies, spec.cluster_state);
  for (const audit::ReportedFinding& reported : rerun.report.findings) {
    EXPECT_FALSE(reported.finding.fix_enabled)
        << "fixed output still has a fixable finding: " << reported.finding.message;
  }
}

// The policy documents of a case (its files, or the built-in policy), each as JSON, plus three
// derived from each: one that only observes (every rule audit, fixes on), one that warns
// without fixing, and one without the policy's exceptions and action overrides (so a finding
// one policy waives or raises per namespace is reported as is by another). Together they
// exercise every way policies combine.
std::vector<Json> policy_documents(const CaseSpec& spec) {
  std::vector<std::pair<std::string, std::string>> texts;
  if (spec.policies.empty()) {
    texts.emplace_back("builtin.yaml", std::string(policy::builtin_policy_text()));
  }
  for (const std::string& file : spec.policies) {
    texts.emplace_back(file, read_text(file));
  }
  std::vector<Json> documents;
  for (const auto& [name, text] : texts) {
    YamlStream stream = parse_yaml_stream(text, name);
    EXPECT_TRUE(stream.errors.empty()) << name;
    for (YamlDocument& document : stream.documents) {
      documents.push_back(std::move(document.value));
    }
  }
  const std::size_t base_count = documents.size();
  for (std::size_t i = 0; i < base_count; ++i) {
    const std::string name = documents[i]["metadata"]["name"].get<std::string>();
    Json observe = documents[i];
    observe["metadata"]["name"] = name + "-observe";
    Json quiet = documents[i];
    quiet["metadata"]["name"] = name + "-quiet";
    for (policy::RuleId rule : policy::kAllRules) {
      const std::string id(policy::rule_name(rule));
      observe["spec"]["rules"][id] = Json::object({{"action", "audit"}});
      quiet["spec"]["rules"][id] = Json::object({{"action", "warn"}});
      if (policy::rule_is_fixable(rule)) {
        observe["spec"]["rules"][id]["mutate"] = true;
        quiet["spec"]["rules"][id]["mutate"] = false;
      }
    }
    Json plain = documents[i];
    plain["metadata"]["name"] = name + "-plain";
    plain["spec"].erase("exceptions");
    plain["spec"].erase("actionOverrides");
    documents.push_back(std::move(observe));
    documents.push_back(std::move(quiet));
    documents.push_back(std::move(plain));
  }
  return documents;
}

// Everything a user can observe of one run: the report, each object's patch and decision, the
// webhook's answers on /validate and /mutate, and the fixed text.
std::string observable(const audit::ManifestSet& set, const policy::PolicySet& policies) {
  const audit::AuditRun run = audit::run_audit(set, policies);
  Json observed = Json::object();
  observed["report"] = Json::parse(audit::report_to_json(run.report).dump());
  for (const audit::ManifestEvaluation& evaluated : run.evaluations) {
    Json entry = Json::object();
    entry["patch"] = engine::patch_to_json(evaluated.evaluation.patch);
    for (admission::Mode mode : {admission::Mode::kValidate, admission::Mode::kMutate}) {
      admission::AdmissionRequest request;
      request.uid = "uid";
      request.operation = "CREATE";
      request.object = *evaluated.manifest->object;
      const Json* namespace_name = find_at(request.object, "/metadata/namespace");
      request.namespace_name = namespace_name != nullptr && namespace_name->is_string()
                                   ? namespace_name->get<std::string>()
                                   : std::string();
      const admission::HandledReview handled =
          admission::handle_admission(request, policies, {mode, admission::FailureMode::kClosed});
      Json answer = Json::object();
      answer["decision"] = admission::decision_name(handled.outcome.decision);
      answer["allowed"] = handled.response.allowed;
      answer["message"] = handled.response.status.message;
      answer["warnings"] = handled.response.warnings;
      answer["patch"] = engine::patch_to_json(handled.response.patch);
      entry[std::string(admission::mode_name(mode))] = std::move(answer);
    }
    observed["objects"].push_back(std::move(entry));
  }
  for (const audit::FixedFile& file : audit::apply_fixes(set, run).files) {
    observed["fixed"].push_back(file.text);
  }
  return observed.dump(1);
}

// Permuting and renaming the policy files (one policy per file, names drawn at random, YAML or
// JSON) changes no report, decision, patch or fixed text.
TEST_P(GoldenTest, PolicyFileOrderAndNamesChangeNothing) {
  const fs::path dir = kCasesDir / GetParam();
  const CaseSpec spec = read_case(dir);
  const std::vector<Json> documents = policy_documents(spec);
  const audit::ManifestSet set =
      audit::parse_manifests({{"input.yaml", read_text(dir / "input.yaml")}});
  std::mt19937 random(20261203);
  std::string first;
  for (int round = 0; round < 6; ++round) {
    std::vector<std::size_t> order(documents.size());
    for (std::size_t i = 0; i < order.size(); ++i) {
      order[i] = i;
    }
    std::shuffle(order.begin(), order.end(), random);
    const topoguard::testing::TempDir policy_dir;
    std::string layout;
    for (std::size_t position = 0; position < order.size(); ++position) {
      const Json& document = documents[order[position]];
      const bool as_json = random() % 2 == 0;
      const std::string file = std::to_string(position) + "-" + std::to_string(random() % 1000) +
                               (as_json ? ".json" : ".yaml");
      policy_dir.write(file, as_json ? document.dump(2) : to_yaml(document));
      layout += file + "=" + document["metadata"]["name"].get<std::string>() + " ";
    }
    SCOPED_TRACE("policy files: " + layout);
    auto policies = policy::load_policy_files({policy_dir.path()});
    ASSERT_TRUE(policies) << policies.error().to_string();
    const std::string observed = observable(set, *policies);
    if (round == 0) {
      first = observed;
    } else {
      EXPECT_EQ(observed, first);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, GoldenTest, ::testing::ValuesIn(case_names()),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           return param.param;
                         });

}  // namespace
}  // namespace topoguard::golden
