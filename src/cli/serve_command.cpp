// `topoguard serve`: flags -> load certificate and policies -> start the HTTPS server -> wait for
// SIGTERM/SIGINT -> drain. The server itself lives in the server module.
#include <algorithm>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "commands.h"
#include "stop_signals.h"
#include "topoguard/cache/cluster_cache.h"
#include "topoguard/common/duration.h"
#include "topoguard/common/printable_text.h"
#include "topoguard/http/host_port.h"
#include "topoguard/http/key_pair.h"
#include "topoguard/kube/api_client.h"
#include "topoguard/kube/client_config.h"
#include "topoguard/kube/lease_lock.h"
#include "topoguard/kube/objects.h"
#include "topoguard/policy/policy_loader.h"
#include "topoguard/reports/report_sync.h"
#include "topoguard/selftls/tls_controller.h"
#include "topoguard/server/cert_reloader.h"
#include "topoguard/server/https_server.h"
#include "topoguard/server/json_log.h"
#include "topoguard/server/metrics.h"
#include "topoguard/server/policy_reloader.h"
#include "topoguard/server/server_options.h"

namespace topoguard::cli {
namespace {

// Every connection is a descriptor: a soft limit below --max-connections would refuse clients
// the caps let in. The hard limit is what the container allows.
void raise_descriptor_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &limit);
  }
}

void log_fatal(const std::string& message, const Error& error) {
  Json fields = Json::object();
  fields["error"] = error.to_string();
  server::log_event(server::LogLevel::kError, message, fields);
  std::cerr << "topoguard serve: " << message << ": " << error.to_string() << std::endl;
}

struct ServeFlags {
  server::ServerOptions options;
  std::string cluster_cache = "auto";
  kube::LoadOptions kube;
  long long cache_stale_after = 60;
  std::string listen = "0.0.0.0:8443";
  std::string metrics_listen = "0.0.0.0:9090";
  std::string failure_mode = "closed";
  std::string log_level = "info";
  long long read_timeout = 10;
  long long write_timeout = 10;
  long long keep_alive_timeout = 20;
  double reload_interval = 2.0;
  long long shutdown_delay = 0;
  long long shutdown_grace = 25;
  bool self_managed_tls = false;
  std::string tls_secret = "topoguard/topoguard-tls";
  std::string service = "topoguard/topoguard";
  std::string webhook_configuration = "topoguard";
  std::string ca_lifetime = "87600h";
  std::string cert_lifetime = "8760h";
  std::string report_interval = "0";
  std::string report_format = "openreports";
  std::string report_lease = "topoguard-reports";
};

// NAMESPACE/NAME of --tls-secret and --service.
Result<std::pair<std::string, std::string>> namespaced_name(const std::string& flag,
                                                            const std::string& text) {
  const std::size_t slash = text.find('/');
  if (slash == std::string::npos || !kube::valid_object_name(text.substr(0, slash)) ||
      !kube::valid_object_name(text.substr(slash + 1))) {
    return Error{
        ErrorCode::kUsage, flag + " \"" + text + "\" is not NAMESPACE/NAME (lowercase names)", {}};
  }
  return std::pair{text.substr(0, slash), text.substr(slash + 1)};
}

// This replica's Lease identity: the pod's name (POD_NAME, else HOSTNAME) and a random suffix.
std::string replica_identity() {
  const char* pod = std::getenv("POD_NAME");
  const char* host = std::getenv("HOSTNAME");
  return kube::lease_identity(pod != nullptr ? pod : host != nullptr ? host : "");
}

