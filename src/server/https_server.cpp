#include "topoguard/server/https_server.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <csignal>
#include <cstring>
#include <ctime>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include "decision_pool.h"
#include "review_decorators.h"
#include "topoguard/admission/admission_review.h"
#include "topoguard/admission/review_endpoint.h"
#include "topoguard/cel/cel.h"
#include "topoguard/http/byte_budget.h"
#include "topoguard/http/tls_context.h"
#include "topoguard/http/tls_event_server.h"
#include "topoguard/runtime/background_loop.h"
#include "topoguard/server/json_log.h"

namespace topoguard::server {

using http::ByteBudget;
using http::DeferredAnswer;
using http::HandlerResult;
using http::HttpRequest;
using http::HttpResponse;
using http::Responder;

namespace {

constexpr const char* kJson = "application/json";
// Without ?timeout= the API server waits 10 s (its default webhook timeout).
constexpr std::chrono::milliseconds kDefaultReviewTimeout{10'000};
// Reviews waiting for a pool thread, beyond which new ones get 503 at once.
constexpr std::size_t kMaxQueuedDecisions = 1024;
// A review up to this size is decided on the event loop: handing it to the pool costs two thread
// wake-ups and a context switch each way, about as much CPU as the decision itself. Without CEL
// a decision is linear in the body, and a connection yields the loop after a few answers
// (TlsEventServer). A CEL expression's cost is not bounded by its size, so the loop decides
// with kLoopCelBudget only and hands the review to the pool when that is not enough (whatever
// kind holds the selectors: nothing depends on finding them); larger reviews go to the pool at
// once: one heavy review never holds a loop and small ones never queue behind heavy ones.
constexpr std::size_t kMaxLoopDecisionBytes = 16 * 1024;
// CEL cost units a review may spend on the loop, per evaluation of an object (the reviewed one,
// its patched form, an UPDATE's old one): about a TLS handshake's CPU, which the loop does anyway.
// Selectors of real claims cost tens of units per candidate driver.
constexpr std::uint64_t kLoopCelBudget = 10'000;
// What a review being decided may hold, per body byte: the body, its parsed tree and what the
// decision builds from it. Trees and compiled CEL selectors take many times the text they come
// from; this covers the costliest shape, a body made of CEL selectors.
constexpr std::size_t kDecisionBytesPerBodyByte = 24;

std::int64_t now_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The event loops' own failures (accepting, the loop itself) in the server's log.
void log_transport_event(http::EventSeverity severity, std::string_view message, int os_error) {
  Json fields = Json::object();
  if (os_error != 0) {
    fields["error"] = std::strerror(os_error);
  }
  log_event(severity == http::EventSeverity::kWarn ? LogLevel::kWarn : LogLevel::kError, message,
            fields);
}

// A review on its way to the pool: its body (and its tree, when the loop has read it), counted
// in the byte budget until the decision is done.
struct PendingReview {
  PendingReview(std::string&& request_body, std::shared_ptr<ByteBudget> byte_budget,
                std::size_t bytes)
      : body(std::move(request_body)), budget(std::move(byte_budget)), counted(bytes) {}
  ~PendingReview() { budget->give_back(counted); }
  PendingReview(const PendingReview&) = delete;
  PendingReview& operator=(const PendingReview&) = delete;

  std::string body;
  std::shared_ptr<ByteBudget> budget;
  std::size_t counted;
};

}  // namespace

struct HttpsServer::Impl {
  ServerOptions options;
  std::shared_ptr<CertReloader> certs;
  std::shared_ptr<PolicyReloader> policies;
  std::shared_ptr<Metrics> metrics;
  cache::ClusterCachePtr cluster;  // may be null: objects are judged alone
  ServerHooks hooks;

  admission::ReviewEndpoint mutate;
  admission::ReviewEndpoint validate;
  // Request bytes held by the event loops' connections and by decisions in flight.
  std::shared_ptr<ByteBudget> budget;
  std::unique_ptr<http::TlsEventServer> https;  // both ports: endpoint 0 webhook, 1 metrics
  // Declared after `https`, so destroyed first: its tasks answer through the event loops.
  std::unique_ptr<DecisionPool> pool;
  std::size_t decision_threads = 0;  // as started, for the "serving" log line

  std::atomic<bool> started{false};
  std::atomic<bool> shutting_down{false};
  bool shut_down = false;  // guarded by shutdown_mutex
  std::mutex shutdown_mutex;

