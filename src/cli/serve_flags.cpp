#include "serve_flags.h"

#include <algorithm>
#include <cstdlib>
#include <tuple>
#include <utility>

#include "commands.h"
#include "topoguard/common/duration.h"
#include "topoguard/http/host_port.h"
#include "topoguard/kube/lease_lock.h"
#include "topoguard/kube/objects.h"

namespace topoguard::cli {
namespace {

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
    options.lease_namespace.clear();  // the client's: see ReportWriterComponent
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

}  // namespace

Result<ServeSettings> read_serve_flags(const ServeFlags& flags) {
  ServeSettings settings;
  server::ServerOptions& options = settings.server;
  options = flags.options;
  auto listen = http::parse_host_port(flags.listen);
  if (!listen) {
    return listen.error();
  }
  auto metrics_listen = http::parse_host_port(flags.metrics_listen);
  if (!metrics_listen) {
    return metrics_listen.error();
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
  if (flags.self_managed_tls != options.tls_cert.empty() ||
      options.tls_cert.empty() != options.tls_key.empty()) {
    return Error{ErrorCode::kUsage, "give either --tls-cert and --tls-key, or --self-managed-tls",
                 {}};
  }
  if (flags.self_managed_tls) {
    auto tls_options = tls_controller_options(flags);
    if (!tls_options) {
      return tls_options.error();
    }
    settings.self_managed_tls = std::move(*tls_options);
  }
  auto report_options = report_sync_options(flags);
  if (!report_options) {
    return report_options.error();
  }
  settings.reports = std::move(*report_options);
  settings.cluster_cache = cluster_cache_wanted(flags);
  settings.cache_stale_after = std::chrono::seconds(flags.cache_stale_after);
  return settings;
}

void add_serve_flags(CLI::App& serve, ServeFlags& flags) {
  server::ServerOptions& options = flags.options;
  serve
      .add_option("--tls-cert", options.tls_cert,
                   "Serving certificate (PEM, chain allowed), re-read when it changes "
                   "(default: none; needed unless --self-managed-tls)")
      ->type_name("FILE");
  serve
      .add_option("--tls-key", options.tls_key,
                   "Private key of the certificate (PEM; default: none; needed with --tls-cert)")
      ->type_name("FILE");
  serve.add_flag("--self-managed-tls", flags.self_managed_tls,
                  "Make and rotate the CA and serving certificate in a Secret, and keep the CA "
                  "in the webhook configurations' caBundles, one writer at a time by Lease "
                  "(default: off, --tls-cert and --tls-key are served)");
  serve
      .add_option("--tls-secret", flags.tls_secret,
                   "Self-managed TLS: the Secret holding ca.crt, ca.key, tls.crt and tls.key")
      ->capture_default_str()
      ->type_name("NAMESPACE/NAME");
  serve
      .add_option("--service", flags.service,
                   "Self-managed TLS: the webhook's Service; the certificate is for "
                   "NAME.NAMESPACE.svc and NAME.NAMESPACE.svc.cluster.local")
      ->capture_default_str()
      ->type_name("NAMESPACE/NAME");
  serve
      .add_option("--webhook-configuration", flags.webhook_configuration,
                   "Self-managed TLS: the Validating and Mutating webhook configurations whose "
                   "caBundles hold the CA")
      ->capture_default_str()
      ->type_name("NAME");
  serve
      .add_option("--ca-lifetime", flags.ca_lifetime,
                   "Self-managed TLS: life of a CA; a next one is made at two thirds of it")
      ->capture_default_str()
      ->type_name("DURATION");
  serve
      .add_option("--cert-lifetime", flags.cert_lifetime,
                   "Self-managed TLS: life of a serving certificate; renewed at two thirds of it")
      ->capture_default_str()
      ->type_name("DURATION");
  serve.add_option("--client-ca", options.client_ca,
                    "Require client certificates signed by these CAs (PEM; default: none, "
                    "no client certificate asked)")
      ->type_name("FILE");
  serve.add_option("--listen", flags.listen, "Webhook address ADDR:PORT")
      ->capture_default_str()
      ->type_name("ADDRESS");
  serve.add_option("--metrics-listen", flags.metrics_listen,
                    "Plain HTTP address for /metrics, /healthz, /readyz")
      ->capture_default_str()
      ->type_name("ADDRESS");
  add_policies_option(serve, options.policies);
  serve.add_option("--failure-mode", flags.failure_mode,
                    "Answer to internal errors: closed (deny) or open (allow with a warning)")
      ->check(CLI::IsMember({"closed", "open"}))
      ->capture_default_str();
  serve.add_option("--body-limit", options.body_limit, "Largest request body in bytes (413)")
      ->capture_default_str()
      ->type_name("BYTES");
  serve.add_option("--threads", options.threads,
                    "Event-loop threads of both ports; 0: two per CPU the process may run on")
      ->check(CLI::Range(0, 256))
      ->capture_default_str()
      ->type_name("N");
  serve.add_option("--max-connections", options.max_connections,
                    "Open webhook connections; at the cap a new one closes the longest-idle one")
      ->check(CLI::Range(1, 1'000'000))
      ->capture_default_str()
      ->type_name("N");
  serve.add_option("--max-connections-per-address", options.max_connections_per_address,
                    "Open webhook connections from one client address beyond which its new ones "
                    "are closed at once (leave room for every API server instance)")
      ->check(CLI::Range(1, 1'000'000))
      ->capture_default_str()
      ->type_name("N");
  serve.add_option("--metrics-max-connections", options.metrics_max_connections,
                    "Open metrics-port connections; at the cap a new one closes the longest-idle "
                    "one, and one client address may hold half of them")
      ->check(CLI::Range(1, 100'000))
      ->capture_default_str()
      ->type_name("N");
  serve.add_option("--read-timeout", flags.read_timeout, "Seconds to read a request")
      ->check(CLI::Range(1, 300))
      ->capture_default_str()
      ->type_name("SECONDS");
  serve.add_option("--write-timeout", flags.write_timeout, "Seconds to write a response")
      ->check(CLI::Range(1, 300))
      ->capture_default_str()
      ->type_name("SECONDS");
  serve.add_option("--keep-alive-timeout", flags.keep_alive_timeout,
                    "Seconds an idle connection stays open")
      ->check(CLI::Range(1, 3600))
      ->capture_default_str()
      ->type_name("SECONDS");
  serve.add_option("--reload-interval", flags.reload_interval,
                    "Seconds between checks of certificate and policy files")
      ->check(CLI::Range(0.05, 3600.0))
      ->capture_default_str()
      ->type_name("SECONDS");
  serve.add_option("--shutdown-delay", flags.shutdown_delay,
                    "Seconds to keep serving (not ready) after SIGTERM before draining")
      ->check(CLI::Range(0, 300))
      ->capture_default_str()
      ->type_name("SECONDS");
  serve.add_option("--shutdown-grace", flags.shutdown_grace,
                    "Seconds the drain may take before the process exits anyway")
      ->check(CLI::Range(1, 3600))
      ->capture_default_str()
      ->type_name("SECONDS");
  serve.add_option("--cluster-cache", flags.cluster_cache,
                    "Watch the cluster's DeviceClasses, ResourceSlices, claims and templates so "
                    "pods are judged with their claims and claims against the nodes: on, off, or "
                    "auto (on with --kubeconfig or in a pod)")
      ->check(CLI::IsMember({"auto", "on", "off"}))
      ->capture_default_str();
  add_kube_options(serve, flags.kube, "Cluster cache, self-managed TLS and reports: ");
  serve
      .add_option("--report-interval", flags.report_interval,
                   "Every this often, evaluate the cluster cache's claims, templates and "
                   "DeviceClasses and keep one report per object in step (written only when it "
                   "changed; one writer at a time by Lease); 0 turns it off")
      ->capture_default_str()
      ->type_name("DURATION");
  serve
      .add_option("--report-format", flags.report_format,
                   "Background reports as openreports (openreports.io/v1alpha1 Report, "
                   "ClusterReport) or policyreport (wgpolicyk8s.io/v1alpha2)")
      ->check(CLI::IsMember({"openreports", "policyreport"}))
      ->capture_default_str();
  serve
      .add_option("--report-lease", flags.report_lease,
                   "Background reports: the Lease that lets one replica write them (NAME: in "
                   "the pod's namespace, or the kubeconfig context's)")
      ->capture_default_str()
      ->type_name("[NAMESPACE/]NAME");
  serve
      .add_option("--feasibility-budget", options.feasibility.steps_per_review,
                   "Steps (devices judged, nodes told apart, search steps) one review's "
                   "feasibility checks may take, a few milliseconds by default; past them, and "
                   "for a requester (userInfo.username, else namespace) that has used its share, "
                   "feasibility is unknown: no warning, the verdict unchanged; 0 turns the checks "
                   "off")
      ->check(CLI::Range(std::size_t{0}, std::size_t{100'000'000}))
      ->capture_default_str()
      ->type_name("STEPS");
  serve.add_option("--cache-stale-after", flags.cache_stale_after,
                    "Seconds a watch may stay broken before answers that need the cluster say "
                    "unknown")
      ->check(CLI::Range(1, 86400))
      ->capture_default_str()
      ->type_name("SECONDS");
  serve.add_option("--log-level", flags.log_level, "debug, info, warn, error or off")
      ->check(CLI::IsMember({"debug", "info", "warn", "warning", "error", "off"}))
      ->capture_default_str();
}

}  // namespace topoguard::cli