// The self-managed TLS settings from the flags; a usage error names the flag.
Result<selftls::TlsControllerOptions> tls_controller_options(const ServeFlags& flags) {
  selftls::TlsControllerOptions options;
  auto secret = namespaced_name("--tls-secret", flags.tls_secret);
  if (!secret) {
    return secret.error();
  }
  auto service = namespaced_name("--service", flags.service);
  if (!service) {
    return service.error();
  }
  if (!kube::valid_object_name(flags.webhook_configuration)) {
    return Error{
        ErrorCode::kUsage,
        "--webhook-configuration \"" + flags.webhook_configuration + "\" is not an object name",
        {}};
  }
  std::tie(options.secret_namespace, options.secret_name) = *secret;
  std::tie(options.service_namespace, options.service_name) = *service;
  options.webhook_configuration = flags.webhook_configuration;
  options.lease_name = options.secret_name;
  for (const auto& [flag, text, target] :
       {std::tuple{"--ca-lifetime", &flags.ca_lifetime, &options.policy.ca_lifetime},
        std::tuple{"--cert-lifetime", &flags.cert_lifetime, &options.policy.cert_lifetime}}) {
    auto lifetime = parse_duration(*text);
    if (!lifetime) {
      return Error{ErrorCode::kUsage, std::string(flag) + ": " + lifetime.error().message, {}};
    }
    if (*lifetime < std::chrono::minutes(1)) {
      return Error{ErrorCode::kUsage, std::string(flag) + " must be at least 1m", {}};
    }
    *target = std::chrono::duration_cast<std::chrono::seconds>(*lifetime);
  }
  if (options.policy.cert_lifetime > options.policy.ca_lifetime) {
    return Error{ErrorCode::kUsage, "--cert-lifetime must not exceed --ca-lifetime", {}};
  }
  // A retired CA stays trusted for a tenth of a certificate's life, at most an hour: replicas
  // reload the Secret and API servers read the bundle within seconds.
  options.policy.previous_overlap =
      std::min<std::chrono::seconds>(std::chrono::hours(1), options.policy.cert_lifetime / 10);
  options.identity = replica_identity();
  return options;
}

// The cache is on with --cluster-cache=on, and with auto when a kubeconfig is named or the
// process runs in a pod; off, objects are judged alone.
bool cluster_cache_wanted(const ServeFlags& flags) {
  if (flags.cluster_cache != "auto") {
    return flags.cluster_cache == "on";
  }
  return !flags.kube.kubeconfig.empty() || std::getenv("KUBERNETES_SERVICE_HOST") != nullptr;
}

// The background report settings, or nullopt when --report-interval is 0; a usage error names
// the flag.
Result<std::optional<reports::ReportSyncOptions>> report_sync_options(const ServeFlags& flags) {
  auto interval = parse_duration(flags.report_interval);
  if (!interval) {
    return Error{ErrorCode::kUsage, "--report-interval: " + interval.error().message, {}};
  }
  if (interval->count() == 0) {
    return std::optional<reports::ReportSyncOptions>();
  }
  if (*interval < std::chrono::seconds(1)) {
    return Error{ErrorCode::kUsage, "--report-interval must be 0 (off) or at least 1s", {}};
  }
  if (!cluster_cache_wanted(flags)) {
    return Error{ErrorCode::kUsage,
                 "--report-interval needs the cluster cache (--cluster-cache on, --kubeconfig, "
                 "or running in a pod)",
                 {}};
  }
  reports::ReportSyncOptions options;
  if (flags.report_lease.find('/') != std::string::npos) {
    auto lease = namespaced_name("--report-lease", flags.report_lease);
    if (!lease) {
      return lease.error();
    }
    std::tie(options.lease_namespace, options.lease_name) = *lease;
  } else if (kube::valid_object_name(flags.report_lease)) {
    options.lease_namespace.clear();  // the client's: see start_report_syncer
    options.lease_name = flags.report_lease;
  } else {
    return Error{ErrorCode::kUsage,
                 "--report-lease \"" + flags.report_lease + "\" is not NAME or NAMESPACE/NAME",
                 {}};
  }
  options.interval = std::chrono::duration_cast<std::chrono::milliseconds>(*interval);
  options.report.format = flags.report_format == "policyreport" ? audit::ReportFormat::kPolicyReport
                                                                : audit::ReportFormat::kOpenReports;
  options.identity = replica_identity();
  return std::optional(std::move(options));
}

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