  // Polls the certificate and policy files every reload_interval, at once when poked (reload()).
  runtime::BackgroundLoop watcher;

  [[nodiscard]] bool certificate_valid() const {
    const http::KeyPairPtr pair = certs->current();
    return pair != nullptr && pair->valid_at(now_seconds());
  }

  // Why a readiness hook is not content, or "".
  [[nodiscard]] std::string hook_not_ready() const {
    for (const auto& check : hooks.readiness) {
      if (std::string reason = check(); !reason.empty()) {
        return reason;
      }
    }
    return "";
  }

  [[nodiscard]] bool ready() const {
    return !shutting_down && policies->current() != nullptr && certificate_valid() &&
           (cluster == nullptr || cluster->synced()) && hook_not_ready().empty();
  }

  // /healthz and /readyz, the same on both ports.
  [[nodiscard]] HttpResponse health(const std::string& path) const {
    HttpResponse response;
    response.body = "ok\n";
    if (path == "/healthz") {
      return response;
    }
    response.status = 503;
    if (shutting_down) {
      response.body = "shutting down\n";
    } else if (policies->current() == nullptr) {
      response.body = "no policy loaded\n";
    } else if (certs->current() == nullptr) {
      response.body = "no serving certificate yet\n";
    } else if (!certificate_valid()) {
      response.body = "serving certificate is outside its validity period\n";
    } else if (cluster != nullptr && !cluster->synced()) {
      response.body = "cluster cache not synced yet\n";
    } else if (std::string reason = hook_not_ready(); !reason.empty()) {
      response.body = reason + "\n";
    } else {
      response.status = 200;
    }
    return response;
  }

  admission::ReviewEndpoint make_endpoint(const std::string& name, admission::Mode mode,
                                          std::shared_ptr<admission::FeasibilityLane> lane) {
    admission::PolicySource source = [reloader = policies] { return reloader->current(); };
    admission::InventorySource inventory;
    if (cluster != nullptr) {
      inventory = [cluster = cluster]() -> std::shared_ptr<const engine::Inventory> {
        cache::CacheSnapshotPtr snapshot = cluster->fresh_snapshot();
        if (snapshot == nullptr) {
          return nullptr;
        }
        return {snapshot, &snapshot->inventory};  // shares the snapshot's lifetime
      };
    }
    // No body limit here: the HTTP reader answers 413 for larger bodies (refuse()).
    return with_request_log(
        name, with_metrics(metrics, name,
                           admission::make_review_endpoint(std::move(source),
                                                           {mode, options.failure_mode},
                                                           std::move(inventory), std::move(lane))));
  }

  static HttpResponse json_error(int status, const std::string& message) {
    HttpResponse response;
    response.status = status;
    response.content_type = kJson;
    response.body = admission::error_body_json(status, message);
    return response;
  }

  // The webhook port's routes. Runs on an event-loop thread; large reviews are decided on the pool.
  HandlerResult route(HttpRequest& request, Responder responder) const {
    const bool is_mutate = request.path == "/mutate";
    if (is_mutate || request.path == "/validate") {
      if (request.method != "POST") {
        HttpResponse response = json_error(405, request.method + " is not allowed; use POST");
        response.headers.emplace_back("Allow", "POST");
        return response;
      }
      return review(is_mutate ? mutate : validate, request, std::move(responder));
    }
    if (request.path == "/healthz" || request.path == "/readyz") {
      return health_route(request);
    }
    return json_error(404, "no route for " + request.method + " " + request.path);
  }

  [[nodiscard]] HttpResponse health_route(const HttpRequest& request) const {
    if (request.method != "GET" && request.method != "HEAD") {
      HttpResponse response = json_error(405, request.method + " is not allowed; use GET");
      response.headers.emplace_back("Allow", "GET, HEAD");
      return response;
    }
    return health(request.path);
  }

  // The metrics port's routes: plain HTTP for Prometheus and kubelet probes.
  HandlerResult metrics_route(HttpRequest& request) const {
    if (request.path == "/healthz" || request.path == "/readyz") {
      return health_route(request);
    }
    if (request.path == "/metrics") {
      if (request.method != "GET" && request.method != "HEAD") {
        HttpResponse response = json_error(405, request.method + " is not allowed; use GET");
        response.headers.emplace_back("Allow", "GET, HEAD");
        return response;
      }
      HttpResponse response;
      response.content_type = "text/plain; version=0.0.4; charset=utf-8";
      response.body = metrics->render();
      for (const auto& render : hooks.metrics) {
        response.body += render();
      }
      if (cluster != nullptr) {
        response.body += cluster->render_metrics();
      }
      return response;
    }
    return json_error(404, "no route for " + request.method + " " + request.path);
  }

