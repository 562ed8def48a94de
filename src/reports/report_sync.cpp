#include "topoguard/reports/report_sync.h"

#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <map>
#include <mutex>
#include <set>
#include <tuple>
#include <utility>

#include "topoguard/audit/audit_runner.h"
#include "topoguard/common/sorted_json.h"
#include "topoguard/k8s/kinds.h"
#include "topoguard/k8s/object.h"
#include "topoguard/k8s/pod_template.h"
#include "topoguard/kube/lease_lock.h"
#include "topoguard/kube/objects.h"
#include "topoguard/runtime/background_loop.h"

namespace topoguard::reports {

namespace {

constexpr std::string_view kSlices = k8s::kResourceSlices;

// "cluster:resourceclaims.v1.resource.k8s.io/NS/NAME", as `audit --cluster` names its sources.
std::string source_name(const std::string& resource, const std::string& key) {
  return "cluster:" + resource + (key.starts_with('/') ? key : "/" + key);
}

// The report's owner: the object it reports on (not its controller: the garbage collector
// deletes the report with the object, and nothing waits on it).
Json owner_reference(const k8s::ObjectRef& subject, const std::string& uid) {
  return Json{{"apiVersion", subject.api_version},
              {"kind", subject.kind},
              {"name", subject.name},
              {"uid", uid}};
}

}  // namespace

ReportResources report_resources(audit::ReportFormat format) {
  if (format == audit::ReportFormat::kPolicyReport) {
    return {{"wgpolicyk8s.io", "v1alpha2", "policyreports", ""},
            {"wgpolicyk8s.io", "v1alpha2", "clusterpolicyreports", ""}};
  }
  return {{"openreports.io", "v1alpha1", "reports", ""},
          {"openreports.io", "v1alpha1", "clusterreports", ""}};
}

std::string content_hash(const Json& document) {
  const std::string text = document.dump();
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int size = 0;
  if (EVP_Digest(text.data(), text.size(), digest.data(), &size, EVP_sha256(), nullptr) != 1) {
    return {};  // never equal to a stored hash: the report is written
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(size * 2);
  for (unsigned int i = 0; i < size; ++i) {
    hex += kHex[digest[i] >> 4];
    hex += kHex[digest[i] & 0xf];
  }
  return hex;
}

std::string stamp_content_hash(Json& document) {
  std::string hash = content_hash(document);
  document["metadata"]["annotations"][std::string(kContentHashAnnotation)] = hash;
  return hash;
}

Result<kube::ObjectResponse> apply_report(kube::ApiClient& client,
                                          const kube::ResourceRef& resource,
                                          const std::string& name, const Json& document,
                                          std::stop_token stop) {
  return kube::apply_object(client, resource, name, document,
                            kube::WriteOptions{std::string(kFieldManager), true}, stop);
}

DesiredReports desired_reports(const cache::CacheSnapshot& snapshot,
                               const policy::PolicySet& policies,
                               const audit::ResourceReportOptions& options) {
  DesiredReports desired;
  // Every object but the slices (the snapshot's state has read them): the inventory's
  // DeviceClasses, claims, templates, NetworkAttachmentDefinitions and Namespaces.
  std::vector<std::pair<std::string, Json>> objects;
  for (const auto& [resource, by_key] : snapshot.objects.resources()) {
    if (cache::is_resource(resource, kSlices)) {
      continue;
    }
    for (const auto& [key, object] : *by_key) {
      if (k8s::controlled_by_workload(*object)) {
        ++desired.controlled;
        continue;
      }
      objects.emplace_back(source_name(resource, key), *object);
    }
  }
  const audit::ManifestSet manifests = audit::manifests_from_objects(std::move(objects));
  audit::RunOptions run_options;
  run_options.known_state = &snapshot.cluster_state;
  run_options.known_shapes = &snapshot.shapes;
  const audit::AuditRun run = audit::run_audit(manifests, policies, run_options);

  std::map<std::string, k8s::ObjectRef> subjects;
  std::map<std::string, const Json*, std::less<>> by_source;
  for (const audit::Manifest& manifest : manifests.manifests) {
    subjects.emplace(manifests.path_of(manifest), k8s::object_ref(*manifest.object));
    by_source.emplace(manifests.path_of(manifest), manifest.object);
  }
  for (audit::ResourceReport& report : audit::resource_reports(run.report, subjects, options)) {
    const Json* object = by_source.at(report.file);
    const Json* metadata = member(*object, "metadata");
    const std::string uid = metadata != nullptr ? string_member(*metadata, "uid") : "";
    if (!kube::valid_object_name(uid)) {
      ++desired.without_uid;
      continue;
    }
    Json document = report.document;
    Json& report_metadata = document["metadata"];
    report_metadata["name"] = uid;
    report_metadata["ownerReferences"] = Json::array({owner_reference(report.subject, uid)});
    report_metadata["labels"][std::string(kBackgroundLabel)] = "true";
    document["scope"]["uid"] = uid;
    std::string hash = stamp_content_hash(document);
    std::string namespace_name = string_member(report_metadata, "namespace");
    desired.reports.push_back(DesiredReport{std::move(namespace_name), uid, std::move(document),
                                            std::move(hash), report.omitted});
  }
  return desired;
}

std::string render_report_metrics(const ReportSyncStatus& status) {
  struct Metric {
    const char* name;
    const char* type;
    const char* help;
    std::optional<double> value;  // none: not shown
  };
  const auto count = [](std::uint64_t value) { return static_cast<double>(value); };
  std::optional<double> last_pass;
  if (status.last_pass) {
    last_pass = std::chrono::duration<double>(status.last_pass->time_since_epoch()).count();
  }
  const Metric metrics[] = {
      {"topoguard_reports_leader", "gauge",
       "1 when this replica holds the Lease and writes reports", status.leader ? 1.0 : 0.0},
      {"topoguard_reports_passes_total", "counter", "Report passes completed by this replica",
       count(status.passes)},
      {"topoguard_reports_writes_total", "counter", "Reports applied by this replica",
       count(status.writes)},
      {"topoguard_reports_write_errors_total", "counter", "Report applies and deletes that failed",
       count(status.write_errors)},
      {"topoguard_reports_skipped_total", "counter",
       "Reports not written because their content had not changed", count(status.skipped)},
      {"topoguard_reports_deletes_total", "counter",
       "Reports deleted because their object left the cluster", count(status.deletes)},
      {"topoguard_reports_stale_skips_total", "counter",
       "Passes not run because the cluster cache was not fresh", count(status.stale_skips)},
      {"topoguard_reports_omitted_results_total", "counter",
       "Results cut from written reports to keep them small", count(status.omitted_results)},
      {"topoguard_reports_resources", "gauge", "Reports the last pass called for",
       static_cast<double>(status.reports)},
      {"topoguard_reports_last_pass_timestamp_seconds", "gauge",
       "When the last pass ended, seconds since the epoch", last_pass},
      {"topoguard_reports_last_pass_duration_seconds", "gauge", "How long the last pass took",
       std::chrono::duration<double>(status.last_pass_duration).count()},
  };
  std::string text;
  for (const Metric& metric : metrics) {
    if (metric.value) {
      SortedJson number = *metric.value;
      text += std::string("# HELP ") + metric.name + " " + metric.help + "\n# TYPE " + metric.name +
              " " + metric.type + "\n" + metric.name + " " + number.dump() + "\n";
    }
  }
  return text;
}

struct ReportSyncer::Impl {
  // A report in the cluster: its resource (namespaced or cluster), namespace and name.
  using Key = std::tuple<bool, std::string, std::string>;

  Impl(kube::ApiClientPtr api, cache::ClusterCachePtr cluster, PolicySource policy_source,
       ReportSyncOptions sync_options, kube::ClockPtr time, EventSink event_sink)
      : client(std::move(api)),
        cache(std::move(cluster)),
        policies(std::move(policy_source)),
        options(std::move(sync_options)),
        clock(std::move(time)),
        on_event(std::move(event_sink)),
        resources(report_resources(options.report.format)),
        lease(client,
              {options.lease_namespace, options.lease_name, options.identity,
               options.lease_duration, options.renew_deadline, options.retry_period},
              clock),
        bucket(options.writes, clock) {}

  // One turn of the loop: a pass when due (or poked) and this replica is the writer; returns the
  // wait before the next turn.
  std::chrono::nanoseconds turn(bool poked, std::stop_token stop);
  // Renews the Lease when due; whether this replica is the writer.
  bool lead(std::stop_token stop);
  // One pass; false when it could not run (no fresh snapshot, the reports could not be listed).
  bool pass(std::stop_token stop);
  bool relist(std::stop_token stop);
  bool write(const DesiredReport& report, std::stop_token stop);
  bool erase(const Key& key, std::stop_token stop);
  kube::ResourceRef resource_of(const Key& key) const {
    kube::ResourceRef resource = std::get<0>(key) ? resources.namespaced : resources.cluster;
    resource.namespace_ = std::get<1>(key);
    return resource;
  }
  void report(bool failure, const std::string& message) {
    if (failure) {
      std::lock_guard lock(mutex);
      state.last_error = message;
    }
    if (on_event) {
      on_event(failure, message);
    }
  }

  const kube::ApiClientPtr client;
  const cache::ClusterCachePtr cache;
  const PolicySource policies;
  const ReportSyncOptions options;
  const kube::ClockPtr clock;
  const EventSink on_event;
  const ReportResources resources;

  mutable std::mutex mutex;  // guards state
  ReportSyncStatus state;

  // The loop thread's only:
  kube::LeaseLock lease;
  kube::TokenBucket bucket;
  std::chrono::steady_clock::time_point next_lease_attempt{};
  std::chrono::steady_clock::time_point next_pass{};
  bool known_valid = false;  // `known` was listed while this replica held the Lease
  int passes_since_list = 0;
  std::map<Key, std::string> known;  // the reports in the cluster -> their content hash
  runtime::BackgroundLoop loop;  // declared last: its thread uses the members above
};

bool ReportSyncer::Impl::lead(std::stop_token stop) {
  if (clock->now() >= next_lease_attempt) {
    const bool was_leader = lease.held();
    const bool leader = lease.try_acquire_or_renew(stop);
    next_lease_attempt = clock->now() + options.retry_period;
    if (leader != was_leader) {
      known_valid = false;  // another writer may have changed reports meanwhile
      report(false, leader ? "reports: this replica writes them now"
                           : "reports: this replica no longer writes them");
    }
    std::lock_guard lock(mutex);
    state.leader = leader;
  }
  return lease.held();
}

bool ReportSyncer::Impl::relist(std::stop_token stop) {
  std::map<Key, std::string> listed;
  kube::ListOptions list_options;
  list_options.label_selector =
      "app.kubernetes.io/managed-by=topoguard," + std::string(kBackgroundLabel) + "=true";
  for (const bool namespaced : {true, false}) {
    const kube::ResourceRef& resource = namespaced ? resources.namespaced : resources.cluster;
    kube::ListResult list = kube::list_resource(*client, resource, list_options, stop);
    if (!list.ok()) {
      report(true, "reports: listing " + resource.to_string() + ": " + list.error +
                       (list.not_served() ? " (is the report CRD installed?)" : ""));
      return false;
    }
    for (const Json& item : list.items) {
      const Json* metadata = member(item, "metadata");
      if (metadata == nullptr) {
        continue;
      }
      const Json* annotations = member(*metadata, "annotations");
      listed[{namespaced, string_member(*metadata, "namespace"),
              string_member(*metadata, "name")}] =
          annotations != nullptr ? string_member(*annotations, std::string(kContentHashAnnotation))
                                 : "";
    }
  }
  known = std::move(listed);
  known_valid = true;
  passes_since_list = 0;
  return true;
}

bool ReportSyncer::Impl::write(const DesiredReport& desired, std::stop_token stop) {
  if (!bucket.acquire(stop)) {
    return false;
  }
  const Key key{!desired.namespace_.empty(), desired.namespace_, desired.name};
  Result<kube::ObjectResponse> applied =
      apply_report(*client, resource_of(key), desired.name, desired.document, stop);
  std::lock_guard lock(mutex);
  if (applied && applied->ok()) {
    known[key] = desired.hash;
    ++state.writes;
    state.omitted_results += desired.omitted;
    return true;
  }
  ++state.write_errors;
  known.erase(key);
  const std::string why = applied ? applied->describe() : applied.error().message;
  state.last_error =
      "reports: applying " + resource_of(key).to_string() + "/" + desired.name + ": " + why;
  if (on_event) {
    on_event(true, state.last_error);
  }
  return true;
}

bool ReportSyncer::Impl::erase(const Key& key, std::stop_token stop) {
  if (!bucket.acquire(stop)) {
    return false;
  }
  Result<kube::ObjectResponse> deleted =
      kube::delete_object(*client, resource_of(key), std::get<2>(key), stop);
  std::lock_guard lock(mutex);
  if (deleted && (deleted->ok() || deleted->not_found())) {
    known.erase(key);
    ++state.deletes;
    return true;
  }
  ++state.write_errors;
  state.last_error = "reports: deleting " + resource_of(key).to_string() + "/" + std::get<2>(key) +
                     ": " + (deleted ? deleted->describe() : deleted.error().message);
  if (on_event) {
    on_event(true, state.last_error);
  }
  return true;
}

bool ReportSyncer::Impl::pass(std::stop_token stop) {
  const cache::CacheSnapshotPtr snapshot = cache->fresh_snapshot();
  if (snapshot == nullptr) {
    std::lock_guard lock(mutex);
    ++state.stale_skips;
    return false;
  }
  const policy::PolicySetPtr policy_set = policies();
  const auto started = clock->now();
  if ((!known_valid || passes_since_list >= options.relist_every) && !relist(stop)) {
    return false;
  }
  const DesiredReports desired = desired_reports(*snapshot, *policy_set, options.report);
  std::set<Key> wanted;
  std::uint64_t skipped = 0;
  for (const DesiredReport& report : desired.reports) {
    const Key key{!report.namespace_.empty(), report.namespace_, report.name};
    wanted.insert(key);
    if (auto found = known.find(key); found != known.end() && found->second == report.hash) {
      ++skipped;
      continue;
    }
    if (!lead(stop) || !write(report, stop)) {
      known_valid = false;  // another writer may take over from here
      return true;
    }
  }
  std::vector<Key> gone;
  for (const auto& [key, hash] : known) {
    if (!wanted.contains(key)) {
      gone.push_back(key);
    }
  }
  for (const Key& key : gone) {
    if (!lead(stop) || !erase(key, stop)) {
      known_valid = false;
      return true;
    }
  }
  ++passes_since_list;
  std::lock_guard lock(mutex);
  ++state.passes;
  state.skipped += skipped;
  state.reports = desired.reports.size();
  state.last_pass = clock->wall_now();
  state.last_pass_duration = clock->now() - started;
  return true;
}

std::chrono::nanoseconds ReportSyncer::Impl::turn(bool poked, std::stop_token stop) {
  if (lead(stop) && (poked || clock->now() >= next_pass)) {
    // A pass that could not run (the cache not synced yet, or stale) is tried again soon.
    next_pass = clock->now() + (pass(stop) ? options.interval
                                           : std::min<std::chrono::nanoseconds>(
                                                 options.interval, std::chrono::seconds(10)));
  }
  const auto until_pass = next_pass - clock->now();
  return std::clamp<std::chrono::nanoseconds>(until_pass, std::chrono::milliseconds(1),
                                              options.retry_period);
}

ReportSyncer::ReportSyncer(kube::ApiClientPtr client, cache::ClusterCachePtr cache,
                           PolicySource policies, ReportSyncOptions options, kube::ClockPtr clock,
                           EventSink on_event)
    : impl_(std::make_unique<Impl>(std::move(client), std::move(cache), std::move(policies),
                                   std::move(options), std::move(clock), std::move(on_event))) {}

ReportSyncer::~ReportSyncer() { stop(); }

void ReportSyncer::start() {
  Impl& impl = *impl_;
  impl.loop.start([&impl](bool poked, std::stop_token stop) { return impl.turn(poked, stop); },
                  [&impl] { impl.lease.release(); });
}

bool ReportSyncer::stop(std::chrono::steady_clock::time_point deadline) {
  return impl_->loop.stop(deadline);
}

void ReportSyncer::poke() { impl_->loop.poke(); }

ReportSyncStatus ReportSyncer::status() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->state;
}

}  // namespace topoguard::reports