// The client of the cluster cache and self-managed TLS (one per process, shared).
Result<kube::ApiClientPtr> make_api_client(const ServeFlags& flags) {
  Result<kube::ClientConfig> config = kube::load_client_config(flags.kube);
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

// The started cache, or nullptr when it is off.
cache::ClusterCachePtr start_cluster_cache(const ServeFlags& flags, kube::ApiClientPtr client) {
  if (!cluster_cache_wanted(flags)) {
    return nullptr;
  }
  cache::ClusterCacheOptions cache_options;
  cache_options.stale_after = std::chrono::seconds(flags.cache_stale_after);
  auto cluster = std::make_shared<cache::ClusterCache>(
      std::move(client), cache::discover_cluster_state(log_cache_event), cache_options,
      log_cache_event);
  cluster->start();
  return cluster;
}

// Starts the controller that keeps the Secret, the caBundles and the served certificate in step.
std::shared_ptr<selftls::TlsController> start_self_managed_tls(
    kube::ApiClientPtr client, selftls::TlsControllerOptions tls_options,
    std::shared_ptr<server::CertReloader> certs, std::shared_ptr<server::Metrics> metrics) {
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
  auto log = [](bool failure, const std::string& message) {
    server::log_event(failure ? server::LogLevel::kWarn : server::LogLevel::kInfo,
                      "self-managed TLS: " + message);
  };
  auto tls = std::make_shared<selftls::TlsController>(std::move(client), std::move(tls_options),
                                                      kube::real_clock(), std::move(serve_pair),
                                                      std::move(log));
  tls->start();
  return tls;
}

// Starts the writer of background reports.
std::shared_ptr<reports::ReportSyncer> start_report_syncer(
    kube::ApiClientPtr client, cache::ClusterCachePtr cluster,
    std::shared_ptr<server::PolicyReloader> policies, reports::ReportSyncOptions sync_options) {
  auto log = [](bool failure, const std::string& message) {
    server::log_event(failure ? server::LogLevel::kWarn : server::LogLevel::kInfo, message);
  };
  if (sync_options.lease_namespace.empty()) {
    // In a pod, its own namespace; else the kubeconfig context's.
    sync_options.lease_namespace =
        client->config().namespace_.empty() ? "default" : client->config().namespace_;
  }
  auto syncer = std::make_shared<reports::ReportSyncer>(
      std::move(client), std::move(cluster), [policies] { return policies->current(); },
      std::move(sync_options), kube::real_clock(), std::move(log));
  syncer->start();
  return syncer;
}

int run_serve(ServeFlags& flags) {
  server::ServerOptions& options = flags.options;
  server::set_log_level(*server::parse_log_level(flags.log_level));

  auto listen = http::parse_host_port(flags.listen);
  auto metrics_listen = http::parse_host_port(flags.metrics_listen);
  if (!listen || !metrics_listen) {
    std::cerr << "topoguard serve: "
              << printable((!listen ? listen.error() : metrics_listen.error()).message)
              << std::endl;
    return kExitUsage;
  }
  options.listen = *listen;
  options.metrics_listen = *metrics_listen;
  options.failure_mode = flags.failure_mode == "open" ? admission::FailureMode::kOpen
                                                      : admission::FailureMode::kClosed;
  options.read_timeout = std::chrono::seconds(flags.read_timeout);
  options.write_timeout = std::chrono::seconds(flags.write_timeout);
  options.keep_alive_timeout = std::chrono::seconds(flags.keep_alive_timeout);
  options.reload_interval =
      std::chrono::milliseconds(static_cast<long long>(flags.reload_interval * 1000.0));
  options.shutdown_delay = std::chrono::seconds(flags.shutdown_delay);
  options.shutdown_grace = std::chrono::seconds(flags.shutdown_grace);

  raise_descriptor_limit();
  if (!install_signal_handlers()) {
    std::cerr << "topoguard serve: cannot install signal handlers" << std::endl;
    return kExitUsage;
  }
  if (flags.self_managed_tls != options.tls_cert.empty() ||
      options.tls_cert.empty() != options.tls_key.empty()) {
    std::cerr << "topoguard serve: give either --tls-cert and --tls-key, or --self-managed-tls"
              << std::endl;
    return kExitUsage;
  }
  Result<selftls::TlsControllerOptions> tls_options = selftls::TlsControllerOptions{};
  if (flags.self_managed_tls) {
    tls_options = tls_controller_options(flags);
    if (!tls_options) {
      std::cerr << "topoguard serve: " << printable(tls_options.error().message) << std::endl;
      return kExitUsage;
    }
  }
  Result<std::optional<reports::ReportSyncOptions>> report_options = report_sync_options(flags);
  if (!report_options) {
    std::cerr << "topoguard serve: " << printable(report_options.error().message) << std::endl;
    return kExitUsage;
  }
  auto certs =
      flags.self_managed_tls
          ? Result<std::shared_ptr<server::CertReloader>>(server::CertReloader::in_memory())
          : server::CertReloader::create(options.tls_cert, options.tls_key);
  if (!certs) {
    log_fatal("cannot load the serving certificate", certs.error());
    return kExitUsage;
  }
  // Policies are re-read when their files change; standard input can be read only once.
  if (std::find(options.policies.begin(), options.policies.end(), "-") != options.policies.end()) {
    log_fatal("cannot load policies",
              Error{ErrorCode::kUsage, "--policies -: serve re-reads its policies, so they must "
                                       "be files or folders, not standard input", {}});
    return kExitUsage;
  }
  auto policies = server::PolicyReloader::create(
      options.policies,
      [](const std::vector<std::string>& paths) { return policy::load_policies(paths); });
  if (!policies) {
    log_fatal("cannot load policies", policies.error());
    return kExitUsage;
  }
  const bool needs_client = flags.self_managed_tls || cluster_cache_wanted(flags);
  Result<kube::ApiClientPtr> client =
      needs_client ? make_api_client(flags) : Result<kube::ApiClientPtr>(kube::ApiClientPtr());
  if (!client) {
    log_fatal("cannot reach the cluster", client.error());
    return kExitUsage;
  }
  cache::ClusterCachePtr cluster = start_cluster_cache(flags, *client);
  auto metrics = std::make_shared<server::Metrics>(TOPOGUARD_VERSION);
  server::ServerHooks hooks;
  std::shared_ptr<selftls::TlsController> tls;
  if (flags.self_managed_tls) {
    tls = start_self_managed_tls(*client, std::move(*tls_options), *certs, metrics);
    hooks.readiness.emplace_back([tls] { return tls->status().not_ready_reason(); });
    hooks.metrics.emplace_back([tls] { return selftls::render_tls_metrics(tls->status()); });
  }
  std::shared_ptr<reports::ReportSyncer> report_syncer;
  if (*report_options) {
    report_syncer = start_report_syncer(*client, cluster, *policies, std::move(**report_options));
    hooks.metrics.emplace_back(
        [report_syncer] { return reports::render_report_metrics(report_syncer->status()); });
  }
  server::HttpsServer https(options, *certs, *policies, metrics, cluster, std::move(hooks));
  if (auto started = https.start(); !started) {
    log_fatal("cannot start", started.error());
    return kExitUsage;
  }

  int signal_number = wait_for_signal();
  while (signal_number == SIGHUP) {
    server::log_event(server::LogLevel::kInfo,
                      "SIGHUP received: re-reading certificate and policies now");
    https.reload();
    signal_number = wait_for_signal();
  }
  Json fields = Json::object();
  fields["signal"] = signal_number;
  server::log_event(server::LogLevel::kInfo, "stop signal received", fields);
  const bool drained = https.shutdown();
  if (report_syncer != nullptr) {
    report_syncer->stop();  // gives its Lease up for the next writer
  }
  if (tls != nullptr) {
    tls->stop();  // gives the Lease up for the next writer
  }
  if (!drained) {
    // Grace period over with connections still open: leave now rather than be SIGKILLed.
    server::flush_logs();
    std::_Exit(kExitOk);
  }
  server::flush_logs();
  return kExitOk;
}

}  // namespace

