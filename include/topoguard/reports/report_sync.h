// Background reports: the cluster cache's objects evaluated under the webhook's policies and kept
// as report CRDs, one per audited object (audit/resource_reports.h). Kyverno, Kubewarden and
// Policy Reporter users read them with the same tools; what went wrong for those projects
// (reports written on every scan, reports too large for etcd, orphans of deleted objects) is what
// this avoids:
//  - a report is named after its object's uid and owned by it (ownerReferences), so the garbage
//    collector deletes it with the object; this writer deletes one whose object left the cache
//    too;
//  - it is written by server-side apply (fieldManager topoguard, force) only when its content
//    hash (annotation topoguard.dev/content-hash) differs from the one in the cluster, so an
//    unchanged cluster costs no writes, after a restart or a change of writer as well;
//  - results are cut (ResourceReportOptions), writes go through a token bucket of their own, and
//    one replica at a time writes (a coordination.k8s.io Lease).
// A pass needs a fresh cache snapshot: with a stale cache nothing is written.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "topoguard/audit/report_writer.h"
#include "topoguard/audit/resource_reports.h"
#include "topoguard/cache/cluster_cache.h"
#include "topoguard/kube/api_client.h"
#include "topoguard/kube/clock.h"
#include "topoguard/kube/list.h"
#include "topoguard/kube/objects.h"
#include "topoguard/kube/rate_limiter.h"
#include "topoguard/policy/policy_set.h"

namespace topoguard::reports {

inline constexpr std::string_view kFieldManager = "topoguard";
// Background reports carry this label ("true") besides app.kubernetes.io/managed-by=topoguard,
// which reports made by `topoguard audit --format openreports` and applied by hand carry too:
// only reports with both are this writer's to list, rewrite and delete.
inline constexpr std::string_view kBackgroundLabel = "topoguard.dev/background";
inline constexpr std::string_view kContentHashAnnotation = "topoguard.dev/content-hash";

// The namespaced and the cluster-scoped report resource of a format (openreports or
// policyreport).
struct ReportResources {
  kube::ResourceRef namespaced;
  kube::ResourceRef cluster;
};
[[nodiscard]] ReportResources report_resources(audit::ReportFormat format);

// A report as the cluster should hold it.
struct DesiredReport {
  std::string namespace_;   // "" for a cluster report
  std::string name;         // the uid of the object it reports on
  Json document;            // what is applied: name, owner, labels, content-hash annotation
  std::string hash;         // the content hash (of the document without it)
  std::size_t omitted = 0;  // results cut
};

struct DesiredReports {
  std::vector<DesiredReport> reports;
  std::size_t controlled = 0;   // claims a Pod generated: judged through their template
  std::size_t without_uid = 0;  // objects with no metadata.uid: no report can be owned by them
};

// What the snapshot's objects call for under `policies`. Pure.
[[nodiscard]] DesiredReports desired_reports(const cache::CacheSnapshot& snapshot,
                                             const policy::PolicySet& policies,
                                             const audit::ResourceReportOptions& options);

// The content hash of a document (SHA-256, hex).
[[nodiscard]] std::string content_hash(const Json& document);
// Sets the annotation topoguard.dev/content-hash of `document` to the hash of the document
// without it, and returns that hash.
std::string stamp_content_hash(Json& document);
// Server-side apply of a report as topoguard (fieldManager topoguard, force).
[[nodiscard]] Result<kube::ObjectResponse> apply_report(kube::ApiClient& client,
                                                        const kube::ResourceRef& resource,
                                                        const std::string& name,
                                                        const Json& document,
                                                        std::stop_token stop);

struct ReportSyncOptions {
  std::chrono::milliseconds interval{std::chrono::minutes(5)};
  audit::ResourceReportOptions report;
  // The writers' Lease.
  std::string lease_namespace = "topoguard";
  std::string lease_name = "topoguard-reports";
  std::string identity;
  std::chrono::seconds lease_duration{15};
  std::chrono::seconds renew_deadline{10};
  std::chrono::seconds retry_period{2};
  kube::RateLimit writes{.qps = 5.0, .burst = 10};
  // The reports in the cluster are listed again (to see ones edited or deleted by others) every
  // this many passes, and whenever this replica becomes the writer.
  int relist_every = 10;
};

struct ReportSyncStatus {
  bool leader = false;
  std::uint64_t passes = 0;           // completed passes
  std::uint64_t writes = 0;           // reports applied
  std::uint64_t write_errors = 0;     // applies and deletes that failed
  std::uint64_t skipped = 0;          // reports left alone: their content had not changed
  std::uint64_t deletes = 0;          // reports of objects no longer in the cluster
  std::uint64_t stale_skips = 0;      // passes not run: the cache was not fresh
  std::uint64_t omitted_results = 0;  // results cut, over all writes
  std::size_t reports = 0;            // reports the last pass called for
  std::optional<std::chrono::system_clock::time_point> last_pass;
  std::chrono::nanoseconds last_pass_duration{0};
  std::string last_error;
};

// The status as Prometheus text (topoguard_reports_*).
[[nodiscard]] std::string render_report_metrics(const ReportSyncStatus& status);

class ReportSyncer {
 public:
  using PolicySource = std::function<policy::PolicySetPtr()>;
  // What the syncer did or failed to do, for the log (called on its thread).
  using EventSink = std::function<void(bool failure, const std::string& message)>;

  ReportSyncer(kube::ApiClientPtr client, cache::ClusterCachePtr cache, PolicySource policies,
               ReportSyncOptions options, kube::ClockPtr clock, EventSink on_event = nullptr);
  ~ReportSyncer();  // stop()
  ReportSyncer(const ReportSyncer&) = delete;
  ReportSyncer& operator=(const ReportSyncer&) = delete;

  void start();
  // Releases the Lease if held and joins the thread; false when a pass still runs at `deadline`
  // (runtime::BackgroundLoop). Idempotent.
  bool stop(std::chrono::steady_clock::time_point deadline =
                std::chrono::steady_clock::time_point::max());
  // Runs a pass now (when this replica is the writer) instead of at the next interval.
  void poke();

  [[nodiscard]] ReportSyncStatus status() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace topoguard::reports
