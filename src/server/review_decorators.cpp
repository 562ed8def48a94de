#include "topoguard/server/review_decorators.h"

#include <chrono>
#include <utility>

#include "topoguard/server/json_log.h"

namespace topoguard::server {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

admission::ReviewEndpoint with_metrics(std::shared_ptr<Metrics> metrics, std::string endpoint,
                                       admission::ReviewEndpoint next) {
  return [metrics = std::move(metrics), endpoint = std::move(endpoint),
          next = std::move(next)](const admission::ReviewCall& call) {
    const auto start = std::chrono::steady_clock::now();
    admission::ReviewReply reply = next(call);
    metrics->record_review(endpoint, reply, seconds_since(start));
    return reply;
  };
}

admission::ReviewEndpoint with_request_log(std::string endpoint, admission::ReviewEndpoint next) {
  return [endpoint = std::move(endpoint), next = std::move(next)](const admission::ReviewCall& call) {
    const auto start = std::chrono::steady_clock::now();
    admission::ReviewReply reply = next(call);
    const double latency_ms = seconds_since(start) * 1000.0;

    Json fields = Json::object();
    fields["endpoint"] = endpoint;
    fields["status"] = reply.http_status;
    if (reply.http_status != 200) {
      fields["error"] = reply.http_error;
      fields["latency_ms"] = latency_ms;
      log_event(LogLevel::kWarn, "admission request rejected", fields);
      return reply;
    }
    fields["uid"] = reply.request.uid;
    fields["kind"] = reply.request.kind;
    fields["namespace"] = reply.request.namespace_name;
    fields["name"] = reply.request.name;
    fields["operation"] = reply.request.operation;
    fields["dry_run"] = reply.request.dry_run;
    fields["decision"] = admission::decision_name(reply.outcome.decision);
    Json rules = Json::array();
    for (const auto& finding : reply.outcome.findings) {
      rules.push_back(std::string(policy::rule_name(finding.rule)) + ":" +
                      std::string(policy::action_name(finding.action)));
    }
    fields["rules"] = std::move(rules);
    fields["patch_ops"] = reply.outcome.patch_operations;
    fields["latency_ms"] = latency_ms;
    LogLevel level = LogLevel::kInfo;
    if (!reply.outcome.patch_dropped.empty()) {
      fields["patch_dropped"] = reply.outcome.patch_dropped;
      level = LogLevel::kWarn;
    }
    if (!reply.outcome.error.empty()) {
      fields["error"] = reply.outcome.error;
      level = LogLevel::kError;
    }
    log_event(level, "admission review", fields);
    return reply;
  };
}

}  // namespace topoguard::server
