#include "topoguard/server/https_server.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <ctime>
#include <exception>
#include <future>
#include <mutex>
#include <string>
#include <thread>

#include <httplib.h>

#include "topoguard/admission/review_endpoint.h"
#include "topoguard/server/json_log.h"
#include "topoguard/server/review_decorators.h"
#include "topoguard/server/tls_context.h"
#include "topoguard/server/tls_event_server.h"

namespace topoguard::server {
namespace {

constexpr const char* kJson = "application/json";
constexpr std::size_t kMetricsThreads = 4;

std::int64_t now_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string status_error_code(int status) {
  switch (status) {
    case 400:
      return "bad_request";
    case 404:
      return "not_found";
    case 405:
      return "method_not_allowed";
    case 413:
      return "too_large";
    case 431:
      return "headers_too_large";
    case 500:
      return "internal";
    default:
      return "http_" + std::to_string(status);
  }
}

std::string plain_error_body(int status, const std::string& message) {
  Json body = Json::object();
  body["code"] = status;
  body["error"] = status_error_code(status);
  body["message"] = message;
  return body.dump();
}

// The metrics port's listener thread plus the promise that tells when httplib's listen loop
// (and with it the drain of every connection) has finished.
struct Listener {
  std::thread thread;
  std::future<void> done;
  std::atomic<int> fd{-1};
  int port = 0;
};

}  // namespace

struct HttpsServer::Impl {
  ServerOptions options;
  std::shared_ptr<CertReloader> certs;
  std::shared_ptr<PolicyReloader> policies;
  std::shared_ptr<Metrics> metrics;

  admission::ReviewEndpoint mutate;
  admission::ReviewEndpoint validate;
  std::unique_ptr<TlsEventServer> https;
  std::unique_ptr<httplib::Server> plain;
  Listener plain_listener;

  std::atomic<bool> started{false};
  std::atomic<bool> shutting_down{false};
  bool shut_down = false;  // guarded by shutdown_mutex
  std::mutex shutdown_mutex;

  std::thread watcher;
  std::mutex watcher_mutex;
  std::condition_variable watcher_wake;
  bool watcher_stop = false;  // guarded by watcher_mutex

  [[nodiscard]] bool ready() const {
    return !shutting_down && policies->snapshot() != nullptr &&
           certs->current()->valid_at(now_seconds());
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
    } else if (policies->snapshot() == nullptr) {
      response.body = "no policy loaded\n";
    } else if (!certs->current()->valid_at(now_seconds())) {
      response.body = "serving certificate is outside its validity period\n";
    } else {
      response.status = 200;
    }
    return response;
  }

  admission::ReviewEndpoint make_endpoint(const std::string& name, admission::Mode mode) {
    admission::PolicySource source = [reloader = policies] { return reloader->snapshot(); };
    return with_request_log(
        name, with_metrics(metrics, name,
                           admission::with_body_limit(
                               options.body_limit,
                               admission::make_review_endpoint(
                                   std::move(source), {mode, options.failure_mode}))));
  }

  static HttpResponse json_error(int status, const std::string& message) {
    HttpResponse response;
    response.status = status;
    response.content_type = kJson;
    response.body = plain_error_body(status, message);
    return response;
  }

