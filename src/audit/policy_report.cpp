// Kubernetes report CRDs from an audit: one namespaced report per namespace with a resource in
// it (scope: that Namespace), one cluster report for cluster-scoped resources and input
// errors. Every rule a resource was checked against gives a result, a pass when it found
// nothing and a skip per finding an exception waives, so dashboards such as Policy Reporter
// show coverage and waivers, not only violations. The two APIs differ only in names and in
// OpenReports' report-level `source`.
#include <map>

#include "report_formats.h"

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

nlohmann::json resource_ref(const k8s::ObjectRef& ref) {
  nlohmann::json object = {{"apiVersion", ref.api_version}, {"kind", ref.kind}, {"name", ref.name}};
  const std::string namespace_name = display_namespace(ref);
  if (!namespace_name.empty()) {
    object["namespace"] = namespace_name;
  }
  return object;
}

nlohmann::json result_entry(const RuleCheck& check, std::string_view result, std::string message,
                            nlohmann::json properties) {
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
                 nlohmann::json& results) {
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
    nlohmann::json properties = {{"file", reported->file},
                                 {"line", std::to_string(reported->line)},
                                 {"path", finding.pointer},
                                 {"action", policy::action_name(finding.action)},
                                 {"help", help}};
    if (!finding.fix.empty()) {
      properties["jsonPatch"] = nlohmann::json(engine::patch_to_json(finding.fix)).dump();
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

nlohmann::json error_result(const Error& error) {
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

nlohmann::json report_document(const ApiNames& names, const std::string& namespace_name,
                               nlohmann::json results) {
  nlohmann::json summary = {{"pass", 0}, {"fail", 0}, {"warn", 0}, {"error", 0}, {"skip", 0}};
  for (const nlohmann::json& result : results) {
    const std::string status = result.at("result").get<std::string>();
    summary[status] = summary[status].get<int>() + 1;
  }
  nlohmann::json metadata = {{"name", kReportName},
                             {"labels", {{"app.kubernetes.io/managed-by", "topoguard"}}}};
  nlohmann::json report = {{"apiVersion", names.api_version}, {"metadata", metadata}};
  if (namespace_name.empty()) {
    report["kind"] = names.cluster_kind;
  } else {
    report["kind"] = names.kind;
    report["metadata"]["namespace"] = namespace_name;
    report["scope"] = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"name", namespace_name}};
  }
  if (names.report_source) {
    report["source"] = kSource;
  }
  report["summary"] = std::move(summary);
  report["results"] = std::move(results);
  return report;
}

}  // namespace

nlohmann::json policy_reports(const AuditReport& report, ReportApi api,
                              const std::string& help_uri_base) {
  const ApiNames names = names_of(api);
  // namespace ("" = cluster-scoped) -> results, namespaces in sorted order
  std::map<std::string, nlohmann::json> results;
  auto results_of = [&results](const std::string& namespace_name) -> nlohmann::json& {
    return results.try_emplace(namespace_name, nlohmann::json::array()).first->second;
  };
  for (const RuleCheck& check : rule_checks(report)) {
    add_results(check, help_uri_base, results_of(display_namespace(check.resource->ref)));
  }
  for (const Error& error : report.errors) {
    results_of("").push_back(error_result(error));
  }
  nlohmann::json items = nlohmann::json::array();
  for (auto& [namespace_name, list] : results) {
    if (!namespace_name.empty()) {
      items.push_back(report_document(names, namespace_name, std::move(list)));
    }
  }
  if (auto cluster = results.find(""); cluster != results.end()) {
    items.push_back(report_document(names, "", std::move(cluster->second)));
  }
  return {{"apiVersion", "v1"}, {"kind", "List"}, {"items", std::move(items)}};
}

}  // namespace topoguard::audit
