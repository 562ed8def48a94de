#include "topoguard/audit/audit_report.h"

#include <algorithm>
#include <map>

#include "topoguard/common/location_text.h"
#include "topoguard/common/printable_text.h"
#include "topoguard/k8s/object.h"

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

bool has_unknown_namespace_labels(const AuditReport& report) {
  return std::any_of(report.resources.begin(), report.resources.end(),
                     [](const AuditedResource& resource) { return !resource.unknown.empty(); });
}

std::string unknown_labels_note(const AuditReport& report, std::string_view how,
                                std::size_t max_listed) {
  std::map<std::string, std::vector<const AuditedResource*>> by_namespace;
  for (const AuditedResource& resource : report.resources) {
    if (!resource.unknown.empty()) {
      by_namespace[k8s::effective_namespace(resource.ref)].push_back(&resource);
    }
  }
  if (by_namespace.empty()) {
    return "";
  }
  std::size_t total = 0;
  for (const auto& [name, resources] : by_namespace) {
    total += resources.size();
  }
  std::string note = std::to_string(total) +
                     (total == 1 ? " resource was judged without the labels of its namespace"
                                 : " resources were judged without the labels of their namespace") +
                     ", " + std::string(kUnknownLabelsMeaning);
  std::size_t listed = 0;
  std::size_t namespaces_left = by_namespace.size();
  for (const auto& [name, resources] : by_namespace) {
    if (listed >= max_listed) {
      note += "\n  and " + std::to_string(namespaces_left) + " more namespace" +
              (namespaces_left == 1 ? "" : "s");
      break;
    }
    --namespaces_left;
    note += "\n  namespace \"" + printable(name) + "\" (" + std::to_string(resources.size()) +
            "):";
    const char* separator = " ";
    for (const AuditedResource* resource : resources) {
      if (listed >= max_listed) {
        note += ", ...";
        break;
      }
      ++listed;
      note += separator + printable(resource->ref.kind) + " " + printable(resource->ref.name) +
              " (" + printable(location_text(resource->file, resource->line)) + ")";
      separator = ", ";
    }
  }
  return note + "\n  give the labels with " + std::string(how);
}

int exit_code(const AuditReport& report, FailOn fail_on, bool fail_on_unknown) {
  if (!report.errors.empty()) {
    return kExitInvalidInput;
  }
  if (fail_on_unknown && has_unknown_namespace_labels(report)) {
    return kExitFindings;
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
