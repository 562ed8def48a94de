// Everything `topoguard serve` can be told, as one plain struct filled by the CLI and by tests.
// Defaults are the production defaults.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "topoguard/admission/admission_handler.h"
#include "topoguard/admission/feasibility_lane.h"
#include "topoguard/http/host_port.h"

namespace topoguard::server {

struct ServerOptions {
  http::HostPort listen{"0.0.0.0", 8443};
  http::HostPort metrics_listen{"0.0.0.0", 9090};
  std::string tls_cert;
  std::string tls_key;
  std::string client_ca;              // empty: no client certificate is asked for
  std::vector<std::string> policies;  // empty: the built-in policy
  admission::FailureMode failure_mode = admission::FailureMode::kClosed;
  // The feasibility lane (with the cluster cache): steps per review and shares per requester.
  // Its max_concurrent is set from the decision threads (half of them, at least one).
  admission::FeasibilityLaneOptions feasibility;

  std::size_t body_limit = 4 * 1024 * 1024;  // larger bodies get 413
  // Request bytes held at once: buffered by connections, and in reviews being decided (a body
  // and an estimate of its parsed tree). Beyond it a sender gets 503. An eighth is kept for
  // requests of at most 64 KiB, so large ones cannot starve them.
  std::size_t max_buffered_bytes = 128 * 1024 * 1024;
  // Open webhook connections. At the cap a new connection closes the longest-idle one; only
  // when none is idle is the new one closed. 4,096 idle TLS connections take about
  // 4096 x ~16 KB (SSL_MODE_RELEASE_BUFFERS), inside the manifests' 256 Mi limit beside the
  // 128 MiB byte budget.
  std::size_t max_connections = 4096;
  // Open webhook connections from one client address, beyond which its new ones are closed at
  // once: a single client cannot take the whole port, while several API server instances (each
  // with its own address; an API server keeps tens to hundreds of connections) fit easily.
  std::size_t max_connections_per_address = 1024;
  // The metrics port serves a scraper and kubelet probes: a few connections are plenty. One
  // client address may hold half of them.
  std::size_t metrics_max_connections = 64;
  // Event-loop threads of both ports; each serves any number of connections. 0: two per usable
  // CPU (http::default_event_loops()). Also the decision pool's threads when set; 0: one per
  // usable CPU.
  std::size_t threads = 0;
  std::chrono::seconds read_timeout{10};
  std::chrono::seconds write_timeout{10};
  // Below the shutdown grace, so idle connections are gone when the drain deadline comes.
  std::chrono::seconds keep_alive_timeout{20};
  std::size_t keep_alive_max_requests = 1'000'000;
  int listen_backlog = 1024;
  std::chrono::milliseconds reload_interval{2000};  // polling of certificate and policy files
  std::chrono::seconds shutdown_delay{0};  // not ready, still serving, before the drain starts
  std::chrono::seconds shutdown_grace{25};  // the drain gives up after this
};

}  // namespace topoguard::server
