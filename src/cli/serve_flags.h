// The flags of `topoguard serve` and what they say, checked: the server's options and the
// settings of the components the process runs (serve_components.h).
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "topoguard/common/result.h"
#include "topoguard/kube/client_config.h"
#include "topoguard/reports/report_sync.h"
#include "topoguard/selftls/tls_controller.h"
#include "topoguard/server/server_options.h"

namespace topoguard::cli {

// The flags as CLI11 writes them, before any check.
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

// Adds the flags to the `serve` subcommand, writing to `flags`.
void add_serve_flags(CLI::App& serve, ServeFlags& flags);

// What the flags ask for, checked; a usage error names the flag.
struct ServeSettings {
  server::ServerOptions server;
  bool cluster_cache = false;
  std::chrono::seconds cache_stale_after{60};
  std::optional<selftls::TlsControllerOptions> self_managed_tls;  // with --self-managed-tls
  std::optional<reports::ReportSyncOptions> reports;  // with a --report-interval above 0
};
[[nodiscard]] Result<ServeSettings> read_serve_flags(const ServeFlags& flags);

}  // namespace topoguard::cli
