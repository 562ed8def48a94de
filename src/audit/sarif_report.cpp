// SARIF 2.1.0 (OASIS): one run whose driver lists every rule with its help, one result per
// finding located at the file and line of the offending field (a finding a policy exception
// waives as a suppressed result), input errors as tool execution notifications, and input that
// is not Kubernetes objects as notes. What GitHub code scanning and other SARIF viewers read.
#include <cctype>
#include <filesystem>

#include "report_formats.h"

#ifndef TOPOGUARD_VERSION
#error "TOPOGUARD_VERSION comes from the project version"
#endif

namespace topoguard::audit {

namespace {

constexpr std::string_view kSarifSchema =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

std::string_view level_of(policy::Action action) {
  switch (action) {
    case policy::Action::kDeny:
      return "error";
    case policy::Action::kWarn:
      return "warning";
    case policy::Action::kAudit:
    case policy::Action::kOff:
      break;
  }
  return "note";
}

// GitHub code scanning's own severity scale for rules without security-severity.
std::string_view problem_severity_of(policy::Action action) {
  const std::string_view level = level_of(action);
  return level == "note" ? "recommendation" : level;
}

// A file path as a URI reference: relative paths stay relative (resolved against the checkout
// by code scanning), absolute ones become file:// URIs without dot segments; bytes outside
// RFC 3986's unreserved set and '/' are percent-encoded.
std::string artifact_uri(std::string_view file) {
  const std::string path = std::filesystem::path(file).lexically_normal().generic_string();
  std::string uri = !path.empty() && path.front() == '/' ? "file://" : "";
  constexpr std::string_view kHex = "0123456789ABCDEF";
  for (const char c : path) {
    const auto byte = static_cast<unsigned char>(c);
    if (std::isalnum(byte) != 0 || c == '-' || c == '.' || c == '_' || c == '~' || c == '/') {
      uri += c;
    } else {
      uri += '%';
      uri += kHex[byte >> 4];
      uri += kHex[byte & 0xF];
    }
  }
  return uri;
}

SortedJson physical_location(const std::string& file, int line) {
  SortedJson location = {{"artifactLocation", {{"uri", artifact_uri(file)}}}};
  if (line > 0) {
    location["region"] = {{"startLine", line}};
  }
  return location;
}

// SARIF's "friendly name" of a rule: its id in PascalCase ("MissingPcieAlignment").
std::string friendly_name(std::string_view id) {
  std::string name;
  bool word_start = true;
  for (const char c : id) {
    if (c == '-') {
      word_start = true;
      continue;
    }
    name += word_start ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    word_start = false;
  }
  return name;
}

// The rule's whole explanation is its help (what `topoguard explain` prints); helpUri only with
// a configured base, since a link to a page that may not exist helps no one.
SortedJson rule_descriptor(policy::RuleId rule, const std::string& help_uri_base) {
  const policy::RuleInfo& info = policy::rule_info(rule);
  SortedJson descriptor = {
      {"id", info.name},
      {"name", friendly_name(info.name)},
      {"shortDescription", {{"text", info.title}}},
      {"fullDescription", {{"text", info.description}}},
      {"help",
       {{"text", policy::rule_help(rule, policy::HelpFormat::kText)},
        {"markdown", policy::rule_help(rule, policy::HelpFormat::kMarkdown)}}},
      {"defaultConfiguration", {{"level", level_of(info.default_action)}}},
      {"properties",
       {{"tags", {"kubernetes", "dra", "gpu", "pcie"}},
        {"precision", "very-high"},
        {"problem.severity", problem_severity_of(info.default_action)},
        {"severity", policy::severity_name(info.severity)}}},
  };
  if (!help_uri_base.empty()) {
    descriptor["helpUri"] = rule_help_reference(rule, help_uri_base);
  }
  return descriptor;
}

// The lines of the document that `topoguard fix` changes (with every enabled fix of that
// document), as whole lines replaced by the same lines plus the inserted ones.
SortedJson fix_of(const SourceEdit& edit, const std::string& file) {
  return {{"description",
           {{"text", "Insert what `topoguard fix` adds (every enabled fix of this document)"}}},
          {"artifactChanges",
           {{{"artifactLocation", {{"uri", artifact_uri(file)}}},
             {"replacements",
              {{{"deletedRegion", {{"startLine", edit.first_line}, {"endLine", edit.last_line}}},
                {"insertedContent", {{"text", edit.text}}}}}}}}}};
}

SortedJson result_of(const ReportedFinding& reported) {
  const engine::Finding& finding = reported.finding;
  const k8s::ObjectRef& ref = finding.resource;
  const std::string namespace_name = display_namespace(ref);
  const std::string qualified = ref.kind + "/" + (namespace_name.empty() ? "" : namespace_name + "/") + ref.name;
  SortedJson result = {
      {"ruleId", policy::rule_name(finding.rule)},
      {"ruleIndex", static_cast<int>(finding.rule)},
      {"level", level_of(finding.action)},
      {"message", {{"text", finding.message}}},
      {"locations",
       {{{"physicalLocation", physical_location(reported.file, reported.line)},
         {"logicalLocations",
          {{{"name", ref.name}, {"fullyQualifiedName", qualified}, {"kind", "object"}}}}}}},
      // Identity that survives line moves: code scanning tracks an alert across commits by it.
      {"partialFingerprints",
       {{"topoguardFinding/v1",
         finding.policy + "/" + std::string(policy::rule_name(finding.rule)) + "/" + qualified +
             finding.pointer}}},
      {"properties",
       {{"policy", finding.policy},
        {"action", policy::action_name(finding.action)},
        {"path", finding.pointer},
        {"apiVersion", ref.api_version}}},
  };
  if (!finding.fix.empty()) {
    result["properties"]["jsonPatch"] = SortedJson(engine::patch_to_json(finding.fix));
  }
  if (reported.fix_edit) {
    result["fixes"] = {fix_of(*reported.fix_edit, reported.file)};
  }
  // Exceptions are topoguard's only suppressions, so every result states its state: none, or
  // the policy exception that waives it (kept outside the scanned file: "external").
  result["suppressions"] = SortedJson::array();
  if (!finding.exception.empty()) {
    result["suppressions"].push_back({{"kind", "external"},
                                      {"status", "accepted"},
                                      {"justification", finding.exception_reason},
                                      {"properties", {{"exception", finding.exception}}}});
  }
  return result;
}

SortedJson notification_of(const Error& error) {
  SortedJson notification = {
      {"level", "error"},
      {"message", {{"text", error.message}}},
      {"descriptor", {{"id", error_code_name(error.code)}}},
  };
  if (!error.location.file.empty()) {
    notification["locations"] = {
        {{"physicalLocation", physical_location(error.location.file, error.location.line)}}};
  }
  if (!error.location.field.empty()) {
    notification["properties"] = {{"field", error.location.field}};
  }
  return notification;
}

// Input that is not Kubernetes objects: a note, so the run stays successful.
SortedJson notification_of(const SkippedInput& skipped) {
  return {{"level", "note"},
          {"message", {{"text", "skipped, not a Kubernetes object: " +
                                    std::string(not_an_object_description(skipped.reason))}}},
          {"descriptor", {{"id", not_an_object_name(skipped.reason)}}},
          {"locations", {{{"physicalLocation", physical_location(skipped.file, skipped.line)}}}}};
}

}  // namespace

SortedJson sarif_report(const AuditReport& report, const std::string& help_uri_base) {
  SortedJson rules = SortedJson::array();
  for (policy::RuleId rule : policy::kAllRules) {
    rules.push_back(rule_descriptor(rule, help_uri_base));
  }
  SortedJson results = SortedJson::array();
  for (const ReportedFinding* reported : listed_findings(report, true)) {
    results.push_back(result_of(*reported));
  }
  SortedJson notifications = SortedJson::array();
  for (const Error& error : report.errors) {
    notifications.push_back(notification_of(error));
  }
  for (const SkippedInput& skipped : report.skipped_inputs) {
    notifications.push_back(notification_of(skipped));
  }
  SortedJson driver = {{"name", "topoguard"},
                           {"version", TOPOGUARD_VERSION},
                           {"rules", std::move(rules)}};
  if (!help_uri_base.empty()) {
    driver["informationUri"] = help_uri_base;
  }
  return {
      {"$schema", kSarifSchema},
      {"version", "2.1.0"},
      {"runs",
       {{{"tool", {{"driver", std::move(driver)}}},
         {"results", std::move(results)},
         {"invocations",
          {{{"executionSuccessful", report.errors.empty()},
            {"toolExecutionNotifications", std::move(notifications)}}}}}}},
  };
}

}  // namespace topoguard::audit
