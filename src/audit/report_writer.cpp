#include "topoguard/audit/report_writer.h"

#include <algorithm>
#include <functional>
#include <iterator>
#include <map>
#include <ostream>
#include <tuple>
#include <utility>
#include <vector>

#include "report_formats.h"
#include "topoguard/common/json_writer.h"
#include "topoguard/common/printable_text.h"
#include "topoguard/common/terminal_style.h"
#include "topoguard/k8s/object.h"

namespace topoguard::audit {

namespace {

std::string summary_text(const AuditSummary& summary, std::size_t errors) {
  return "summary: " + std::to_string(summary.resources) + " resources, " +
         std::to_string(summary.skipped) + " skipped, " + std::to_string(summary.deny) +
         " deny, " + std::to_string(summary.warn) + " warn, " + std::to_string(summary.audit) +
         " audit, " + std::to_string(summary.exempted) + " exempted, " + std::to_string(errors) +
         " errors";
}

// Input errors as `file:line: field: message [code]`, then what was skipped as no Kubernetes
// object, with a count by reason: on stderr for every format, so a CI log always shows them.
void write_input_diagnostics(const AuditReport& report, std::ostream& errors) {
  for (const Error& error : report.errors) {
    errors << error.to_string() << '\n';
  }
  write_skipped_inputs(report.skipped_inputs, errors);
}

// "Kind namespace/name", each part printable: one finding stays one line whatever it is named.
std::string resource_text(const k8s::ObjectRef& ref) {
  return printable(ref.kind) + ' ' + printable(display_namespace(ref)) + '/' + printable(ref.name);
}

// `text` in the colour of `action` (deny red, warn yellow, audit cyan, exempted faint).
std::string colored(std::string_view text, policy::Action action, bool exempted, bool color) {
  const TerminalStyle style = exempted                           ? TerminalStyle::kFaint
                              : action == policy::Action::kDeny ? TerminalStyle::kAlarm
                              : action == policy::Action::kWarn ? TerminalStyle::kCaution
                                                                : TerminalStyle::kNotice;
  return styled(text, style, color);
}

// Findings and, with --show-exempted, waived findings ("exempted <action> ..."), in file and
// line order.
class TextReportWriter final : public ReportWriter {
 public:
  explicit TextReportWriter(ReportOptions options) : options_(std::move(options)) {}

  // ReportWriter
  void write(const AuditReport& report, std::ostream& out, std::ostream& errors) const override {
    write_input_diagnostics(report, errors);
    for (const ReportedFinding* reported : listed_findings(report, options_.show_exempted)) {
      const engine::Finding& finding = reported->finding;
      const bool exempted = !finding.exception.empty();
      out << printable(location_text(reported->file, reported->line)) << ": "
          << colored(std::string(exempted ? "exempted " : "") +
                         std::string(policy::action_name(finding.action)),
                     finding.action, exempted, options_.color)
          << ' '
          << policy::rule_name(finding.rule) << ' ' << resource_text(finding.resource)
          << " (policy " << printable(finding.policy);
      if (exempted) {
        out << ", exception " << printable(finding.exception) << ": "
            << printable(finding.exception_reason);
      }
      out << "): " << printable(finding.message);
      if (!finding.fix.empty() && !exempted) {
        out << (finding.fix_enabled ? " [fix: topoguard fix]" : " [fix available, mutate off]");
      }
      out << '\n';
    }
    for (const AuditedResource& resource : report.resources) {
      for (const std::string& text : resource.unknown) {
        out << printable(location_text(resource.file, resource.line)) << ": unknown "
            << resource_text(resource.ref) << ": " << printable(text) << '\n';
      }
    }
    out << summary_text(report.summary, report.errors.size()) << '\n';
    // Findings are short; why a rule matters and how to fix it is told once, on request.
    if (!report.findings.empty()) {
      out << "why and how to fix: topoguard explain RULE\n";
    }
  }

 private:
  const ReportOptions options_;
};

// Every JSON format: the document a function builds from the report, indented, with invalid
// UTF-8 from the input replaced rather than failing the whole report. Input errors are part of
// the document, and on stderr too.
class JsonDocumentWriter final : public ReportWriter {
 public:
  using Build = std::function<SortedJson(const AuditReport&)>;
  explicit JsonDocumentWriter(Build build) : build_(std::move(build)) {}

