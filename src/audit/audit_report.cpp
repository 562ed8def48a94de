#include "topoguard/audit/audit_report.h"

#include <algorithm>

namespace topoguard::audit {

Result<FailOn> parse_fail_on(const std::string& text) {
  if (text == "never") {
    return FailOn{};
  }
  auto action = policy::parse_action_name(text);
  if (!action || *action == policy::Action::kOff) {
    return Error{ErrorCode::kUsage,
                 "--fail-on must be deny, warn, audit or never, got \"" + text + "\"", {}};
  }
  return FailOn{*action};
}

int exit_code(const AuditReport& report, FailOn fail_on) {
  if (!report.errors.empty()) {
    return kExitInvalidInput;
  }
  if (!fail_on) {
    return kExitClean;
  }
  // Actions are ordered from most to least severe, so "reaches" is "<=".
  const bool failed =
      std::any_of(report.findings.begin(), report.findings.end(), [&](const ReportedFinding& f) {
        return static_cast<int>(f.finding.action) <= static_cast<int>(*fail_on);
      });
  return failed ? kExitFindings : kExitClean;
}

}  // namespace topoguard::audit
