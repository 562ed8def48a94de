// Kubernetes report CRDs from an audit: one namespaced report per namespace with a resource in
// it (scope: that Namespace), one cluster report for cluster-scoped resources and input
// errors. Every rule a resource was checked against gives a result, a pass when it found
// nothing and a skip per finding an exception waives, so dashboards such as Policy Reporter
// show coverage and waivers, not only violations. The two APIs differ only in names and in
// OpenReports' report-level `source`.
#include <algorithm>
#include <map>
#include <numeric>

#include "report_formats.h"
#include "topoguard/audit/resource_reports.h"
#include "topoguard/common/json_writer.h"

namespace topoguard::audit {

namespace {

constexpr std::string_view kSource = "topoguard";
constexpr std::string_view kCategory = "GPU/NIC PCIe alignment";
constexpr std::string_view kReportName = "topoguard";

struct ApiNames {
  std::string_view api_version;
  std::string_view kind;
  std::string_view cluster_kind;
  bool report_source;  // the report itself names its source (OpenReports)
};

ApiNames names_of(ReportApi api) {
  if (api == ReportApi::kOpenReports) {
    return {"openreports.io/v1alpha1", "Report", "ClusterReport", true};
  }
  return {"wgpolicyk8s.io/v1alpha2", "PolicyReport", "ClusterPolicyReport", false};
}

// Both APIs: pass, fail, warn, error, skip.
std::string_view result_of(const engine::Finding& finding) {
  return finding.action == policy::Action::kDeny ? "fail" : "warn";
}

SortedJson resource_ref(const k8s::ObjectRef& ref) {
  SortedJson object = {{"apiVersion", ref.api_version}, {"kind", ref.kind}, {"name", ref.name}};
  const std::string namespace_name = display_namespace(ref);
  if (!namespace_name.empty()) {
    object["namespace"] = namespace_name;
  }
  return object;
}

SortedJson result_entry(const RuleCheck& check, std::string_view result, std::string message,
                            SortedJson properties) {
  const policy::RuleInfo& info = policy::rule_info(check.rule);
  return {{"policy", check.policy},
          {"rule", info.name},
          {"result", result},
          {"severity", policy::severity_name(info.severity)},
          {"category", kCategory},
          {"scored", true},
          {"source", kSource},
          {"message", std::move(message)},
          {"resources", {resource_ref(check.resource->ref)}},
          {"properties", std::move(properties)}};
}

// One result per finding (`skip` for one an exception waives, naming the exception), or one
// pass; properties are strings (the CRDs say so).
void add_results(const RuleCheck& check, const std::string& help_uri_base,
                 SortedJson& results) {
  const AuditedResource& resource = *check.resource;
  const std::string help = rule_help_reference(check.rule, help_uri_base);
  if (check.passed()) {
    results.push_back(result_entry(
        check, "pass", "no " + std::string(policy::rule_name(check.rule)) + " finding",
        {{"file", resource.file}, {"line", std::to_string(resource.line)}}));
    return;
  }
  for (const ReportedFinding* reported : check.findings) {
    const engine::Finding& finding = reported->finding;
    SortedJson properties = {{"file", reported->file},
                                 {"line", std::to_string(reported->line)},
                                 {"path", finding.pointer},
                                 {"action", policy::action_name(finding.action)},
                                 {"help", help}};
    if (!finding.fix.empty()) {
      properties["jsonPatch"] = to_json_text(SortedJson(engine::patch_to_json(finding.fix)));
    }
    results.push_back(result_entry(check, result_of(finding), finding.message, std::move(properties)));
  }
  for (const ReportedFinding* reported : check.exempted) {
    const engine::Finding& finding = reported->finding;
    results.push_back(result_entry(check, "skip", finding.message,
                                   {{"file", reported->file},
                                    {"line", std::to_string(reported->line)},
                                    {"path", finding.pointer},
                                    {"action", policy::action_name(finding.action)},
                                    {"help", help},
                                    {"exception", finding.exception},
                                    {"exceptionReason", finding.exception_reason}}));
  }
}

SortedJson error_result(const Error& error) {
  return {{"policy", kSource},
          {"rule", "input"},
          {"result", "error"},
          {"category", kCategory},
          {"scored", false},
          {"source", kSource},
          {"message", error.to_string()},
          {"properties",
           {{"file", error.location.file},
            {"line", std::to_string(error.location.line)},
            {"field", error.location.field},
            {"code", error_code_name(error.code)}}}};
}

SortedJson summary_of(const SortedJson& results) {
  SortedJson summary = {{"pass", 0}, {"fail", 0}, {"warn", 0}, {"error", 0}, {"skip", 0}};
  for (const SortedJson& result : results) {
    const std::string status = result.at("result").get<std::string>();
    summary[status] = summary[status].get<int>() + 1;
  }
  return summary;
}

// A report without a name: namespaced (scope `scope`) unless `namespace_name` is empty.
SortedJson report_document(const ApiNames& names, const std::string& namespace_name,
                               SortedJson scope, SortedJson summary,
                               SortedJson results) {
  SortedJson report = {
      {"apiVersion", names.api_version},
      {"kind", namespace_name.empty() ? names.cluster_kind : names.kind},
      {"metadata", {{"labels", {{"app.kubernetes.io/managed-by", "topoguard"}}}}}};
  if (!namespace_name.empty()) {
    report["metadata"]["namespace"] = namespace_name;
  }
  if (!scope.is_null()) {
    report["scope"] = std::move(scope);
  }
  if (names.report_source) {
    report["source"] = kSource;
  }
  report["summary"] = std::move(summary);
  report["results"] = std::move(results);
  return report;
}

// The namespace-wide report of policy_reports(), named "topoguard".
SortedJson namespace_report(const ApiNames& names, const std::string& namespace_name,
                                SortedJson results) {
  SortedJson scope;
  if (!namespace_name.empty()) {
    scope = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"name", namespace_name}};
  }
  SortedJson summary = summary_of(results);
  SortedJson report = report_document(names, namespace_name, std::move(scope),
                                          std::move(summary), std::move(results));
  report["metadata"]["name"] = kReportName;
  return report;
}

