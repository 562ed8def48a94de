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

}  // namespace
}  // namespace topoguard::audit