  // The review's deadline: a tenth of the API server's ?timeout= before it gives up, so that the
  // answer, decided or not, reaches it in time.
  std::shared_ptr<admission::ReviewDeadline> review_deadline(const HttpRequest& request) const {
    std::chrono::milliseconds timeout = kDefaultReviewTimeout;
    if (const std::optional<std::string> text = request.query_param("timeout")) {
      if (auto parsed = admission::parse_timeout(*text)) {
        timeout = *parsed;
      }
    }
    return std::make_shared<admission::ReviewDeadline>(
        std::chrono::steady_clock::now() + timeout * 9 / 10, options.failure_mode);
  }

  static HttpResponse review_response(admission::ReviewReply reply) {
    HttpResponse response;
    response.status = reply.http_status;
    response.content_type = kJson;
    response.body = std::move(reply.body);
    return response;
  }

  // Decides a review on this event loop when it is small and its selectors fit a small CEL
  // budget (see kMaxLoopDecisionBytes), else on the pool.
  HandlerResult review(const admission::ReviewEndpoint& endpoint, HttpRequest& request,
                       Responder responder) const {
    std::shared_ptr<admission::ReviewDeadline> deadline = review_deadline(request);
    if (request.body.size() > kMaxLoopDecisionBytes) {
      return defer_review(endpoint, request, std::move(deadline), std::move(responder));
    }
    admission::ReviewReply reply = endpoint({request.body, deadline, kLoopCelBudget});
    if (reply.outcome.needs_full_budget) {
      return defer_review(endpoint, request, std::move(deadline), std::move(responder));
    }
    metrics->record_decision_thread(Metrics::DecisionThread::kEventLoop);
    return review_response(std::move(reply));
  }

  // Hands the review to the pool; the loop answers with the failure mode if the decision is not
  // ready by the deadline, and the pool's reply then records that same answer.
  HandlerResult defer_review(const admission::ReviewEndpoint& endpoint, HttpRequest& request,
                             std::shared_ptr<admission::ReviewDeadline> deadline,
                             Responder responder) const {
    const std::size_t bytes = request.body.size() * kDecisionBytesPerBodyByte;
    if (!budget->try_take(bytes)) {
      log_event(LogLevel::kWarn, "admission request refused: too many request bytes in flight");
      return json_error(503, "the server holds too many request bytes right now; retry");
    }
    auto pending = std::make_shared<PendingReview>(std::move(request.body), budget, bytes);
    auto task = [&endpoint, pending, deadline, responder = std::move(responder)]() {
      const admission::ReviewCall call{pending->body, deadline};
      try {
        responder(review_response(endpoint(call)));
      } catch (const std::exception& error) {
        // The endpoint answers every review itself; this is a last resort (out of memory).
        responder(json_error(500, std::string("internal error: ") + error.what()));
      }
    };
    if (!pool->submit(std::move(task))) {
      log_event(LogLevel::kWarn, "admission request refused: every decision thread is busy");
      return json_error(503, "too many reviews are waiting for a decision; retry");
    }
    metrics->record_decision_thread(Metrics::DecisionThread::kPool);
    DeferredAnswer deferred;
    deferred.answer_by = deadline->at();
    deferred.fallback = [deadline]() -> std::optional<HttpResponse> {
      std::optional<admission::ReviewReply> reply = deadline->fall_back();
      if (!reply) {
        return std::nullopt;
      }
      Json fields = Json::object();
      fields["uid"] = reply->request.uid;
      log_event(LogLevel::kWarn,
                "admission decision not ready in time; answering with the failure mode", fields);
      return review_response(std::move(*reply));
    };
    return deferred;
  }

  // Requests the webhook port refuses before routing (malformed HTTP, too large, handler
  // failure): a JSON error body; an oversized review is counted like any other review.
  HttpResponse refuse(int status, const std::string& message, const std::string& path) const {
    Json fields = Json::object();
    fields["path"] = path;
    fields["status"] = status;
    fields["error"] = message;
    if (status == 413 && (path == "/mutate" || path == "/validate")) {
      admission::ReviewReply reply;
      reply.http_status = 413;
      metrics->record_review(path.substr(1), reply, 0.0);
      log_event(LogLevel::kWarn, "admission request rejected", fields);
    } else if (status == 500) {
      log_event(LogLevel::kError, "request handler failed", fields);
    } else if (status == 503) {
      log_event(LogLevel::kWarn, "request refused: server overloaded", fields);
    } else if (status != 400) {
      // 408, 413, 417, 431, 501, 505: the client's doing, not an internal failure.
      log_event(LogLevel::kInfo, "request rejected", fields);
    } else if (log_enabled(LogLevel::kDebug)) {
      log_event(LogLevel::kDebug, "malformed request rejected", fields);
    }
    return json_error(status, status == 500 ? std::string("internal error") : message);
  }