  // The webhook port's routes. Runs on an event-loop thread.
  HttpResponse route(HttpRequest& request) const {
    const bool is_mutate = request.path == "/mutate";
    if (is_mutate || request.path == "/validate") {
      if (request.method != "POST") {
        HttpResponse response = json_error(405, request.method + " is not allowed; use POST");
        response.headers.emplace_back("Allow", "POST");
        return response;
      }
      admission::ReviewCall call;
      call.body = request.body;
      if (const std::optional<std::string> timeout = request.query_param("timeout")) {
        if (auto limit = admission::parse_timeout(*timeout)) {
          call.deadline = std::chrono::steady_clock::now() + *limit;
        }
      }
      admission::ReviewReply reply = (is_mutate ? mutate : validate)(call);
      HttpResponse response;
      response.status = reply.http_status;
      response.content_type = kJson;
      response.body = std::move(reply.body);
      return response;
    }
    if (request.path == "/healthz" || request.path == "/readyz") {
      if (request.method != "GET" && request.method != "HEAD") {
        HttpResponse response = json_error(405, request.method + " is not allowed; use GET");
        response.headers.emplace_back("Allow", "GET, HEAD");
        return response;
      }
      return health(request.path);
    }
    return json_error(404, "no route for " + request.method + " " + request.path);
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
    } else if (status >= 500) {
      log_event(LogLevel::kError, "request handler failed", fields);
    } else if (log_enabled(LogLevel::kDebug)) {
      log_event(LogLevel::kDebug, "malformed request rejected", fields);
    }
    return json_error(status, status >= 500 ? std::string("internal error") : message);
  }

  Status start_https() {
    SslCtxPtr context(SSL_CTX_new(TLS_server_method()));
    if (!context) {
      Error error;
      error.code = ErrorCode::kInternal;
      error.message = "cannot create the TLS server context";
      return error;
    }
    if (Status status = configure_tls_context(*context, *certs, options.client_ca); !status) {
      return status;
    }
    EventServerOptions event_options;
    event_options.listen = options.listen;
    event_options.threads = options.threads;
    event_options.listen_backlog = options.listen_backlog;
    event_options.read_timeout = options.read_timeout;
    event_options.write_timeout = options.write_timeout;
    event_options.keep_alive_timeout = options.keep_alive_timeout;
    event_options.keep_alive_max_requests = options.keep_alive_max_requests;
    event_options.limits.max_body_bytes = options.body_limit;
    event_options.max_buffered_bytes = options.max_buffered_bytes;
    mutate = make_endpoint("mutate", admission::Mode::kMutate);
    validate = make_endpoint("validate", admission::Mode::kValidate);
    https = std::make_unique<TlsEventServer>(
        event_options, std::move(context),
        [this](HttpRequest& request) { return route(request); },
        [this](int status, const std::string& message, const std::string& path) {
          return refuse(status, message, path);
        });
    if (Status status = https->bind(); !status) {
      return status;
    }
    return https->start();
  }

  // The metrics port: plain HTTP on cpp-httplib (Prometheus scrapes and kubelet probes).
  Status start_plain() {
    plain = std::make_unique<httplib::Server>();
    httplib::Server& server = *plain;
    server.new_task_queue = [] { return new httplib::ThreadPool(kMetricsThreads); };
    server.set_tcp_nodelay(true);
    server.set_read_timeout(options.read_timeout.count(), 0);
    server.set_write_timeout(options.write_timeout.count(), 0);
    server.set_keep_alive_timeout(options.keep_alive_timeout.count());
    // Replaces httplib's default options (SO_REUSEADDR + SO_REUSEPORT): no REUSEPORT, so a
    // second instance cannot silently share the port. Remembers the listening socket so its
    // backlog can be raised after bind (httplib compiles in a backlog of 5).
    server.set_socket_options([this](socket_t sock) {
      int yes = 1;
      ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
      ::setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof(yes));
      plain_listener.fd = sock;
    });
    server.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
      const std::string message = res.status == 404
                                      ? "no route for " + req.method + " " + req.path
                                      : std::string("request failed");
      res.set_content(plain_error_body(res.status, message), kJson);
    });
    for (const char* path : {"/healthz", "/readyz"}) {
      server.Get(path, [this](const httplib::Request& req, httplib::Response& res) {
        HttpResponse response = health(req.path);
        res.status = response.status;
        res.set_content(std::move(response.body), response.content_type.c_str());
      });
    }
    server.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
      res.set_content(metrics->render(), "text/plain; version=0.0.4; charset=utf-8");
    });

    const HostPort& address = options.metrics_listen;
    if (!server.bind_to_port(address.host, address.port)) {
      Error error;
      error.code = ErrorCode::kIo;
      error.message = "cannot listen on " + address.host + ":" + std::to_string(address.port) +
                      " (metrics)";
      return error;
    }
    const int fd = plain_listener.fd;
    // Linux applies a second listen() to a listening socket as a new backlog.
    ::listen(fd, options.listen_backlog);
    sockaddr_storage bound{};
    socklen_t length = sizeof(bound);
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length) == 0) {
      if (bound.ss_family == AF_INET) {
        plain_listener.port = ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
      } else if (bound.ss_family == AF_INET6) {
        plain_listener.port = ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port);
      }
    }
    std::promise<void> finished;
    plain_listener.done = finished.get_future();
    plain_listener.thread = std::thread([&server, finished = std::move(finished)]() mutable {
      server.listen_after_bind();
      finished.set_value();
    });
    // httplib's stop() is a no-op until the listen loop runs; wait so shutdown() cannot race.
    for (int i = 0; i < 5000 && !server.is_running(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return Ok{};
  }

  void watch() {
    std::unique_lock lock(watcher_mutex);
    while (!watcher_stop) {
      watcher_wake.wait_for(lock, options.reload_interval);
      if (watcher_stop) {
        break;
      }
      lock.unlock();
      poll_once();
      lock.lock();
    }
  }

  void poll_once() {
    const ReloadReport cert_report = certs->poll();
    if (cert_report.result == ReloadResult::kReloaded) {
      metrics->record_certificate_reload(true);
      const KeyPairPtr pair = certs->current();
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
      fields["policies"] = policies->snapshot()->policies().size();
      log_event(LogLevel::kInfo, "policies reloaded", fields);
    } else if (policy_report.result == ReloadResult::kFailed) {
      metrics->record_policy_reload(false);
      Json fields = Json::object();
      fields["error"] = policy_report.error.to_string();
      log_event(LogLevel::kError, "policy reload failed; keeping the last good policies", fields);
    }
  }

  bool join_plain_within(std::chrono::steady_clock::time_point deadline) {
    if (!plain_listener.thread.joinable()) {
      return true;
    }
    if (plain_listener.done.wait_until(deadline) != std::future_status::ready) {
      return false;
    }
    plain_listener.thread.join();
    return true;
  }
};