void add_serve_command(CLI::App& app, int& exit_code) {
  CLI::App* serve = app.add_subcommand(
      "serve", "Run the admission webhook: POST /mutate and /validate over TLS, metrics on a "
               "second port");
  auto flags = std::make_shared<ServeFlags>();
  server::ServerOptions& options = flags->options;
  serve
      ->add_option("--tls-cert", options.tls_cert,
                   "Serving certificate (PEM, chain allowed), re-read when it changes "
                   "(default: none; needed unless --self-managed-tls)")
      ->type_name("FILE");
  serve
      ->add_option("--tls-key", options.tls_key,
                   "Private key of the certificate (PEM; default: none; needed with --tls-cert)")
      ->type_name("FILE");
  serve->add_flag("--self-managed-tls", flags->self_managed_tls,
                  "Make and rotate the CA and serving certificate in a Secret, and keep the CA "
                  "in the webhook configurations' caBundles, one writer at a time by Lease "
                  "(default: off, --tls-cert and --tls-key are served)");
  serve
      ->add_option("--tls-secret", flags->tls_secret,
                   "Self-managed TLS: the Secret holding ca.crt, ca.key, tls.crt and tls.key")
      ->capture_default_str()
      ->type_name("NAMESPACE/NAME");
  serve
      ->add_option("--service", flags->service,
                   "Self-managed TLS: the webhook's Service; the certificate is for "
                   "NAME.NAMESPACE.svc and NAME.NAMESPACE.svc.cluster.local")
      ->capture_default_str()
      ->type_name("NAMESPACE/NAME");
  serve
      ->add_option("--webhook-configuration", flags->webhook_configuration,
                   "Self-managed TLS: the Validating and Mutating webhook configurations whose "
                   "caBundles hold the CA; once serving, each webhook that their annotation "
                   "topoguard.dev/failure-policy-when-serving names gets that failurePolicy")
      ->capture_default_str()
      ->type_name("NAME");
  serve
      ->add_option("--ca-lifetime", flags->ca_lifetime,
                   "Self-managed TLS: life of a CA; a next one is made at two thirds of it")
      ->capture_default_str()
      ->type_name("DURATION");
  serve
      ->add_option("--cert-lifetime", flags->cert_lifetime,
                   "Self-managed TLS: life of a serving certificate; renewed at two thirds of it")
      ->capture_default_str()
      ->type_name("DURATION");
  serve->add_option("--client-ca", options.client_ca,
                    "Require client certificates signed by these CAs (PEM; default: none, "
                    "no client certificate asked)")
      ->type_name("FILE");
  serve->add_option("--listen", flags->listen, "Webhook address ADDR:PORT")
      ->capture_default_str()
      ->type_name("ADDRESS");
  serve->add_option("--metrics-listen", flags->metrics_listen,
                    "Plain HTTP address for /metrics, /healthz, /readyz")
      ->capture_default_str()
      ->type_name("ADDRESS");
  add_policies_option(*serve, options.policies);
  serve->add_option("--failure-mode", flags->failure_mode,
                    "Answer to internal errors: closed (deny) or open (allow with a warning)")
      ->check(CLI::IsMember({"closed", "open"}))
      ->capture_default_str();
  serve->add_option("--body-limit", options.body_limit, "Largest request body in bytes (413)")
      ->capture_default_str()
      ->type_name("BYTES");
  serve->add_option("--threads", options.threads,
                    "Event-loop threads of both ports; 0: two per CPU the process may run on")
      ->check(CLI::Range(0, 256))
      ->capture_default_str()
      ->type_name("N");
  serve->add_option("--max-connections", options.max_connections,
                    "Open webhook connections; at the cap a new one closes the longest-idle one")
      ->check(CLI::Range(1, 1'000'000))
      ->capture_default_str()
      ->type_name("N");
  serve->add_option("--max-connections-per-address", options.max_connections_per_address,
                    "Open webhook connections from one client address beyond which its new ones "
                    "are closed at once (leave room for every API server instance)")
      ->check(CLI::Range(1, 1'000'000))
      ->capture_default_str()
      ->type_name("N");
  serve->add_option("--metrics-max-connections", options.metrics_max_connections,
                    "Open metrics-port connections; at the cap a new one closes the longest-idle "
                    "one, and one client address may hold half of them")
      ->check(CLI::Range(1, 100'000))
      ->capture_default_str()
      ->type_name("N");
  serve->add_option("--read-timeout", flags->read_timeout, "Seconds to read a request")
      ->check(CLI::Range(1, 300))
      ->capture_default_str()
      ->type_name("SECONDS");
  serve->add_option("--write-timeout", flags->write_timeout, "Seconds to write a response")
      ->check(CLI::Range(1, 300))
      ->capture_default_str()
      ->type_name("SECONDS");
  serve->add_option("--keep-alive-timeout", flags->keep_alive_timeout,
                    "Seconds an idle connection stays open")
      ->check(CLI::Range(1, 3600))
      ->capture_default_str()
      ->type_name("SECONDS");
  serve->add_option("--reload-interval", flags->reload_interval,
                    "Seconds between checks of certificate and policy files")
      ->check(CLI::Range(0.05, 3600.0))
      ->capture_default_str()
      ->type_name("SECONDS");
  serve->add_option("--shutdown-delay", flags->shutdown_delay,
                    "Seconds to keep serving (not ready) after SIGTERM before draining")
      ->check(CLI::Range(0, 300))
      ->capture_default_str()
      ->type_name("SECONDS");
  serve->add_option("--shutdown-grace", flags->shutdown_grace,
                    "Seconds the drain may take before the process exits anyway")
      ->check(CLI::Range(1, 3600))
      ->capture_default_str()
      ->type_name("SECONDS");
  serve->add_option("--cluster-cache", flags->cluster_cache,
                    "Watch the cluster's DeviceClasses, ResourceSlices, claims and templates so "
                    "pods are judged with their claims and claims against the nodes: on, off, or "
                    "auto (on with --kubeconfig or in a pod)")
      ->check(CLI::IsMember({"auto", "on", "off"}))
      ->capture_default_str();
  add_kube_options(*serve, flags->kube, "Cluster cache, self-managed TLS and reports: ");
  serve
      ->add_option("--report-interval", flags->report_interval,
                   "Every this often, evaluate the cluster cache's claims, templates and "
                   "DeviceClasses and keep one report per object in step (written only when it "
                   "changed; one writer at a time by Lease); 0 turns it off")
      ->capture_default_str()
      ->type_name("DURATION");
  serve
      ->add_option("--report-format", flags->report_format,
                   "Background reports as openreports (openreports.io/v1alpha1 Report, "
                   "ClusterReport) or policyreport (wgpolicyk8s.io/v1alpha2)")
      ->check(CLI::IsMember({"openreports", "policyreport"}))
      ->capture_default_str();
  serve
      ->add_option("--report-lease", flags->report_lease,
                   "Background reports: the Lease that lets one replica write them (NAME: in "
                   "the pod's namespace, or the kubeconfig context's)")
      ->capture_default_str()
      ->type_name("[NAMESPACE/]NAME");
  serve
      ->add_option("--feasibility-budget", options.feasibility.steps_per_review,
                   "Steps (devices judged, nodes told apart, search steps) one review's "
                   "feasibility checks may take, a few milliseconds by default; past them, and "
                   "for a requester (userInfo.username, else namespace) that has used its share, "
                   "feasibility is unknown: no warning, the verdict unchanged; 0 turns the checks "
                   "off")
      ->check(CLI::Range(std::size_t{0}, std::size_t{100'000'000}))
      ->capture_default_str()
      ->type_name("STEPS");
  serve->add_option("--cache-stale-after", flags->cache_stale_after,
                    "Seconds a watch may stay broken before answers that need the cluster say "
                    "unknown")
      ->check(CLI::Range(1, 86400))
      ->capture_default_str()
      ->type_name("SECONDS");
  serve->add_option("--log-level", flags->log_level, "debug, info, warn, error or off")
      ->check(CLI::IsMember({"debug", "info", "warn", "warning", "error", "off"}))
      ->capture_default_str();
  serve->callback([flags, &exit_code] { exit_code = run_serve(*flags); });
}

}  // namespace topoguard::cli
