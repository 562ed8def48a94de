// The report formats behind make_report_writer(), and what they share: per resource and rule,
// the outcome (pass, or the findings) that the PolicyReport and JUnit formats list, and the
// rule metadata links. Private to the audit module.
#pragma once

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "topoguard/audit/audit_report.h"
#include "topoguard/common/json.h"
#include "topoguard/common/sorted_json.h"
#include "topoguard/common/location_text.h"
#include "topoguard/policy/rule_info.h"

namespace topoguard::audit {

// The namespace shown for a resource: "" for cluster-scoped kinds, else its effective one.
[[nodiscard]] std::string display_namespace(const k8s::ObjectRef& ref);

// Findings in report order: file, line, rule, policy.
[[nodiscard]] bool in_report_order(const ReportedFinding* a, const ReportedFinding* b);

// The findings and, `with_exempted`, those an exception waives, together in report order.
[[nodiscard]] std::vector<const ReportedFinding*> listed_findings(const AuditReport& report,
                                                                  bool with_exempted);

// Where a report sends a reader for a rule's help: "<base>#rule-<name>" with a base URI (see
// ReportOptions::help_uri_base), else "topoguard explain <name>".
[[nodiscard]] std::string rule_help_reference(policy::RuleId rule,
                                              const std::string& help_uri_base);

// Each rule a resource was checked against under a policy, with its findings (none and none
// exempted: passed).
struct RuleCheck {
  const AuditedResource* resource = nullptr;
  std::string_view policy;
  policy::RuleId rule = policy::RuleId::kMissingPcieAlignment;
  std::vector<const ReportedFinding*> findings;  // in report order
  std::vector<const ReportedFinding*> exempted;  // waived by an exception, in report order
  [[nodiscard]] bool passed() const { return findings.empty() && exempted.empty(); }
};

// Resources in input order, each one's checks in policy then rule order; a finding of a rule
// the engine did not list as checked still gets its own check.
[[nodiscard]] std::vector<RuleCheck> rule_checks(const AuditReport& report);

// JSON-based formats: a document built from the report, written by one JSON writer.
[[nodiscard]] SortedJson sarif_report(const AuditReport& report,
                                          const std::string& help_uri_base);

// Kubernetes report CRDs: OpenReports (openreports.io/v1alpha1 Report / ClusterReport) and the
// wg-policy PolicyReport (wgpolicyk8s.io/v1alpha2 PolicyReport / ClusterPolicyReport), as a
// `kind: List` that `kubectl apply -f` takes.
enum class ReportApi { kOpenReports, kPolicyReport };
[[nodiscard]] SortedJson policy_reports(const AuditReport& report, ReportApi api,
                                            const std::string& help_uri_base);

// JUnit XML: one test case per resource and rule.
void write_junit(const AuditReport& report, const std::string& help_uri_base, std::ostream& out);

}  // namespace topoguard::audit
