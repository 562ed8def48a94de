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

// A listener thread plus the promise that tells when httplib's listen loop (and with it the
// drain of every connection) has finished.
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

  std::unique_ptr<httplib::SSLServer> https;
  std::unique_ptr<httplib::Server> plain;
  Listener https_listener;
  Listener plain_listener;

  std::atomic<bool> started{false};
  std::atomic<bool> shutting_down{false};
  bool shut_down = false;  // guarded by shutdown_mutex
  std::mutex shutdown_mutex;

  std::thread watcher;
  std::mutex watcher_mutex;
  std::condition_variable watcher_wake;
  bool watcher_stop = false;  // guarded by watcher_mutex

  Status tls_status = Ok{};

  [[nodiscard]] bool ready() const {
    return !shutting_down && policies->snapshot() != nullptr &&
           certs->current()->valid_at(now_seconds());
  }

  void add_health_routes(httplib::Server& server) {
    server.Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("ok\n", "text/plain");
    });
    server.Get("/readyz", [this](const httplib::Request&, httplib::Response& res) {
      if (shutting_down) {
        res.status = 503;
        res.set_content("shutting down\n", "text/plain");
      } else if (policies->snapshot() == nullptr) {
        res.status = 503;
        res.set_content("no policy loaded\n", "text/plain");
      } else if (!certs->current()->valid_at(now_seconds())) {
        res.status = 503;
        res.set_content("serving certificate is outside its validity period\n", "text/plain");
      } else {
        res.set_content("ok\n", "text/plain");
      }
    });
  }

  void add_review_route(httplib::Server& server, const std::string& name, admission::Mode mode) {
    admission::PolicySource source = [reloader = policies] { return reloader->snapshot(); };
    admission::ReviewEndpoint endpoint = with_request_log(
        name, with_metrics(metrics, name,
                           admission::with_body_limit(
                               options.body_limit,
                               admission::make_review_endpoint(
                                   std::move(source), {mode, options.failure_mode}))));
    server.Post("/" + name, [endpoint = std::move(endpoint)](const httplib::Request& req,
                                                             httplib::Response& res) {
      admission::ReviewCall call;
      call.body = req.body;
      if (req.has_param("timeout")) {
        if (auto timeout = admission::parse_timeout(req.get_param_value("timeout"))) {
          call.deadline = std::chrono::steady_clock::now() + *timeout;
        }
      }
      admission::ReviewReply reply = endpoint(call);
      res.status = reply.http_status;
      res.set_content(std::move(reply.body), kJson);
    });
  }

  // Shared by both servers: JSON bodies for errors httplib produces itself (404, 405, 413 from
  // the payload limit) and for exceptions, which must never take the process down.
  void add_error_handling(httplib::Server& server) {
    httplib::Server::HandlerWithResponse on_error = [this](const httplib::Request& req,
                                                           httplib::Response& res) {
      if (!res.body.empty()) {
        return httplib::Server::HandlerResponse::Unhandled;  // our handler wrote it already
      }
      std::string message = "request failed";
      if (res.status == 413) {
        message = "body exceeds the limit of " + std::to_string(options.body_limit) + " bytes";
        if (req.path == "/mutate" || req.path == "/validate") {
          admission::ReviewReply reply;
          reply.http_status = 413;
          metrics->record_review(req.path.substr(1), reply, 0.0);
        }
        Json fields = Json::object();
        fields["path"] = req.path;
        fields["status"] = 413;
        log_event(LogLevel::kWarn, "admission request rejected", fields);
      } else if (res.status == 404) {
        message = "no route for " + req.method + " " + req.path;
      }
      res.set_content(plain_error_body(res.status, message), kJson);
      return httplib::Server::HandlerResponse::Handled;
    };
    server.set_error_handler(std::move(on_error));
    server.set_exception_handler(
        [](const httplib::Request& req, httplib::Response& res, std::exception_ptr error) {
          std::string what = "unknown exception";
          try {
            if (error) {
              std::rethrow_exception(error);
            }
          } catch (const std::exception& exception) {
            what = exception.what();
          } catch (...) {
          }
          Json fields = Json::object();
          fields["path"] = req.path;
          fields["error"] = what;
          log_event(LogLevel::kError, "request handler failed", fields);
          res.status = 500;
          res.set_content(plain_error_body(500, "internal error"), kJson);
        });
  }

  void configure(httplib::Server& server, std::size_t threads, Listener& listener) {
    server.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
    server.set_tcp_nodelay(true);
    server.set_keep_alive_max_count(options.keep_alive_max_requests);
    server.set_keep_alive_timeout(options.keep_alive_timeout.count());
    server.set_read_timeout(options.read_timeout.count(), 0);
    server.set_write_timeout(options.write_timeout.count(), 0);
    server.set_payload_max_length(options.body_limit);
    // Replaces httplib's default options (SO_REUSEADDR + SO_REUSEPORT): no REUSEPORT, so a
    // second instance cannot silently share the port. Remembers the listening socket so its
    // backlog can be raised after bind (httplib compiles in a backlog of 5).
    server.set_socket_options([&listener](socket_t sock) {
      int yes = 1;
      ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
      ::setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof(yes));
      listener.fd = sock;
    });
    add_error_handling(server);
    // While draining, every response asks the client to close the connection, so keep-alive
    // connections end after their in-flight request instead of taking new ones until the grace
    // period runs out (httplib 0.11.4 closes after a response only when the request asked to).
    server.set_post_routing_handler([this](const httplib::Request&, httplib::Response& res) {
      if (shutting_down) {
        res.set_header("Connection", "close");
      }
    });
  }

  Status bind(httplib::Server& server, const HostPort& address, Listener& listener,
              const char* what) {
    if (!server.bind_to_port(address.host, address.port)) {
      Error error;
      error.code = ErrorCode::kIo;
      error.message = std::string("cannot listen on ") + address.host + ":" +
                      std::to_string(address.port) + " (" + what + ")";
      return error;
    }
    const int fd = listener.fd;
    // Linux applies a second listen() to a listening socket as a new backlog.
    ::listen(fd, options.listen_backlog);
    sockaddr_storage bound{};
    socklen_t length = sizeof(bound);
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length) == 0) {
      if (bound.ss_family == AF_INET) {
        listener.port = ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
      } else if (bound.ss_family == AF_INET6) {
        listener.port = ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port);
      }
    }
    return Ok{};
  }

  static void run(httplib::Server& server, Listener& listener) {
    std::promise<void> finished;
    listener.done = finished.get_future();
    listener.thread = std::thread([&server, finished = std::move(finished)]() mutable {
      server.listen_after_bind();
      finished.set_value();
    });
    // httplib's stop() is a no-op until the listen loop runs; wait so shutdown() cannot race.
    for (int i = 0; i < 5000 && !server.is_running(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
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

  static bool join_within(Listener& listener, std::chrono::steady_clock::time_point deadline) {
    if (!listener.thread.joinable()) {
      return true;
    }
    if (listener.done.wait_until(deadline) != std::future_status::ready) {
      return false;
    }
    listener.thread.join();
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
    // Connections outlived the grace period; their threads reference the servers, so they
    // must not be destroyed under them.
    if (impl_->https_listener.thread.joinable()) {
      impl_->https_listener.thread.join();
    }
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

  impl.https = std::make_unique<httplib::SSLServer>([&impl](SSL_CTX& ctx) {
    impl.tls_status = configure_tls_context(ctx, *impl.certs, impl.options.client_ca);
    return impl.tls_status.has_value();
  });
  if (!impl.tls_status) {
    return impl.tls_status.error();
  }
  if (!impl.https->is_valid()) {
    Error error;
    error.code = ErrorCode::kInternal;
    error.message = "cannot create the TLS server context";
    return error;
  }
  impl.plain = std::make_unique<httplib::Server>();

  impl.configure(*impl.https, impl.options.threads, impl.https_listener);
  impl.add_review_route(*impl.https, "mutate", admission::Mode::kMutate);
  impl.add_review_route(*impl.https, "validate", admission::Mode::kValidate);
  impl.add_health_routes(*impl.https);

  impl.configure(*impl.plain, kMetricsThreads, impl.plain_listener);
  impl.add_health_routes(*impl.plain);
  impl.plain->Get("/metrics", [&impl](const httplib::Request&, httplib::Response& res) {
    res.set_content(impl.metrics->render(), "text/plain; version=0.0.4; charset=utf-8");
  });

  if (auto status = impl.bind(*impl.https, impl.options.listen, impl.https_listener, "webhook");
      !status) {
    return status;
  }
  if (auto status =
          impl.bind(*impl.plain, impl.options.metrics_listen, impl.plain_listener, "metrics");
      !status) {
    return status;
  }
  Impl::run(*impl.https, impl.https_listener);
  Impl::run(*impl.plain, impl.plain_listener);
  impl.watcher = std::thread([&impl] { impl.watch(); });
  impl.started = true;

  Json fields = Json::object();
  fields["listen"] = impl.options.listen.host + ":" + std::to_string(impl.https_listener.port);
  fields["metrics_listen"] =
      impl.options.metrics_listen.host + ":" + std::to_string(impl.plain_listener.port);
  fields["failure_mode"] = admission::failure_mode_name(impl.options.failure_mode);
  fields["policies"] = impl.policies->snapshot()->policies().size();
  fields["client_ca"] = !impl.options.client_ca.empty();
  log_event(LogLevel::kInfo, "serving", fields);
  return Ok{};
}

int HttpsServer::port() const { return impl_->https_listener.port; }

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
  // Not httplib's stop(): it sets svr_sock_ to INVALID_SOCKET, and a worker that has accepted a
  // connection (TLS handshake done, request maybe half sent) but not yet entered httplib's
  // keep-alive loop, whose condition is `svr_sock != INVALID_SOCKET && ...`, then closes it
  // without reading the request. shutdown(2) on the listening socket instead makes the blocked
  // accept() fail: the accept loop ends (httplib closes the socket itself, leaving svr_sock_ as
  // it was) and new connections are refused, while every accepted connection keeps being served.
  // Responses now carry "Connection: close" (see configure()), so clients close keep-alive
  // connections after their in-flight request; idle ones end at the keep-alive timeout, which is
  // below the grace period. httplib's pool joins its workers before listen_after_bind() returns.
  // stop() must not be called after this: it would close the same descriptor number again.
  ::shutdown(impl.https_listener.fd, SHUT_RDWR);
  const bool drained = Impl::join_within(impl.https_listener, deadline);

  {
    std::lock_guard watcher_lock(impl.watcher_mutex);
    impl.watcher_stop = true;
  }
  impl.watcher_wake.notify_all();
  if (impl.watcher.joinable()) {
    impl.watcher.join();
  }
  impl.plain->stop();
  const bool metrics_drained = Impl::join_within(impl.plain_listener, deadline);

  Json fields = Json::object();
  fields["drained"] = drained && metrics_drained;
  log_event(drained ? LogLevel::kInfo : LogLevel::kWarn, "shut down", fields);
  return drained && metrics_drained;
}

}  // namespace topoguard::server