  // The metrics port refuses what it cannot read without logging it as a failure.
  static HttpResponse refuse_plain(int status, const std::string& message, const std::string&) {
    return json_error(status, status == 500 ? std::string("internal error") : message);
  }

  // Both ports on one TlsEventServer: the webhook over TLS, the metrics port in plain HTTP,
  // with the same limits and timeouts.
  Status start_ports() {
    auto context = http::TlsContext::create([reloader = certs] { return reloader->current(); },
                                            options.client_ca);
    if (!context) {
      return context.error();
    }
    http::EventServerOptions event_options;
    event_options.threads = options.threads;
    event_options.listen_backlog = options.listen_backlog;
    event_options.read_timeout = options.read_timeout;
    event_options.write_timeout = options.write_timeout;
    event_options.keep_alive_timeout = options.keep_alive_timeout;
    event_options.keep_alive_max_requests = options.keep_alive_max_requests;
    event_options.limits.max_body_bytes = options.body_limit;
    budget = std::make_shared<ByteBudget>(options.max_buffered_bytes);
    event_options.budget = budget;
    event_options.log = &log_transport_event;
    // Decisions on the pool are CPU-bound: more threads than CPUs would only queue on them.
    const std::size_t pool_threads = options.threads > 0 ? options.threads : http::usable_cpus();
    // One lane for both endpoints: requesters over their share may take at most half the
    // decision threads for feasibility.
    std::shared_ptr<admission::FeasibilityLane> lane;
    if (cluster != nullptr) {
      admission::FeasibilityLaneOptions lane_options = options.feasibility;
      lane_options.max_concurrent = std::max<std::size_t>(1, pool_threads / 2);
      lane = std::make_shared<admission::FeasibilityLane>(lane_options);
    }
    mutate = make_endpoint("mutate", admission::Mode::kMutate, lane);
    validate = make_endpoint("validate", admission::Mode::kValidate, lane);

    std::vector<http::EventEndpoint> endpoints(2);
    endpoints[0].name = "webhook";
    endpoints[0].listen = options.listen;
    endpoints[0].context = std::move(*context);
    endpoints[0].handler = [this](HttpRequest& request, Responder responder) {
      return route(request, std::move(responder));
    };
    endpoints[0].on_error = [this](int status, const std::string& message,
                                   const std::string& path) {
      return refuse(status, message, path);
    };
    endpoints[0].max_connections = options.max_connections;
    endpoints[0].max_connections_per_address = options.max_connections_per_address;
    endpoints[1].name = "metrics";
    endpoints[1].listen = options.metrics_listen;
    endpoints[1].handler = [this](HttpRequest& request, Responder) {
      return metrics_route(request);
    };
    endpoints[1].on_error = &Impl::refuse_plain;
    endpoints[1].max_connections = options.metrics_max_connections;
    // Kubelet probes and a scraper, each from its own address: one address may not take them all.
    endpoints[1].max_connections_per_address =
        std::max<std::size_t>(1, options.metrics_max_connections / 2);

    pool = std::make_unique<DecisionPool>(pool_threads, kMaxQueuedDecisions);
    https = std::make_unique<http::TlsEventServer>(event_options, std::move(endpoints));
    if (Status status = https->bind(); !status) {
      return status;
    }
    decision_threads = pool_threads;
    return https->start();
  }

