#include "topoguard/audit/report_writer.h"

#include <ostream>

#include "topoguard/k8s/object.h"

namespace topoguard::audit {

namespace {

std::string display_namespace(const k8s::ObjectRef& ref) {
  return ref.kind == "ClusterResourceClaimTemplate" ? std::string() : k8s::effective_namespace(ref);
}

std::string location_text(const std::string& file, int line) {
  return line > 0 ? file + ":" + std::to_string(line) : file;
}

std::string summary_text(const AuditSummary& summary, std::size_t errors) {
  return "summary: " + std::to_string(summary.resources) + " resources, " +
         std::to_string(summary.skipped) + " skipped, " + std::to_string(summary.deny) +
         " deny, " + std::to_string(summary.warn) + " warn, " + std::to_string(summary.audit) +
         " audit, " + std::to_string(errors) + " errors";
}

class TextReportWriter final : public ReportWriter {
 public:
  // ReportWriter
  void write(const AuditReport& report, std::ostream& out, std::ostream& errors) const override {
    for (const Error& error : report.errors) {
      errors << error.to_string() << '\n';
    }
    for (const ReportedFinding& reported : report.findings) {
      const engine::Finding& finding = reported.finding;
      out << location_text(reported.file, reported.line) << ": "
          << policy::action_name(finding.action) << ' ' << policy::rule_name(finding.rule) << ' '
          << finding.resource.kind << ' ' << display_namespace(finding.resource) << '/'
          << finding.resource.name << " (policy " << finding.policy << "): " << finding.message;
      if (!finding.fix.empty()) {
        out << (finding.fix_enabled ? " [fix: topoguard fix]" : " [fix available, mutate off]");
      }
      out << '\n';
    }
    out << summary_text(report.summary, report.errors.size()) << '\n';
  }
};

class JsonReportWriter final : public ReportWriter {
 public:
  // ReportWriter
  void write(const AuditReport& report, std::ostream& out, std::ostream& /*errors*/) const override {
    out << report_to_json(report).dump(2) << '\n';
  }
};

}  // namespace

Result<ReportFormat> parse_report_format(const std::string& text) {
  if (text == "text") {
    return ReportFormat::kText;
  }
  if (text == "json") {
    return ReportFormat::kJson;
  }
  return Error{ErrorCode::kUsage, "--format must be text or json, got \"" + text + "\"", {}};
}

std::unique_ptr<ReportWriter> make_report_writer(ReportFormat format) {
  if (format == ReportFormat::kJson) {
    return std::make_unique<JsonReportWriter>();
  }
  return std::make_unique<TextReportWriter>();
}

nlohmann::json report_to_json(const AuditReport& report) {
  nlohmann::json findings = nlohmann::json::array();
  for (const ReportedFinding& reported : report.findings) {
    const engine::Finding& finding = reported.finding;
    nlohmann::json entry = {
        {"rule", policy::rule_name(finding.rule)},
        {"policy", finding.policy},
        {"action", policy::action_name(finding.action)},
        {"message", finding.message},
        {"resource",
         {{"apiVersion", finding.resource.api_version},
          {"kind", finding.resource.kind},
          {"namespace", display_namespace(finding.resource)},
          {"name", finding.resource.name}}},
        {"source", {{"file", reported.file}, {"line", reported.line}}},
        {"path", finding.pointer},
    };
    if (!finding.fix.empty()) {
      entry["fix"] = nlohmann::json(finding.fix);
    }
    findings.push_back(std::move(entry));
  }
  nlohmann::json errors = nlohmann::json::array();
  for (const Error& error : report.errors) {
    errors.push_back({{"file", error.location.file},
                      {"line", error.location.line},
                      {"field", error.location.field},
                      {"code", error_code_name(error.code)},
                      {"message", error.message}});
  }
  return {{"summary",
           {{"resources", report.summary.resources},
            {"skipped", report.summary.skipped},
            {"deny", report.summary.deny},
            {"warn", report.summary.warn},
            {"audit", report.summary.audit},
            {"errors", report.errors.size()}}},
          {"findings", std::move(findings)},
          {"errors", std::move(errors)}};
}

}  // namespace topoguard::audit
