#include "topoguard/server/review_decorators.h"

#include <charconv>
#include <chrono>
#include <string>
#include <string_view>
#include <utility>

#include "topoguard/server/json_log.h"

namespace topoguard::server {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// ,"key":"value" / ,"key":number, for the request line (keys are plain ASCII literals).
void add_key(std::string& out, std::string_view key) {
  if (!out.empty()) {
    out += ',';
  }
  out += '"';
  out += key;
  out += "\":";
}

void add_string(std::string& out, std::string_view key, std::string_view value) {
  add_key(out, key);
  admission::append_json_string(out, value);
}

template <typename Number>
void add_number(std::string& out, std::string_view key, Number value) {
  add_key(out, key);
  char text[32];
  const auto written = std::to_chars(text, text + sizeof(text), value);
  out.append(text, written.ptr);
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

    // Rendered by hand (one line per request): the same members a Json tree would give.
    std::string fields;
    fields.reserve(384);
    add_string(fields, "endpoint", endpoint);
    add_number(fields, "status", reply.http_status);
    if (reply.http_status != 200) {
      add_string(fields, "error", reply.http_error);
      add_number(fields, "latency_ms", latency_ms);
      log_fields(LogLevel::kWarn, "admission request rejected", fields);
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
    add_string(fields, "uid", reply.request.uid);
    add_string(fields, "kind", reply.request.kind);
    add_string(fields, "namespace", reply.request.namespace_name);
    add_string(fields, "name", reply.request.name);
    add_string(fields, "operation", reply.request.operation);
    fields += reply.request.dry_run ? R"(,"dry_run":true)" : R"(,"dry_run":false)";
    add_string(fields, "decision", admission::decision_name(reply.outcome.decision));
    fields += R"(,"rules":[)";
    for (std::size_t i = 0; i < reply.outcome.findings.size(); ++i) {
      const auto& finding = reply.outcome.findings[i];
      fields += i == 0 ? "\"" : ",\"";
      fields += policy::rule_name(finding.rule);
      fields += ':';
      fields += policy::action_name(finding.action);
      fields += '"';
    }
    fields += ']';
    add_number(fields, "patch_ops", reply.outcome.patch_operations);
    fields += R"(,"patch_rules":[)";
    for (std::size_t i = 0; i < reply.outcome.patch_rules.size(); ++i) {
      fields += i == 0 ? "\"" : ",\"";
      fields += policy::rule_name(reply.outcome.patch_rules[i]);
      fields += '"';
    }
    fields += ']';
    add_number(fields, "latency_ms", latency_ms);
    if (!reply.outcome.patch_dropped.empty()) {
      add_string(fields, "patch_dropped", reply.outcome.patch_dropped);
    }
    if (!reply.outcome.error.empty()) {
      add_string(fields, "error", reply.outcome.error);
    }
    log_fields(level, "admission review", fields);
    return reply;
  };
}

}  // namespace topoguard::server
