// Per-resource report CRDs, as background reporting keeps them in a cluster: one OpenReports
// Report (or wg-policy PolicyReport) per object of an audit, scoped to that object, with a result
// per rule it was checked against (as policy_reports() gives them), a skip per thing that could
// not be decided, and an error per input error of the object. Cluster-scoped objects get the
// cluster kind. Pure: the caller names, owns and writes the documents.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "topoguard/audit/audit_report.h"
#include "topoguard/audit/report_writer.h"
#include "topoguard/common/json.h"
#include "topoguard/common/sorted_json.h"

namespace topoguard::audit {

struct ResourceReportOptions {
  ReportFormat format = ReportFormat::kOpenReports;  // or kPolicyReport
  std::string help_uri_base;                         // as ReportOptions::help_uri_base
  // A report keeps at most this many results, and results of at most this many bytes (JSON) in
  // all, so no report nears the API server's request limit (3 MiB) or etcd's object limit
  // (1.5 MiB). Failures and errors are kept first, passes last; the summary still counts every
  // result, and the annotation topoguard.dev/omitted-results says how many were left out.
  std::size_t max_results = 1000;
  std::size_t max_result_bytes = 512u << 10;
};

struct ResourceReport {
  std::string file;  // the source of the object (AuditedResource::file, Error::location.file)
  k8s::ObjectRef subject;
  // apiVersion, kind, metadata (namespace for namespaced subjects, the managed-by label and,
  // when cut, the omitted-results annotation), scope, source, summary and results. No name.
  SortedJson document;
  std::size_t omitted = 0;  // results cut
};

// One report per evaluated resource (with the input errors of its file), then one per other
// object of `subjects` (source file -> object) that has input errors, in file order. Errors of
// a file that is not in `subjects` and no resource's are left out of these reports (the
// caller reports them otherwise).
[[nodiscard]] std::vector<ResourceReport> resource_reports(
    const AuditReport& report, const std::map<std::string, k8s::ObjectRef>& subjects,
    const ResourceReportOptions& options);

}  // namespace topoguard::audit
