// The long-running parts of `topoguard serve`, each a runtime::Component that serve_command.cpp
// lists for a runtime::Manager: the cluster cache, self-managed TLS, the background report writer
// and the webhook server (both ports, the decision pool, the certificate and policy watcher).
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "topoguard/cache/cluster_cache.h"
#include "topoguard/common/result.h"
#include "topoguard/kube/api_client.h"
#include "topoguard/kube/client_config.h"
#include "topoguard/reports/report_sync.h"
#include "topoguard/runtime/component.h"
#include "topoguard/runtime/manager.h"
#include "topoguard/selftls/tls_controller.h"
#include "topoguard/server/cert_reloader.h"
#include "topoguard/server/https_server.h"
#include "topoguard/server/metrics.h"
#include "topoguard/server/policy_reloader.h"

namespace topoguard::cli {

// The client of the cluster cache, self-managed TLS and reports (one per process, shared).
[[nodiscard]] Result<kube::ApiClientPtr> make_api_client(const kube::LoadOptions& options);

// The watch cache of the cluster; its readiness and metrics are the webhook server's, which
// judges with it.
class ClusterCacheComponent final : public runtime::Component {
 public:
  ClusterCacheComponent(kube::ApiClientPtr client, std::chrono::seconds stale_after);
  [[nodiscard]] const cache::ClusterCachePtr& cache() const { return cache_; }

  // runtime::Component
  [[nodiscard]] std::string name() const override { return "cluster cache"; }
  [[nodiscard]] Status start() override;
  bool stop(std::chrono::steady_clock::time_point deadline) override;

 private:
  cache::ClusterCachePtr cache_;
};

// Keeps the Secret, the caBundles and the served certificate in step (writes under its Lease).
class SelfManagedTlsComponent final : public runtime::Component {
 public:
  SelfManagedTlsComponent(kube::ApiClientPtr client, selftls::TlsControllerOptions options,
                          std::shared_ptr<server::CertReloader> certs,
                          std::shared_ptr<server::Metrics> metrics);

  // runtime::Component
  [[nodiscard]] std::string name() const override { return "self-managed TLS"; }
  [[nodiscard]] Status start() override;
  bool stop(std::chrono::steady_clock::time_point deadline) override;
  [[nodiscard]] std::string not_ready_reason() const override;
  [[nodiscard]] std::string metrics() const override;

 private:
  std::unique_ptr<selftls::TlsController> controller_;
};

// Writes the background reports (under its Lease).
class ReportWriterComponent final : public runtime::Component {
 public:
  ReportWriterComponent(kube::ApiClientPtr client, cache::ClusterCachePtr cluster,
                        std::shared_ptr<server::PolicyReloader> policies,
                        reports::ReportSyncOptions options);

  // runtime::Component
  [[nodiscard]] std::string name() const override { return "report writer"; }
  [[nodiscard]] Status start() override;
  bool stop(std::chrono::steady_clock::time_point deadline) override;
  [[nodiscard]] std::string metrics() const override;

 private:
  std::unique_ptr<reports::ReportSyncer> syncer_;
};

// Both ports. /readyz and /metrics also answer for every component of `manager`.
class WebhookServerComponent final : public runtime::Component {
 public:
  WebhookServerComponent(server::ServerOptions options,
                         std::shared_ptr<server::CertReloader> certs,
                         std::shared_ptr<server::PolicyReloader> policies,
                         std::shared_ptr<server::Metrics> metrics, cache::ClusterCachePtr cluster,
                         const runtime::Manager& manager);
  // Checks the certificate and policy files now (SIGHUP).
  void reload() { server_.reload(); }

  // runtime::Component
  [[nodiscard]] std::string name() const override { return "webhook server"; }
  [[nodiscard]] Status start() override { return server_.start(); }
  // Drains by its own shutdown delay and grace, which the manager's deadline covers.
  bool stop(std::chrono::steady_clock::time_point deadline) override;

 private:
  server::HttpsServer server_;
};

}  // namespace topoguard::cli
