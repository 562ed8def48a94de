// Cross-cutting concerns around an admission::ReviewEndpoint, each a decorator of the same
// shape (Kyverno's WithMetrics(...).WithAdmission(...) chain): metrics and the request log.
#pragma once

#include <memory>
#include <string>

#include "topoguard/admission/review_endpoint.h"
#include "topoguard/server/metrics.h"

namespace topoguard::server {

// Counts the request, its latency and its findings under `endpoint`.
[[nodiscard]] admission::ReviewEndpoint with_metrics(std::shared_ptr<Metrics> metrics,
                                                     std::string endpoint,
                                                     admission::ReviewEndpoint next);

// One JSON log line per request: uid, kind, namespace/name, operation, decision, rules, latency.
// Never the object body.
[[nodiscard]] admission::ReviewEndpoint with_request_log(std::string endpoint,
                                                         admission::ReviewEndpoint next);

}  // namespace topoguard::server
