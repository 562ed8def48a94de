// Writes an AuditReport as text (one line per finding, then a summary), as JSON (the stable
// schema documented in the README), or in a format other tools read: SARIF 2.1.0 (code
// scanning), OpenReports / wg-policy PolicyReport (Policy Reporter, dashboards) and JUnit XML
// (CI test reports). The seam between the audit and its output.
#pragma once

#include <array>
#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "topoguard/audit/audit_report.h"
#include "topoguard/common/result.h"
#include "topoguard/common/sorted_json.h"

namespace topoguard::audit {

class ReportWriter {
 public:
  virtual ~ReportWriter() = default;
  // Findings and summary go to `out`; input errors and skipped inputs to `errors` (stderr) in
  // every format, and into the document too in the machine formats.
  virtual void write(const AuditReport& report, std::ostream& out, std::ostream& errors) const = 0;
};

enum class ReportFormat { kText, kJson, kSarif, kOpenReports, kPolicyReport, kJUnit };
// The --format names, in ReportFormat order.
inline constexpr std::array<std::string_view, 6> kReportFormatNames{
    "text", "json", "sarif", "openreports", "policyreport", "junit"};

struct ReportOptions {
  bool show_exempted = false;  // text: also list the findings exceptions waive
  // Where the rules are documented, e.g. a README's URL: report formats then link each rule to
  // "<base>#rule-<id>" (SARIF helpUri). Empty: they point to `topoguard explain RULE` instead,
  // and SARIF carries no helpUri (there is no page to link that is sure to exist).
  std::string help_uri_base;
  // text: actions in colour (deny red, warn yellow, audit cyan, exempted dim); the caller says
  // whether the output is a terminal that wants it.
  bool color = false;
};

[[nodiscard]] Result<ReportFormat> parse_report_format(const std::string& text);
[[nodiscard]] std::unique_ptr<ReportWriter> make_report_writer(ReportFormat format,
                                                               ReportOptions options = {});

// The lines every format writes to stderr about skipped input (input_classifier.h), ending in a
// count by reason; nothing when nothing was skipped. Also for `fix`.
void write_skipped_inputs(const std::vector<SkippedInput>& skipped, std::ostream& errors);

// The JSON document of a report (also used by tests and golden files).
[[nodiscard]] SortedJson report_to_json(const AuditReport& report);

}  // namespace topoguard::audit