  // ReportWriter
  void write(const AuditReport& report, std::ostream& out, std::ostream& errors) const override {
    write_input_diagnostics(report, errors);
    out << to_json_text(build_(report), 2) << '\n';
  }

 private:
  const Build build_;
};

class JunitReportWriter final : public ReportWriter {
 public:
  explicit JunitReportWriter(std::string help_uri_base)
      : help_uri_base_(std::move(help_uri_base)) {}

  // ReportWriter
  void write(const AuditReport& report, std::ostream& out, std::ostream& errors) const override {
    write_input_diagnostics(report, errors);
    write_junit(report, help_uri_base_, out);
  }

 private:
  const std::string help_uri_base_;
};

}  // namespace

void write_skipped_inputs(const std::vector<SkippedInput>& skipped, std::ostream& errors) {
  if (skipped.empty()) {
    return;
  }
  std::map<std::string_view, std::size_t> by_reason;
  for (const SkippedInput& input : skipped) {
    errors << skipped_input_text(input) << '\n';
    ++by_reason[not_an_object_name(input.reason)];
  }
  std::string counts;
  for (const auto& [name, count] : by_reason) {
    counts += (counts.empty() ? "" : ", ") + std::string(name) + " " + std::to_string(count);
  }
  errors << "skipped " << skipped.size() << " input" << (skipped.size() == 1 ? "" : "s")
         << " that are not Kubernetes objects (" << counts
         << "); --exclude GLOB leaves such files unread\n";
}

std::string display_namespace(const k8s::ObjectRef& ref) {
  return k8s::is_cluster_scoped(ref) ? std::string() : k8s::effective_namespace(ref);
}

std::string rule_help_reference(policy::RuleId rule, const std::string& help_uri_base) {
  return help_uri_base.empty() ? "topoguard explain " + std::string(policy::rule_name(rule))
                               : help_uri_base + "#" + policy::help_anchor(rule);
}

std::vector<RuleCheck> rule_checks(const AuditReport& report) {
  std::vector<RuleCheck> checks;
  // First check of each resource: findings are attached by scanning that resource's checks.
  std::vector<std::size_t> first_check(report.resources.size() + 1, 0);
  for (std::size_t r = 0; r < report.resources.size(); ++r) {
    first_check[r] = checks.size();
    for (const engine::CheckedRule& checked : report.resources[r].checked) {
      checks.push_back(RuleCheck{&report.resources[r], checked.policy, checked.rule, {}, {}});
    }
  }
  first_check[report.resources.size()] = checks.size();
  std::vector<RuleCheck> unlisted;
  for (const ReportedFinding* reported : listed_findings(report, true)) {
    const std::size_t r = reported->resource;
    auto begin = checks.begin() + static_cast<std::ptrdiff_t>(first_check[r]);
    auto end = checks.begin() + static_cast<std::ptrdiff_t>(first_check[r + 1]);
    auto check = std::find_if(begin, end, [&](const RuleCheck& candidate) {
      return candidate.rule == reported->finding.rule &&
             candidate.policy == reported->finding.policy;
    });
    if (check == end) {
      unlisted.push_back(
          RuleCheck{&report.resources[r], reported->finding.policy, reported->finding.rule, {}, {}});
      check = std::prev(unlisted.end());
    }
    (reported->finding.exception.empty() ? check->findings : check->exempted).push_back(reported);
  }
  checks.insert(checks.end(), unlisted.begin(), unlisted.end());
  return checks;
}

std::vector<const ReportedFinding*> listed_findings(const AuditReport& report,
                                                    bool with_exempted) {
  std::vector<const ReportedFinding*> listed;
  for (const ReportedFinding& reported : report.findings) {
    listed.push_back(&reported);
  }
  if (with_exempted) {
    for (const ReportedFinding& reported : report.exempted) {
      listed.push_back(&reported);
    }
    std::stable_sort(listed.begin(), listed.end(), in_report_order);
  }
  return listed;
}

Result<ReportFormat> parse_report_format(const std::string& text) {
  for (std::size_t i = 0; i < kReportFormatNames.size(); ++i) {
    if (kReportFormatNames[i] == text) {
      return static_cast<ReportFormat>(i);
    }
  }
  return Error{ErrorCode::kUsage,
               "--format must be text, json, sarif, openreports, policyreport or junit, got \"" +
                   text + "\"",
               {}};
}

bool in_report_order(const ReportedFinding* a, const ReportedFinding* b) {
  return std::forward_as_tuple(a->file, a->line, a->finding.rule, a->finding.policy) <
         std::forward_as_tuple(b->file, b->line, b->finding.rule, b->finding.policy);
}

std::unique_ptr<ReportWriter> make_report_writer(ReportFormat format, ReportOptions options) {
  const std::string base = options.help_uri_base;
  switch (format) {
    case ReportFormat::kText:
      break;
    case ReportFormat::kJson:
      return std::make_unique<JsonDocumentWriter>(&report_to_json);
    case ReportFormat::kSarif:
      return std::make_unique<JsonDocumentWriter>(
          [base](const AuditReport& report) { return sarif_report(report, base); });
    case ReportFormat::kOpenReports:
      return std::make_unique<JsonDocumentWriter>([base](const AuditReport& report) {
        return policy_reports(report, ReportApi::kOpenReports, base);
      });
    case ReportFormat::kPolicyReport:
      return std::make_unique<JsonDocumentWriter>([base](const AuditReport& report) {
        return policy_reports(report, ReportApi::kPolicyReport, base);
      });
    case ReportFormat::kJUnit:
      return std::make_unique<JunitReportWriter>(base);
  }
  return std::make_unique<TextReportWriter>(std::move(options));
}

SortedJson report_to_json(const AuditReport& report) {
  // Waived findings are listed with the others, marked `exempted` with their exception.
  SortedJson findings = SortedJson::array();
  for (const ReportedFinding* listed_finding : listed_findings(report, true)) {
    const ReportedFinding& reported = *listed_finding;
    const engine::Finding& finding = reported.finding;
    SortedJson entry = {
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
      entry["fix"] = SortedJson(engine::patch_to_json(finding.fix));
    }
    if (!finding.exception.empty()) {
      entry["exempted"] = true;
      entry["exception"] = {{"name", finding.exception}, {"reason", finding.exception_reason}};
    }
    findings.push_back(std::move(entry));
  }
  SortedJson errors = SortedJson::array();
  for (const Error& error : report.errors) {
    errors.push_back({{"file", error.location.file},
                      {"line", error.location.line},
                      {"field", error.location.field},
                      {"code", error_code_name(error.code)},
                      {"message", error.message}});
  }
  SortedJson unknown = SortedJson::array();
  for (const AuditedResource& resource : report.resources) {
    for (const std::string& text : resource.unknown) {
      unknown.push_back({{"resource",
                          {{"apiVersion", resource.ref.api_version},
                           {"kind", resource.ref.kind},
                           {"namespace", display_namespace(resource.ref)},
                           {"name", resource.ref.name}}},
                         {"source", {{"file", resource.file}, {"line", resource.line}}},
                         {"message", text}});
    }
  }
  SortedJson document = {{"summary",
           {{"resources", report.summary.resources},
            {"skipped", report.summary.skipped},
            {"deny", report.summary.deny},
            {"warn", report.summary.warn},
            {"audit", report.summary.audit},
            {"exempted", report.summary.exempted},
            {"errors", report.errors.size()}}},
          {"findings", std::move(findings)},
          {"errors", std::move(errors)}};
  if (!report.skipped_inputs.empty()) {
    // Like `unknown`: listed only when some input was skipped, so other reports keep their shape.
    SortedJson skipped = SortedJson::array();
    for (const SkippedInput& input : report.skipped_inputs) {
      skipped.push_back({{"file", input.file},
                         {"line", input.line},
                         {"reason", not_an_object_name(input.reason)},
                         {"message", not_an_object_description(input.reason)}});
    }
    document["skippedInputs"] = std::move(skipped);
  }
  if (!unknown.empty()) {
    // What could not be decided (a namespaceSelector on an unknown Namespace): listed only when
    // there is some, so reports of runs without it keep their shape.
    document["unknown"] = std::move(unknown);
  }
  return document;
}

}  // namespace topoguard::audit
