#include "serve_components.h"

#include <functional>
#include <utility>

#include "topoguard/common/json.h"
#include "topoguard/http/key_pair.h"
#include "topoguard/kube/clock.h"
#include "topoguard/server/json_log.h"

namespace topoguard::cli {
namespace {

void log_cache_event(const cache::CacheEvent& event) {
  Json fields = Json::object();
  if (!event.resource.empty()) {
    fields["resource"] = event.resource;
  }
  switch (event.kind) {
    case cache::CacheEvent::Kind::kResolved:
    case cache::CacheEvent::Kind::kSynced:
    case cache::CacheEvent::Kind::kNotServed:
      fields["detail"] = event.message;
      server::log_event(server::LogLevel::kInfo, "cluster cache", fields);
      return;
    case cache::CacheEvent::Kind::kReflectorError:
      fields["kind"] = kube::reflector_error_kind_name(event.error_kind);
      [[fallthrough]];
    case cache::CacheEvent::Kind::kResolveError:
    case cache::CacheEvent::Kind::kSnapshotErrors:
      fields["error"] = event.message;
      server::log_event(server::LogLevel::kWarn, "cluster cache", fields);
      return;
  }
}

// A component's events in the server's log, failures as warnings.
std::function<void(bool, const std::string&)> event_log(std::string prefix) {
  return [prefix = std::move(prefix)](bool failure, const std::string& message) {
    server::log_event(failure ? server::LogLevel::kWarn : server::LogLevel::kInfo,
                      prefix + message);
  };
}

}  // namespace

Result<kube::ApiClientPtr> make_api_client(const kube::LoadOptions& options) {
  Result<kube::ClientConfig> config = kube::load_client_config(options);
  if (!config) {
    return config.error();
  }
  kube::ApiClientOptions client_options;
  client_options.user_agent = std::string("topoguard/") + TOPOGUARD_VERSION;
  // controller-runtime's defaults for its caches: seven reflectors reconnecting at client-go's
  // 5 QPS would take seconds.
  client_options.rate_limit = {.qps = 20.0, .burst = 30};
  return kube::ApiClient::create(std::move(*config), client_options);
}

ClusterCacheComponent::ClusterCacheComponent(kube::ApiClientPtr client,
                                             std::chrono::seconds stale_after) {
  cache::ClusterCacheOptions cache_options;
  cache_options.stale_after = stale_after;
  cache_ = std::make_shared<cache::ClusterCache>(
      std::move(client), cache::discover_cluster_state(log_cache_event), cache_options,
      log_cache_event);
}

Status ClusterCacheComponent::start() {
  cache_->start();
  return Ok{};
}

bool ClusterCacheComponent::stop(std::chrono::steady_clock::time_point /*deadline*/) {
  cache_->stop();  // cancels the requests in flight: nothing waits long
  return true;
}

SelfManagedTlsComponent::SelfManagedTlsComponent(kube::ApiClientPtr client,
                                                 selftls::TlsControllerOptions options,
                                                 std::shared_ptr<server::CertReloader> certs,
                                                 std::shared_ptr<server::Metrics> metrics) {
  auto serve_pair = [certs, metrics](const pki::PemPair& serving) {
    Result<http::KeyPairPtr> pair = http::parse_key_pair(serving.cert_pem, serving.key_pem);
    if (!pair) {
      Json fields = Json::object();
      fields["error"] = pair.error().to_string();
      server::log_event(server::LogLevel::kError,
                        "the Secret's serving certificate cannot be used; keeping the previous one",
                        fields);
      return false;
    }
    certs->set(*pair);
    metrics->record_certificate_reload(true);
    metrics->set_certificate_not_after((*pair)->not_after());
    Json fields = Json::object();
    fields["not_after"] = (*pair)->not_after();
    server::log_event(server::LogLevel::kInfo, "serving the certificate from the Secret", fields);
    return true;
  };
  controller_ = std::make_unique<selftls::TlsController>(
      std::move(client), std::move(options), kube::real_clock(), std::move(serve_pair),
      event_log("self-managed TLS: "));
}

Status SelfManagedTlsComponent::start() {
  controller_->start();
  return Ok{};
}

bool SelfManagedTlsComponent::stop(std::chrono::steady_clock::time_point deadline) {
  return controller_->stop(deadline);  // gives the Lease up for the next writer
}

std::string SelfManagedTlsComponent::not_ready_reason() const {
  return controller_->status().not_ready_reason();
}

std::string SelfManagedTlsComponent::metrics() const {
  return selftls::render_tls_metrics(controller_->status());
}

ReportWriterComponent::ReportWriterComponent(kube::ApiClientPtr client,
                                             cache::ClusterCachePtr cluster,
                                             std::shared_ptr<server::PolicyReloader> policies,
                                             reports::ReportSyncOptions sync_options) {
  if (sync_options.lease_namespace.empty()) {
    // In a pod, its own namespace; else the kubeconfig context's.
    sync_options.lease_namespace =
        client->config().namespace_.empty() ? "default" : client->config().namespace_;
  }
  syncer_ = std::make_unique<reports::ReportSyncer>(
      std::move(client), std::move(cluster), [policies] { return policies->current(); },
      std::move(sync_options), kube::real_clock(), event_log(""));
}

Status ReportWriterComponent::start() {
  syncer_->start();
  return Ok{};
}

bool ReportWriterComponent::stop(std::chrono::steady_clock::time_point deadline) {
  return syncer_->stop(deadline);  // gives the Lease up for the next writer
}

std::string ReportWriterComponent::metrics() const {
  return reports::render_report_metrics(syncer_->status());
}

namespace {

server::ServerHooks manager_hooks(const runtime::Manager& manager) {
  server::ServerHooks hooks;
  hooks.readiness.emplace_back([&manager] { return manager.not_ready_reason(); });
  hooks.metrics.emplace_back([&manager] { return manager.metrics(); });
  return hooks;
}

}  // namespace

WebhookServerComponent::WebhookServerComponent(server::ServerOptions options,
                                               std::shared_ptr<server::CertReloader> certs,
                                               std::shared_ptr<server::PolicyReloader> policies,
                                               std::shared_ptr<server::Metrics> metrics,
                                               cache::ClusterCachePtr cluster,
                                               const runtime::Manager& manager)
    : server_(std::move(options), std::move(certs), std::move(policies), std::move(metrics),
              std::move(cluster), manager_hooks(manager)) {}

bool WebhookServerComponent::stop(std::chrono::steady_clock::time_point /*deadline*/) {
  return server_.shutdown();
}

}  // namespace topoguard::cli
