// `topoguard serve`: the flags (serve_flags.h) -> the certificate and policies -> the process's
// components (serve_components.h) started in order by a runtime::Manager -> SIGHUP re-reads the
// files, SIGTERM/SIGINT stop the components in reverse order (the webhook server drains first).
#include <sys/resource.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "commands.h"
#include "serve_components.h"
#include "serve_flags.h"
#include "topoguard/common/printable_text.h"
#include "topoguard/policy/policy_loader.h"
#include "topoguard/runtime/manager.h"
#include "topoguard/runtime/signals.h"
#include "topoguard/server/json_log.h"

namespace topoguard::cli {
namespace {

// What the components stopped after the webhook server may take beyond its drain (giving up a
// Lease is one request).
constexpr std::chrono::seconds kStopAfterDrain{5};

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

// The serving certificate: from files, or (self-managed TLS) none until the Secret's is read.
Result<std::shared_ptr<server::CertReloader>> load_certificate(const ServeSettings& settings) {
  if (settings.self_managed_tls) {
    return server::CertReloader::in_memory();
  }
  return server::CertReloader::create(settings.server.tls_cert, settings.server.tls_key);
}

// Policies are re-read when their files change; standard input can be read only once.
Result<std::shared_ptr<server::PolicyReloader>> load_policies(const ServeSettings& settings) {
  const std::vector<std::string>& paths = settings.server.policies;
  if (std::find(paths.begin(), paths.end(), "-") != paths.end()) {
    return Error{ErrorCode::kUsage, "--policies -: serve re-reads its policies, so they must "
                                    "be files or folders, not standard input", {}};
  }
  return server::PolicyReloader::create(
      paths, [](const std::vector<std::string>& files) { return policy::load_policies(files); });
}

// Waits for SIGTERM or SIGINT; a SIGHUP in between re-reads the certificate and policies.
void serve_until_stopped(WebhookServerComponent& webhook) {
  int signal_number = runtime::wait_for_signal();
  while (signal_number == SIGHUP) {
    server::log_event(server::LogLevel::kInfo,
                      "SIGHUP received: re-reading certificate and policies now");
    webhook.reload();
    signal_number = runtime::wait_for_signal();
  }
  Json fields = Json::object();
  fields["signal"] = signal_number;
  server::log_event(server::LogLevel::kInfo, "stop signal received", fields);
}

int run_serve(const ServeFlags& flags) {
  server::set_log_level(*server::parse_log_level(flags.log_level));
  Result<ServeSettings> settings = read_serve_flags(flags);
  if (!settings) {
    std::cerr << "topoguard serve: " << printable(settings.error().message) << std::endl;
    return kExitUsage;
  }
  raise_descriptor_limit();
  if (!runtime::install_signal_handlers()) {
    std::cerr << "topoguard serve: cannot install signal handlers" << std::endl;
    return kExitUsage;
  }
  auto certs = load_certificate(*settings);
  if (!certs) {
    log_fatal("cannot load the serving certificate", certs.error());
    return kExitUsage;
  }
  auto policies = load_policies(*settings);
  if (!policies) {
    log_fatal("cannot load policies", policies.error());
    return kExitUsage;
  }
  const bool needs_client = settings->self_managed_tls || settings->cluster_cache;
  Result<kube::ApiClientPtr> client = needs_client ? make_api_client(flags.kube)
                                                   : Result<kube::ApiClientPtr>(kube::ApiClientPtr());
  if (!client) {
    log_fatal("cannot reach the cluster", client.error());
    return kExitUsage;
  }

  // The components in start order: each after what it uses.
  runtime::Manager manager;
  auto metrics = std::make_shared<server::Metrics>(TOPOGUARD_VERSION);
  cache::ClusterCachePtr cluster;
  if (settings->cluster_cache) {
    auto cache = std::make_shared<ClusterCacheComponent>(*client, settings->cache_stale_after);
    cluster = cache->cache();
    manager.add(std::move(cache));
  }
  if (settings->self_managed_tls) {
    manager.add(std::make_shared<SelfManagedTlsComponent>(
        *client, std::move(*settings->self_managed_tls), *certs, metrics));
  }
  if (settings->reports) {
    manager.add(std::make_shared<ReportWriterComponent>(*client, cluster, *policies,
                                                        std::move(*settings->reports)));
  }
  const server::ServerOptions& options = settings->server;
  auto webhook = std::make_shared<WebhookServerComponent>(options, *certs, *policies, metrics,
                                                          cluster, manager);
  manager.add(webhook);
  if (auto started = manager.start(); !started) {
    log_fatal("cannot start", started.error());
    return kExitUsage;
  }

  serve_until_stopped(*webhook);
  const bool stopped = manager.stop(std::chrono::steady_clock::now() + options.shutdown_delay +
                                    options.shutdown_grace + kStopAfterDrain);
  server::flush_logs();
  if (!stopped) {
    // Grace period over with connections still open: leave now rather than be SIGKILLed.
    std::_Exit(kExitOk);
  }
  return kExitOk;
}

}  // namespace

void add_serve_command(CLI::App& app, int& exit_code) {
  CLI::App* serve = app.add_subcommand(
      "serve", "Run the admission webhook: POST /mutate and /validate over TLS, metrics on a "
               "second port");
  auto flags = std::make_shared<ServeFlags>();
  add_serve_flags(*serve, *flags);
  serve->callback([flags, &exit_code] { exit_code = run_serve(*flags); });
}

}  // namespace topoguard::cli
