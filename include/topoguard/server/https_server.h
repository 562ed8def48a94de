// The webhook server: POST /mutate, POST /validate, GET /healthz, GET /readyz over TLS on the
// main port; /healthz, /readyz and /metrics over plain HTTP on the metrics port; a watcher
// thread that polls certificate and policy files. Both ports run on one http::TlsEventServer
// (epoll event loops, one per core) with the same limits; admission decisions run on a
// DecisionPool so the loops only move bytes. start() returns once both ports accept; shutdown() drains.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "topoguard/cache/cluster_cache.h"
#include "topoguard/common/result.h"
#include "topoguard/server/cert_reloader.h"
#include "topoguard/server/metrics.h"
#include "topoguard/server/policy_reloader.h"
#include "topoguard/server/server_options.h"

namespace topoguard::server {

// What other parts of the process add to the server (self-managed TLS, background reports).
struct ServerHooks {
  // Each says why the process is not ready, or "" when its part is.
  std::vector<std::function<std::string()>> readiness;
  // Each gives metrics in the Prometheus text format, appended to /metrics.
  std::vector<std::function<std::string()>> metrics;
};

class HttpsServer {
 public:
  // With `cluster`, reviews see its fresh snapshot (claims, templates, DeviceClasses, devices),
  // the server is not ready before its first sync, and /metrics shows its state.
  HttpsServer(ServerOptions options, std::shared_ptr<CertReloader> certs,
              std::shared_ptr<PolicyReloader> policies, std::shared_ptr<Metrics> metrics,
              cache::ClusterCachePtr cluster = nullptr, ServerHooks hooks = {});
  ~HttpsServer();  // shuts down if still running
  HttpsServer(const HttpsServer&) = delete;
  HttpsServer& operator=(const HttpsServer&) = delete;

  // Binds both ports and starts serving on background threads.
  [[nodiscard]] Status start();
  [[nodiscard]] int port() const;          // the bound main port (useful with port 0)
  [[nodiscard]] int metrics_port() const;  // the bound metrics port
  // Request bytes held now (bodies being read or decided; not headers, which are parsed as they
  // come): what the buffered-bytes budget counts.
  [[nodiscard]] std::size_t buffered_bytes() const;

  // Checks the certificate and policy files now instead of at the next poll (SIGHUP).
  void reload();

  // Policies loaded, a certificate inside its validity period, the cluster cache (if any)
  // synced, every readiness hook content, not shutting down.
  [[nodiscard]] bool ready() const;

  // Readiness goes false, then after options.shutdown_delay new connections are refused and
  // in-flight requests finish. Returns false when connections were still open after
  // options.shutdown_grace (the caller should then exit anyway). Idempotent.
  bool shutdown();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace topoguard::server