HttpsServer::HttpsServer(ServerOptions options, std::shared_ptr<CertReloader> certs,
                         std::shared_ptr<PolicyReloader> policies,
                         std::shared_ptr<Metrics> metrics)
    : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  impl_->certs = std::move(certs);
  impl_->policies = std::move(policies);
  impl_->metrics = std::move(metrics);
}

HttpsServer::~HttpsServer() {
  if (!shutdown()) {
    // The metrics port's connections outlived the grace period; its threads reference the
    // server, so it must not be destroyed under them. (The webhook port's destructor closes
    // whatever its event loops still hold.)
    if (impl_->plain_listener.thread.joinable()) {
      impl_->plain_listener.thread.join();
    }
  }
}

Status HttpsServer::start() {
  Impl& impl = *impl_;
  // A peer that resets a TLS connection must not kill the process with SIGPIPE (SSL_write
  // writes with write(2), not send(MSG_NOSIGNAL)).
  std::signal(SIGPIPE, SIG_IGN);
  impl.metrics->set_certificate_not_after(impl.certs->current()->not_after());
  if (Status status = impl.start_https(); !status) {
    return status;
  }
  if (Status status = impl.start_plain(); !status) {
    return status;
  }
  impl.watcher = std::thread([&impl] { impl.watch(); });
  impl.started = true;

  Json fields = Json::object();
  fields["listen"] = impl.options.listen.host + ":" + std::to_string(impl.https->port());
  fields["metrics_listen"] =
      impl.options.metrics_listen.host + ":" + std::to_string(impl.plain_listener.port);
  fields["failure_mode"] = admission::failure_mode_name(impl.options.failure_mode);
  fields["policies"] = impl.policies->snapshot()->policies().size();
  fields["client_ca"] = !impl.options.client_ca.empty();
  log_event(LogLevel::kInfo, "serving", fields);
  return Ok{};
}

int HttpsServer::port() const { return impl_->https ? impl_->https->port() : 0; }

int HttpsServer::metrics_port() const { return impl_->plain_listener.port; }

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

  {
    std::lock_guard watcher_lock(impl.watcher_mutex);
    impl.watcher_stop = true;
  }
  impl.watcher_wake.notify_all();
  if (impl.watcher.joinable()) {
    impl.watcher.join();
  }
  impl.plain->stop();
  const bool metrics_drained = impl.join_plain_within(deadline);

  Json fields = Json::object();
  fields["drained"] = drained && metrics_drained;
  log_event(drained ? LogLevel::kInfo : LogLevel::kWarn, "shut down", fields);
  return drained && metrics_drained;
}

}  // namespace topoguard::server
