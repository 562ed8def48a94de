// Writes an AuditReport as text (one line per finding, then a summary) or as JSON (the stable
// schema documented in the README). The seam between the audit and its output.
#pragma once

#include <iosfwd>
#include <memory>
#include <string>

#include "topoguard/audit/audit_report.h"
#include "topoguard/common/result.h"

namespace topoguard::audit {

class ReportWriter {
 public:
  virtual ~ReportWriter() = default;
  // Findings and summary go to `out`; input errors to `errors` (text) or into the JSON.
  virtual void write(const AuditReport& report, std::ostream& out, std::ostream& errors) const = 0;
};

enum class ReportFormat { kText, kJson };

[[nodiscard]] Result<ReportFormat> parse_report_format(const std::string& text);
[[nodiscard]] std::unique_ptr<ReportWriter> make_report_writer(ReportFormat format);

// The JSON document of a report (also used by tests and golden files).
[[nodiscard]] nlohmann::json report_to_json(const AuditReport& report);

}  // namespace topoguard::audit
