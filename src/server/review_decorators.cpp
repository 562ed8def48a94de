#include "review_decorators.h"

#include <chrono>
#include <string>
#include <string_view>
#include <utility>

#include "topoguard/common/json_writer.h"
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
    if (!reply.outcome.needs_full_budget) {  // a first try, decided again: counted then
      metrics->record_review(endpoint, reply, seconds_since(start));
    }
    return reply;
  };
}

admission::ReviewEndpoint with_request_log(std::string endpoint, admission::ReviewEndpoint next) {
  return [endpoint = std::move(endpoint), next = std::move(next)](const admission::ReviewCall& call) {
    const auto start = std::chrono::steady_clock::now();
    admission::ReviewReply reply = next(call);
    if (reply.outcome.needs_full_budget) {  // a first try, decided again: logged then
      return reply;
    }
    const double latency_ms = seconds_since(start) * 1000.0;

    // Written without a Json tree (one line per request); log_fields() takes the members only.
    std::string fields;
    fields.reserve(384);
    JsonWriter writer(fields);
    writer.begin_object().member("endpoint", endpoint).member("status", reply.http_status);
    const auto members = [&fields, &writer] {
      writer.end_object();
      return std::string_view(fields).substr(1, fields.size() - 2);
    };
    if (reply.http_status != 200) {
      writer.member("error", reply.http_error).member("latency_ms", latency_ms);
      log_fields(LogLevel::kWarn, "admission request rejected", members());
      return reply;
    }
    LogLevel level = LogLevel::kInfo;
    if (!reply.outcome.patch_dropped.empty()) {
      level = LogLevel::kWarn;
    }
    if (!reply.outcome.error.empty()) {
      level = LogLevel::kError;
    }
    if (!log_enabled(level)) {
      return reply;
    }
    writer.member("uid", reply.request.uid)
        .member("kind", reply.request.kind)
        .member("namespace", reply.request.namespace_name)
        .member("name", reply.request.name)
        .member("operation", reply.request.operation)
        .member("dry_run", reply.request.dry_run)
        .member("decision", admission::decision_name(reply.outcome.decision));
    writer.key("rules").begin_array();
    for (const auto& finding : reply.outcome.findings) {
      writer.string(std::string(policy::rule_name(finding.rule)) + ':' +
                    std::string(policy::action_name(finding.action)));
    }
    writer.end_array();
    writer.member("patch_ops", reply.outcome.patch_operations);
    writer.key("patch_rules").begin_array();
    for (const policy::RuleId rule : reply.outcome.patch_rules) {
      writer.string(policy::rule_name(rule));
    }
    writer.end_array();
    writer.member("latency_ms", latency_ms);
    if (!reply.outcome.patch_dropped.empty()) {
      writer.member("patch_dropped", reply.outcome.patch_dropped);
    }
    if (!reply.outcome.error.empty()) {
      writer.member("error", reply.outcome.error);
    }
    log_fields(level, "admission review", members());
    return reply;
  };
}

}  // namespace topoguard::server