// The order in which a cut keeps results: what needs action first, passes last.
int keep_rank(const SortedJson& result) {
  const std::string& status = result.at("result").get_ref<const std::string&>();
  return status == "fail" || status == "error" ? 0
         : status == "warn"                    ? 1
         : status == "skip"                    ? 2
                                               : 3;
}

// The results kept under the options' limits, in their original order; how many were cut.
std::size_t cut_results(SortedJson& results, const ResourceReportOptions& options) {
  std::vector<std::size_t> order(results.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&results](std::size_t a, std::size_t b) {
    return keep_rank(results[a]) < keep_rank(results[b]);
  });
  std::vector<bool> kept(results.size(), false);
  std::size_t count = 0;
  std::size_t bytes = 0;
  for (const std::size_t index : order) {
    const std::size_t size = to_json_text(results[index]).size();
    if (count < options.max_results && bytes + size <= options.max_result_bytes) {
      kept[index] = true;
      ++count;
      bytes += size;
    }
  }
  if (count == results.size()) {
    return 0;
  }
  SortedJson cut = SortedJson::array();
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (kept[i]) {
      cut.push_back(std::move(results[i]));
    }
  }
  const std::size_t omitted = results.size() - count;
  results = std::move(cut);
  return omitted;
}

ResourceReport make_resource_report(const ApiNames& names, std::string file,
                                    const k8s::ObjectRef& subject, SortedJson results,
                                    const ResourceReportOptions& options) {
  SortedJson summary = summary_of(results);
  const std::size_t omitted = cut_results(results, options);
  SortedJson document =
      report_document(names, display_namespace(subject), resource_ref(subject), std::move(summary),
                      std::move(results));
  if (omitted > 0) {
    document["metadata"]["annotations"] = {
        {"topoguard.dev/omitted-results", std::to_string(omitted)}};
  }
  return {std::move(file), subject, std::move(document), omitted};
}

}  // namespace

SortedJson policy_reports(const AuditReport& report, ReportApi api,
                              const std::string& help_uri_base) {
  const ApiNames names = names_of(api);
  // namespace ("" = cluster-scoped) -> results, namespaces in sorted order
  std::map<std::string, SortedJson> results;
  auto results_of = [&results](const std::string& namespace_name) -> SortedJson& {
    return results.try_emplace(namespace_name, SortedJson::array()).first->second;
  };
  for (const RuleCheck& check : rule_checks(report)) {
    add_results(check, help_uri_base, results_of(display_namespace(check.resource->ref)));
  }
  for (const Error& error : report.errors) {
    results_of("").push_back(error_result(error));
  }
  SortedJson items = SortedJson::array();
  for (auto& [namespace_name, list] : results) {
    if (!namespace_name.empty()) {
      items.push_back(namespace_report(names, namespace_name, std::move(list)));
    }
  }
  if (auto cluster = results.find(""); cluster != results.end()) {
    items.push_back(namespace_report(names, "", std::move(cluster->second)));
  }
  return {{"apiVersion", "v1"}, {"kind", "List"}, {"items", std::move(items)}};
}

std::vector<ResourceReport> resource_reports(const AuditReport& report,
                                             const std::map<std::string, k8s::ObjectRef>& subjects,
                                             const ResourceReportOptions& options) {
  const ApiNames names =
      names_of(options.format == ReportFormat::kPolicyReport ? ReportApi::kPolicyReport
                                                             : ReportApi::kOpenReports);
  std::map<std::string, std::vector<const Error*>, std::less<>> errors_by_file;
  for (const Error& error : report.errors) {
    errors_by_file[error.location.file].push_back(&error);
  }
  const auto add_errors = [&errors_by_file](const std::string& file, SortedJson& results) {
    auto errors = errors_by_file.find(file);
    if (errors != errors_by_file.end()) {
      for (const Error* error : errors->second) {
        results.push_back(error_result(*error));
      }
      errors_by_file.erase(errors);
    }
  };

  std::map<const AuditedResource*, SortedJson> results;
  for (const AuditedResource& resource : report.resources) {
    results.emplace(&resource, SortedJson::array());
  }
  for (const RuleCheck& check : rule_checks(report)) {
    add_results(check, options.help_uri_base, results[check.resource]);
  }
  std::vector<ResourceReport> reports;
  for (const AuditedResource& resource : report.resources) {
    SortedJson& list = results[&resource];
    for (const std::string& text : resource.unknown) {
      list.push_back({{"policy", kSource},
                      {"rule", "unknown"},
                      {"result", "skip"},
                      {"category", kCategory},
                      {"scored", false},
                      {"source", kSource},
                      {"message", "could not be decided: " + text},
                      {"resources", {resource_ref(resource.ref)}}});
    }
    add_errors(resource.file, list);
    reports.push_back(
        make_resource_report(names, resource.file, resource.ref, std::move(list), options));
  }
  for (const auto& [file, subject] : subjects) {
    if (errors_by_file.contains(file)) {
      SortedJson list = SortedJson::array();
      add_errors(file, list);
      reports.push_back(make_resource_report(names, file, subject, std::move(list), options));
    }
  }
  return reports;
}

}  // namespace topoguard::audit
