#include "topoguard/audit/audit_report.h"

#include <gtest/gtest.h>

#include "note_name.h"

namespace topoguard::audit {
namespace {

using policy::Action;

struct ExitCase {
  std::string_view note;
  std::vector<Action> findings;  // actions of the findings in the report
  bool input_error;
  std::string fail_on;
  int expected;
};

class ExitCodeTest : public ::testing::TestWithParam<ExitCase> {};

// 0 clean, 1 when a finding reaches --fail-on, 2 on invalid input even with findings.
TEST_P(ExitCodeTest, FollowsFailOn) {
  const ExitCase& c = GetParam();
  AuditReport report;
  for (Action action : c.findings) {
    ReportedFinding reported;
    reported.finding.action = action;
    report.findings.push_back(reported);
  }
  if (c.input_error) {
    report.errors.push_back(Error{ErrorCode::kInvalidYaml, "broken", {"x.yaml", 3, ""}});
  }
  auto fail_on = parse_fail_on(c.fail_on);
  ASSERT_TRUE(fail_on) << fail_on.error().to_string();
  EXPECT_EQ(exit_code(report, *fail_on), c.expected);
}

INSTANTIATE_TEST_SUITE_P(
    ExitCodes, ExitCodeTest,
    ::testing::Values(
        ExitCase{"clean", {}, false, "deny", kExitClean},
        ExitCase{"deny_fails_on_deny", {Action::kDeny}, false, "deny", kExitFindings},
        ExitCase{"warn_passes_on_deny", {Action::kWarn, Action::kAudit}, false, "deny",
                 kExitClean},
        ExitCase{"warn_fails_on_warn", {Action::kAudit, Action::kWarn}, false, "warn",
                 kExitFindings},
        ExitCase{"deny_fails_on_warn", {Action::kDeny}, false, "warn", kExitFindings},
        ExitCase{"audit_passes_on_warn", {Action::kAudit}, false, "warn", kExitClean},
        ExitCase{"audit_fails_on_audit", {Action::kAudit}, false, "audit", kExitFindings},
        ExitCase{"never_passes_deny", {Action::kDeny}, false, "never", kExitClean},
        ExitCase{"invalid_input_with_findings", {Action::kDeny}, true, "deny", kExitInvalidInput},
        ExitCase{"invalid_input_with_never", {}, true, "never", kExitInvalidInput}),
    topoguard::testing::NoteName());

TEST(ParseFailOnTest, RejectsUnknownAndOff) {
  for (const std::string text : {"off", "error", "", "DENY"}) {
    auto parsed = parse_fail_on(text);
    ASSERT_FALSE(parsed) << text;
    EXPECT_EQ(parsed.error().code, ErrorCode::kUsage);
  }
  EXPECT_EQ(*parse_fail_on("audit"), FailOn{Action::kAudit});
  EXPECT_EQ(*parse_fail_on("never"), FailOn{});
}

// A resource judged without the labels of its namespace, at f.yaml:line.
AuditedResource unknown_resource(std::string namespace_name, std::string name, int line) {
  AuditedResource resource;
  resource.ref = {"resource.k8s.io/v1", "ResourceClaimTemplate", std::move(namespace_name),
                  std::move(name)};
  resource.file = "f.yaml";
  resource.line = line;
  resource.unknown = {"policy \"p\": its namespaceSelector cannot be evaluated"};
  return resource;
}

// --fail-on-unknown fails the run (1) when a verdict was reached without namespace labels, even
// under --fail-on never; input errors still come first (2); without the flag nothing changes.
TEST(FailOnUnknownTest, FailsLikeAFindingReachingFailOn) {
  AuditReport report;
  report.resources.push_back(unknown_resource("ml", "t", 3));
  EXPECT_TRUE(has_unknown_namespace_labels(report));
  EXPECT_EQ(exit_code(report, FailOn{}, true), kExitFindings);
  EXPECT_EQ(exit_code(report, FailOn{}, false), kExitClean);
  EXPECT_EQ(exit_code(report, FailOn{Action::kDeny}), kExitClean);
  report.errors.push_back(Error{ErrorCode::kInvalidYaml, "broken", {"x.yaml", 3, ""}});
  EXPECT_EQ(exit_code(report, FailOn{}, true), kExitInvalidInput);

  AuditReport known;
  known.resources.push_back(unknown_resource("ml", "t", 3));
  known.resources.back().unknown.clear();
  EXPECT_FALSE(has_unknown_namespace_labels(known));
  EXPECT_EQ(exit_code(known, FailOn{}, true), kExitClean);
}

// The note names the resources per namespace (sorted), escaped, within its budget, and says how
// to give the labels; nothing when every verdict had them.
TEST(UnknownLabelsNoteTest, NamesResourcesPerNamespaceWithinBudget) {
  AuditReport report;
  EXPECT_EQ(unknown_labels_note(report, "HOW"), "");
  report.resources.push_back(unknown_resource("ml", "b", 9));
  report.resources.push_back(unknown_resource("ai", "a\x1b[2J", 3));
  report.resources.push_back(unknown_resource("ml", "c", 20));
  EXPECT_EQ(unknown_labels_note(report, "HOW"),
            "3 resources were judged without the labels of their namespace, so a "
            "namespaceSelector could not be evaluated: the verdict may be weaker than with the labels, never "
            "stronger\n"
            "  namespace \"ai\" (1): ResourceClaimTemplate a\\x1b[2J (f.yaml:3)\n"
            "  namespace \"ml\" (2): ResourceClaimTemplate b (f.yaml:9), ResourceClaimTemplate c "
            "(f.yaml:20)\n"
            "  give the labels with HOW");
  const std::string cut = unknown_labels_note(report, "HOW", 2);
  EXPECT_NE(cut.find("ResourceClaimTemplate b (f.yaml:9), ..."), std::string::npos) << cut;
  EXPECT_EQ(cut.find("(f.yaml:20)"), std::string::npos) << cut;
  const std::string namespaces_cut = unknown_labels_note(report, "HOW", 1);
  EXPECT_NE(namespaces_cut.find("\n  and 1 more namespace\n"), std::string::npos)
      << namespaces_cut;
}

}  // namespace
}  // namespace topoguard::audit
