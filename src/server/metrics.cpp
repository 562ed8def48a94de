#include "topoguard/server/metrics.h"

#include <cstdio>
#include <vector>

#include "topoguard/k8s/kinds.h"
#include "topoguard/k8s/pod_template.h"

namespace topoguard::server {
namespace {

std::string format_double(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.9g", value);
  return buffer;
}

// Label values come from fixed sets, whatever the request says: one series per distinct value
// sent would let any client grow /metrics without bound.
std::string kind_label(const std::string& kind) {
  if (kind.empty() || k8s::is_workload_kind_name(kind) || k8s::is_claim_kind_name(kind)) {
    return kind;
  }
  return "other";
}

std::string operation_label(const std::string& operation) {
  for (const char* known : {"", "CREATE", "UPDATE", "DELETE", "CONNECT"}) {
    if (operation == known) {
      return operation;
    }
  }
  return "other";
}

std::string decision_label(const admission::ReviewReply& reply) {
  if (reply.http_status == 400) {
    return "bad_request";
  }
  if (reply.http_status == 413) {
    return "too_large";
  }
  if (reply.http_status != 200) {
    return "http_" + std::to_string(reply.http_status);
  }
  return std::string(admission::decision_name(reply.outcome.decision));
}

}  // namespace

std::string escape_label_value(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (const char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

Metrics::Metrics(std::string version) : version_(std::move(version)) {}

void Metrics::record_review(std::string_view endpoint, const admission::ReviewReply& reply,
                            double seconds) {
  // Labels and keys are built before the lock, which every worker takes once per request: with
  // 64 connections on two cores, a worker preempted inside a long critical section (string
  // allocations) stalls all the others.
  RequestKey request_key{std::string(endpoint), kind_label(reply.request.kind),
                         operation_label(reply.request.operation), decision_label(reply)};
  std::string latency_key(endpoint);
  std::size_t bucket = kLatencyBuckets.size();
  for (std::size_t i = 0; i < kLatencyBuckets.size(); ++i) {
    if (seconds <= kLatencyBuckets[i]) {
      bucket = i;
      break;
    }
  }
  std::vector<FindingKey> finding_keys;
  finding_keys.reserve(reply.outcome.findings.size());
  for (const auto& finding : reply.outcome.findings) {
    finding_keys.emplace_back(std::string(policy::rule_name(finding.rule)),
                              std::string(policy::action_name(finding.action)));
  }

  std::lock_guard lock(mutex_);
  ++requests_[std::move(request_key)];
  Histogram& histogram = latency_[std::move(latency_key)];
  if (bucket < histogram.buckets.size()) {
    ++histogram.buckets[bucket];
  }
  ++histogram.count;
  histogram.sum += seconds;
  for (auto& key : finding_keys) {
    ++findings_[std::move(key)];
  }
  if (!reply.outcome.patch_dropped.empty()) {
    ++patches_dropped_;
  }
  feasibility_steps_ += reply.outcome.feasibility_steps;
  if (reply.outcome.feasibility_budget_exhausted) {
    ++feasibility_unknown_[reply.outcome.feasibility_no_share ? 1 : 0];
  }
}

void Metrics::record_decision_thread(DecisionThread thread) {
  decision_threads_[thread == DecisionThread::kEventLoop ? 0 : 1].fetch_add(
      1, std::memory_order_relaxed);
}

void Metrics::record_policy_reload(bool ok) {
  std::lock_guard lock(mutex_);
  ++policy_reloads_[ok ? 0 : 1];
}

void Metrics::record_certificate_reload(bool ok) {
  std::lock_guard lock(mutex_);
  ++certificate_reloads_[ok ? 0 : 1];
}

void Metrics::set_certificate_not_after(std::int64_t seconds_since_epoch) {
  std::lock_guard lock(mutex_);
  certificate_not_after_ = seconds_since_epoch;
}

std::string Metrics::render() const {
  std::lock_guard lock(mutex_);
  std::string out;
  out.reserve(4096);
  out += "# HELP topoguard_build_info Build information; the value is always 1.\n";
  out += "# TYPE topoguard_build_info gauge\n";
  out += "topoguard_build_info{version=\"" + escape_label_value(version_) + "\"} 1\n";

  out += "# HELP topoguard_admission_requests_total Admission requests by endpoint, object kind, "
         "operation and decision.\n";
  out += "# TYPE topoguard_admission_requests_total counter\n";
  for (const auto& [key, value] : requests_) {
    const auto& [endpoint, kind, operation, decision] = key;
    out += "topoguard_admission_requests_total{endpoint=\"" + escape_label_value(endpoint) +
           "\",kind=\"" + escape_label_value(kind) + "\",operation=\"" +
           escape_label_value(operation) + "\",decision=\"" + escape_label_value(decision) +
           "\"} " + std::to_string(value) + "\n";
  }

  out += "# HELP topoguard_admission_request_duration_seconds Time from request body to "
         "response body, by endpoint.\n";
  out += "# TYPE topoguard_admission_request_duration_seconds histogram\n";
  for (const auto& [endpoint, histogram] : latency_) {
    const std::string label = "endpoint=\"" + escape_label_value(endpoint) + "\"";
    std::uint64_t cumulative = 0;
    for (std::size_t i = 0; i < kLatencyBuckets.size(); ++i) {
      cumulative += histogram.buckets[i];
      out += "topoguard_admission_request_duration_seconds_bucket{" + label + ",le=\"" +
             format_double(kLatencyBuckets[i]) + "\"} " + std::to_string(cumulative) + "\n";
    }
    out += "topoguard_admission_request_duration_seconds_bucket{" + label + ",le=\"+Inf\"} " +
           std::to_string(histogram.count) + "\n";
    out += "topoguard_admission_request_duration_seconds_sum{" + label + "} " +
           format_double(histogram.sum) + "\n";
    out += "topoguard_admission_request_duration_seconds_count{" + label + "} " +
           std::to_string(histogram.count) + "\n";
  }

  out += "# HELP topoguard_findings_total Findings on admitted objects by rule and action.\n";
  out += "# TYPE topoguard_findings_total counter\n";
  for (const auto& [key, value] : findings_) {
    out += "topoguard_findings_total{rule=\"" + escape_label_value(key.first) + "\",action=\"" +
           escape_label_value(key.second) + "\"} " + std::to_string(value) + "\n";
  }

  out += "# HELP topoguard_patches_dropped_total Engine patches not sent because they did not "
         "apply or the patched object did not evaluate.\n";
  out += "# TYPE topoguard_patches_dropped_total counter\n";
  out += "topoguard_patches_dropped_total " + std::to_string(patches_dropped_) + "\n";

  out += "# HELP topoguard_feasibility_unknown_total Reviews whose feasibility was left unknown, "
         "by reason: their budget of steps ran out, or their requester had no share of the "
         "feasibility lane left.\n";
  out += "# TYPE topoguard_feasibility_unknown_total counter\n";
  out += "topoguard_feasibility_unknown_total{reason=\"budget\"} " +
         std::to_string(feasibility_unknown_[0]) + "\n";
  out += "topoguard_feasibility_unknown_total{reason=\"no_share\"} " +
         std::to_string(feasibility_unknown_[1]) + "\n";
  out += "# HELP topoguard_feasibility_steps_total Feasibility work done for reviews, in steps.\n";
  out += "# TYPE topoguard_feasibility_steps_total counter\n";
  out += "topoguard_feasibility_steps_total " + std::to_string(feasibility_steps_) + "\n";

  out += "# HELP topoguard_admission_decisions_total Reviews decided, by thread: on the event "
         "loop (bodies up to 16 KiB) or on the decision pool (larger ones).\n";
  out += "# TYPE topoguard_admission_decisions_total counter\n";
  out += "topoguard_admission_decisions_total{thread=\"event_loop\"} " +
         std::to_string(decision_threads_[0].load(std::memory_order_relaxed)) + "\n";
  out += "topoguard_admission_decisions_total{thread=\"pool\"} " +
         std::to_string(decision_threads_[1].load(std::memory_order_relaxed)) + "\n";

  out += "# HELP topoguard_policy_reloads_total Policy reloads by result.\n";
  out += "# TYPE topoguard_policy_reloads_total counter\n";
  out += "topoguard_policy_reloads_total{result=\"ok\"} " + std::to_string(policy_reloads_[0]) +
         "\n";
  out += "topoguard_policy_reloads_total{result=\"failed\"} " +
         std::to_string(policy_reloads_[1]) + "\n";

  out += "# HELP topoguard_certificate_reloads_total Serving certificate reloads by result.\n";
  out += "# TYPE topoguard_certificate_reloads_total counter\n";
  out += "topoguard_certificate_reloads_total{result=\"ok\"} " +
         std::to_string(certificate_reloads_[0]) + "\n";
  out += "topoguard_certificate_reloads_total{result=\"failed\"} " +
         std::to_string(certificate_reloads_[1]) + "\n";

  out += "# HELP topoguard_certificate_expiry_timestamp_seconds NotAfter of the serving "
         "certificate in use, in seconds since the epoch.\n";
  out += "# TYPE topoguard_certificate_expiry_timestamp_seconds gauge\n";
  out += "topoguard_certificate_expiry_timestamp_seconds " +
         std::to_string(certificate_not_after_) + "\n";
  return out;
}

}  // namespace topoguard::server