  void poll_once() {
    const ReloadReport cert_report = certs->poll();
    if (cert_report.result == ReloadResult::kReloaded) {
      metrics->record_certificate_reload(true);
      const http::KeyPairPtr pair = certs->current();
      metrics->set_certificate_not_after(pair->not_after());
      Json fields = Json::object();
      fields["cert"] = options.tls_cert;
      fields["not_after"] = pair->not_after();
      log_event(LogLevel::kInfo, "serving certificate reloaded", fields);
    } else if (cert_report.result == ReloadResult::kFailed) {
      metrics->record_certificate_reload(false);
      Json fields = Json::object();
      fields["cert"] = options.tls_cert;
      fields["error"] = cert_report.error.to_string();
      log_event(LogLevel::kError, "serving certificate reload failed; keeping the previous one",
                fields);
    }
    const ReloadReport policy_report = policies->poll();
    if (policy_report.result == ReloadResult::kReloaded) {
      metrics->record_policy_reload(true);
      Json fields = Json::object();
      fields["policies"] = policies->current()->policies().size();
      log_event(LogLevel::kInfo, "policies reloaded", fields);
    } else if (policy_report.result == ReloadResult::kFailed) {
      metrics->record_policy_reload(false);
      Json fields = Json::object();
      fields["error"] = policy_report.error.to_string();
      log_event(LogLevel::kError, "policy reload failed; keeping the last good policies", fields);
    }
  }

};

HttpsServer::HttpsServer(ServerOptions options, std::shared_ptr<CertReloader> certs,
                         std::shared_ptr<PolicyReloader> policies, std::shared_ptr<Metrics> metrics,
                         cache::ClusterCachePtr cluster, ServerHooks hooks)
    : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  impl_->certs = std::move(certs);
  impl_->policies = std::move(policies);
  impl_->metrics = std::move(metrics);
  impl_->cluster = std::move(cluster);
  impl_->hooks = std::move(hooks);
}

HttpsServer::~HttpsServer() {
  shutdown();  // whatever the event loops still hold is closed by their destructor
  if (impl_->pool) {
    impl_->pool->stop();
  }
}

Status HttpsServer::start() {
  Impl& impl = *impl_;
  // A peer that resets a TLS connection must not kill the process with SIGPIPE (SSL_write
  // writes with write(2), not send(MSG_NOSIGNAL)).
  std::signal(SIGPIPE, SIG_IGN);
  if (const http::KeyPairPtr pair = impl.certs->current(); pair != nullptr) {
    impl.metrics->set_certificate_not_after(pair->not_after());
  }
  if (Status status = impl.start_ports(); !status) {
    return status;
  }
  // The files were read just now: the first turn polls only when reload() asked for it.
  impl.watcher.start([&impl, first = true](bool poked, std::stop_token) mutable {
    if (!std::exchange(first, false) || poked) {
      impl.poll_once();
    }
    return std::chrono::nanoseconds(impl.options.reload_interval);
  });
  impl.started = true;

  Json fields = Json::object();
  fields["listen"] = impl.options.listen.host + ":" + std::to_string(impl.https->port());
  fields["metrics_listen"] =
      impl.options.metrics_listen.host + ":" + std::to_string(impl.https->port(1));
  fields["max_connections"] = impl.options.max_connections;
  fields["failure_mode"] = admission::failure_mode_name(impl.options.failure_mode);
  fields["policies"] = impl.policies->current()->policies().size();
  fields["client_ca"] = !impl.options.client_ca.empty();
  fields["event_loops"] = impl.https->event_loops();
  fields["decision_threads"] = impl.decision_threads;
  log_event(LogLevel::kInfo, "serving", fields);
  return Ok{};
}

void HttpsServer::reload() { impl_->watcher.poke(); }

int HttpsServer::port() const { return impl_->https ? impl_->https->port() : 0; }

int HttpsServer::metrics_port() const { return impl_->https ? impl_->https->port(1) : 0; }

std::size_t HttpsServer::buffered_bytes() const {
  return impl_->budget ? impl_->budget->used() : 0;
}

bool HttpsServer::ready() const { return impl_->started && impl_->ready(); }

bool HttpsServer::shutdown() {
  Impl& impl = *impl_;
  std::lock_guard lock(impl.shutdown_mutex);
  if (impl.shut_down || !impl.started) {
    return true;
  }
  impl.shut_down = true;
  impl.shutting_down = true;
  log_event(LogLevel::kInfo, "shutting down: not ready, draining");
  if (impl.options.shutdown_delay.count() > 0) {
    std::this_thread::sleep_for(impl.options.shutdown_delay);
  }
  const auto deadline = std::chrono::steady_clock::now() + impl.options.shutdown_grace;
  const bool drained = impl.https->drain(deadline);

  impl.watcher.stop();
  Json fields = Json::object();
  fields["drained"] = drained;
  log_event(drained ? LogLevel::kInfo : LogLevel::kWarn, "shut down", fields);
  return drained;
}

}  // namespace topoguard::server
