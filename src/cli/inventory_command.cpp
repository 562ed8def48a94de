// `topoguard inventory`: flags -> read sysfs (the only I/O) -> the node's GPUs, RDMA NICs and
// GPU x NIC path classes (text or JSON). With --report the node's ClusterReport is kept in the
// cluster; with --interval it runs until SIGTERM, a pass per interval, metrics on a port (the
// DaemonSet of deploy/inventory).
#include <atomic>
#include <chrono>
#include <csignal>
#include <iostream>
#include <mutex>

#include "cluster_slices.h"
#include "commands.h"
#include "conventions.h"
#include "topoguard/audit/manifest_reader.h"
#include "topoguard/common/printable_text.h"
#include "topoguard/hardware/pci_inventory.h"
#include "topoguard/hardware/slice_check.h"
#include "topoguard/hardware/sysfs_facts.h"
#include "topoguard/hardware/node_report.h"
#include "topoguard/http/tls_event_server.h"
#include "topoguard/k8s/kinds.h"
#include "topoguard/kube/objects.h"
#include "topoguard/reports/kept_report.h"
#include "topoguard/reports/report_sync.h"
#include "topoguard/runtime/signals.h"

namespace topoguard::cli {

namespace {

struct InventoryOptions {
  std::string sysfs = "/sys";
  std::string format = "text";
  std::vector<std::string> compare_slices;
  bool cluster = false;
  std::string node;
  kube::LoadOptions kube;
  bool report = false;
  std::string interval = "0";  // 0: one pass
  std::string metrics_listen;  // "": no metrics port
};

// The ResourceSlices among `paths`; nothing (after saying why on stderr) when one cannot be read.
std::optional<std::vector<k8s::ParsedSlicePtr>> read_slices(const std::vector<std::string>& paths) {
  const audit::ManifestSet manifests = audit::read_manifests(paths, std::cin);
  bool failed = false;
  for (const Error& error : manifests.errors) {
    std::cerr << printable(error.to_string()) << '\n';
    failed = true;
  }
  std::vector<k8s::ParsedSlicePtr> slices;
  k8s::SliceInterner interner;
  for (const audit::Manifest& manifest : manifests.manifests) {
    if (k8s::resource_kind(*manifest.object) != k8s::ResourceKind::kResourceSlice) {
      continue;
    }
    Result<k8s::ParsedSlicePtr> slice = k8s::read_resource_slice(*manifest.object, interner);
    if (!slice) {
      std::cerr << printable(manifests.path_of(manifest)) << ':'
                << manifests.line_of(manifest, "") << ": " << printable(slice.error().to_string())
                << '\n';
      failed = true;
      continue;
    }
    slices.push_back(std::move(*slice));
  }
  return failed ? std::nullopt : std::optional(std::move(slices));
}

// One pass's outcome: the inventory and, with slices, their check.
struct InventoryPass {
  hardware::NodeInventory inventory;
  std::optional<hardware::SliceCheck> check;
};

// Reads sysfs and, with --compare-slices or --cluster, the slices; none (said on stderr) when
// either cannot be read. `client` is the cluster's with --cluster.
std::optional<InventoryPass> take_inventory(const InventoryOptions& options,
                                            kube::ApiClient* client) {
  const Result<hardware::SysfsFacts> facts = hardware::read_sysfs_facts(options.sysfs);
  if (!facts) {
    std::cerr << "topoguard inventory: " << printable(facts.error().message) << '\n';
    return std::nullopt;
  }
  InventoryPass pass{hardware::build_inventory(*facts), std::nullopt};
  if (!options.compare_slices.empty() || client != nullptr) {
    const std::optional<std::vector<k8s::ParsedSlicePtr>> slices =
        client != nullptr ? list_cluster_slices("inventory", *client)
                          : read_slices(options.compare_slices);
    if (!slices) {
      return std::nullopt;
    }
    pass.check = hardware::check_slices(pass.inventory, *slices, options.node);
  }
  return pass;
}

// The Node's identity (its uid names and owns the report).
Result<hardware::NodeIdentity> read_node(kube::ApiClient& client, const std::string& name) {
  Result<kube::ObjectResponse> node = kube::get_object(client, {"", "v1", "nodes", ""}, name);
  if (!node) {
    return node.error();
  }
  if (!node->ok()) {
    return Error{ErrorCode::kIo, "reading Node " + name + ": " + node->describe(), {}};
  }
  const Json* uid = find_at(node->object, "/metadata/uid");
  if (uid == nullptr || !uid->is_string() || !kube::valid_object_name(uid->get<std::string>())) {
    return Error{ErrorCode::kInvalidValue, "Node " + name + " has no usable metadata.uid", {}};
  }
  return hardware::NodeIdentity{name, uid->get<std::string>()};
}

// Writes the node's ClusterReport unless the cluster holds the same.
Result<reports::KeptReport::Outcome> keep_node_report(reports::KeptReport& kept,
                                                      kube::ApiClient& client,
                                                      const InventoryPass& pass,
                                                      const std::string& node_name) {
  Result<hardware::NodeIdentity> node = read_node(client, node_name);
  if (!node) {
    return node.error();
  }
  return kept.keep(reports::report_resources(audit::ReportFormat::kOpenReports).cluster,
                   hardware::node_report(pass.inventory, pass.check ? &*pass.check : nullptr,
                                         *node));
}

int write_inventory(const InventoryOptions& options, const InventoryPass& pass) {
  const hardware::SliceCheck* check = pass.check ? &*pass.check : nullptr;
  if (options.format == "sarif" || options.format == "junit") {
    if (check == nullptr) {
      std::cerr << "topoguard inventory: -o " << options.format
                << " writes the findings of --compare-slices or --cluster; give one\n";
      return kExitUsage;
    }
    std::cout << (options.format == "sarif"
                      ? hardware::slice_check_to_sarif(*check, TOPOGUARD_VERSION)
                      : hardware::slice_check_to_junit(*check));
  } else if (options.format == "json") {
    std::cout << hardware::inventory_to_json(pass.inventory, check, options.node);
  } else {
    std::cout << hardware::inventory_to_text(pass.inventory)
              << (check != nullptr ? hardware::slice_check_to_text(*check) : std::string());
  }
  return check != nullptr && !check->mismatches.empty() ? kExitFindings : kExitOk;
}

// What the metrics port shows, updated after each pass.
struct WatchState {
  std::mutex mutex;
  std::string node_metrics;  // render_node_metrics of the last pass that read the node
  reports::ReportSyncStatus status;
  std::uint64_t failed_passes = 0;
  std::atomic<bool> ready{false};  // a pass has completed

  std::string render() {
    std::lock_guard lock(mutex);
    return node_metrics + reports::render_report_metrics(status) +
           "# HELP topoguard_inventory_failed_passes_total Inventory passes that could not read "
           "sysfs or the cluster, or write the report\n"
           "# TYPE topoguard_inventory_failed_passes_total counter\n"
           "topoguard_inventory_failed_passes_total " + std::to_string(failed_passes) + "\n";
  }
};

http::HttpResponse plain_response(int status, std::string body) {
  http::HttpResponse response;
  response.status = status;
  response.body = std::move(body);
  return response;
}

// /metrics, /healthz, and /readyz (ready once a pass has completed) in plain HTTP.
std::unique_ptr<http::TlsEventServer> start_metrics_port(const http::HostPort& listen,
                                                         std::shared_ptr<WatchState> state) {
  http::EventServerOptions server_options;
  server_options.threads = 1;
  std::vector<http::EventEndpoint> endpoints(1);
  endpoints[0].name = "metrics";
  endpoints[0].listen = listen;
  endpoints[0].max_connections = 64;
  endpoints[0].handler = [state](http::HttpRequest& request, http::Responder) {
    if (request.method != "GET" && request.method != "HEAD") {
      http::HttpResponse response = plain_response(405, request.method + " is not allowed\n");
      response.headers.emplace_back("Allow", "GET, HEAD");
      return http::HandlerResult(std::move(response));
    }
    if (request.path == "/metrics") {
      http::HttpResponse response = plain_response(200, state->render());
      response.content_type = "text/plain; version=0.0.4; charset=utf-8";
      return http::HandlerResult(std::move(response));
    }
    if (request.path == "/healthz") {
      return http::HandlerResult(plain_response(200, "ok\n"));
    }
    if (request.path == "/readyz") {
      return http::HandlerResult(state->ready ? plain_response(200, "ok\n")
                                              : plain_response(503, "no pass yet\n"));
    }
    return http::HandlerResult(plain_response(404, "no route for " + request.path + "\n"));
  };
  endpoints[0].on_error = [](int status, const std::string& message, const std::string&) {
    return plain_response(status, message + "\n");
  };
  auto server = std::make_unique<http::TlsEventServer>(server_options, std::move(endpoints));
  if (Status bound = server->bind(); !bound) {
    std::cerr << "topoguard inventory: --metrics-listen: " << printable(bound.error().message)
              << '\n';
    return nullptr;
  }
  if (Status started = server->start(); !started) {
    std::cerr << "topoguard inventory: metrics port: " << printable(started.error().message)
              << '\n';
    return nullptr;
  }
  std::cerr << "topoguard inventory: metrics on " << printable(listen.host) << ':'
            << server->port() << '\n';
  return server;
}

// --interval: a pass now and after each interval (or SIGHUP) until SIGTERM or SIGINT.
int watch_inventory(const InventoryOptions& options, std::chrono::nanoseconds interval,
                    const std::shared_ptr<kube::ApiClient>& shared_client) {
  kube::ApiClient& client = *shared_client;
  if (!runtime::install_signal_handlers()) {
    std::cerr << "topoguard inventory: cannot install signal handlers\n";
    return kExitUsage;
  }
  auto state = std::make_shared<WatchState>();
  state->status.leader = true;  // the only writer of this node's report
  std::unique_ptr<http::TlsEventServer> metrics;
  if (!options.metrics_listen.empty()) {
    const Result<http::HostPort> listen = http::parse_host_port(options.metrics_listen);
    if (!listen) {
      std::cerr << "topoguard inventory: --metrics-listen: " << printable(listen.error().message)
                << '\n';
      return kExitUsage;
    }
    metrics = start_metrics_port(*listen, state);
    if (metrics == nullptr) {
      return kExitUsage;
    }
  }
  reports::KeptReport kept(shared_client);
  while (true) {
    const auto started = std::chrono::steady_clock::now();
    const std::optional<InventoryPass> pass = take_inventory(options, &client);
    std::optional<reports::KeptReport::Outcome> outcome;
    std::string error;
    if (pass && options.report) {
      Result<reports::KeptReport::Outcome> kept_report =
          keep_node_report(kept, client, *pass, options.node);
      if (kept_report) {
        outcome = *kept_report;
      } else {
        error = kept_report.error().message;
      }
    }
    {
      std::lock_guard lock(state->mutex);
      if (pass) {
        state->node_metrics = hardware::render_node_metrics(hardware::node_view(
            pass->inventory, pass->check ? &*pass->check : nullptr, options.node));
      }
      if (!pass || !error.empty()) {
        ++state->failed_passes;
        state->status.write_errors += error.empty() ? 0 : 1;
        state->status.last_error = error;
      } else {
        ++state->status.passes;
        state->status.reports = options.report ? 1 : 0;
        state->status.writes += outcome == reports::KeptReport::Outcome::kWritten ? 1 : 0;
        state->status.skipped += outcome == reports::KeptReport::Outcome::kUnchanged ? 1 : 0;
        state->status.last_pass = std::chrono::system_clock::now();
        state->status.last_pass_duration = std::chrono::steady_clock::now() - started;
      }
    }
    if (pass && error.empty()) {
      state->ready = true;
      std::cerr << "topoguard inventory: pass done: "
                << (pass->check ? std::to_string(pass->check->mismatches.size()) : "no")
                << " attribute mismatches"
                << (outcome == reports::KeptReport::Outcome::kWritten     ? "; report written"
                    : outcome == reports::KeptReport::Outcome::kUnchanged ? "; report unchanged"
                                                                          : "")
                << '\n';
    } else if (!error.empty()) {
      std::cerr << "topoguard inventory: " << printable(error) << '\n';
    }
    const std::optional<int> signal_number = runtime::wait_for_signal_for(
        std::chrono::duration_cast<std::chrono::milliseconds>(interval));
    if (signal_number && *signal_number != SIGHUP) {
      break;  // SIGTERM, SIGINT, or the pipe failed
    }
  }
  if (metrics != nullptr) {
    metrics->drain(std::chrono::steady_clock::now() + std::chrono::seconds(2));
  }
  return kExitOk;
}

int run_inventory_command(const InventoryOptions& options) {
  const Result<std::chrono::nanoseconds> interval = parse_duration(options.interval);
  if (!interval || (interval->count() != 0 && *interval < std::chrono::seconds(1))) {
    std::cerr << "topoguard inventory: --interval must be 0 (one pass) or at least 1s\n";
    return kExitUsage;
  }
  std::shared_ptr<kube::ApiClient> client;
  if (options.cluster) {
    client = make_api_client("inventory", options.kube);
    if (client == nullptr) {
      return kExitUsage;
    }
  }
  if (interval->count() != 0) {
    return watch_inventory(options, *interval, client);
  }
  const std::optional<InventoryPass> pass = take_inventory(options, client.get());
  if (!pass) {
    return kExitUsage;
  }
  if (options.report) {
    reports::KeptReport kept(client);
    Result<reports::KeptReport::Outcome> outcome =
        keep_node_report(kept, *client, *pass, options.node);
    if (!outcome) {
      std::cerr << "topoguard inventory: " << printable(outcome.error().message) << '\n';
      return kExitUsage;
    }
  }
  return write_inventory(options, *pass);
}

}  // namespace

void add_inventory_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<InventoryOptions>();
  CLI::App* command = app.add_subcommand(
      "inventory",
      "This node's GPUs and RDMA NICs from sysfs: PCI address, pcieRoot (as Kubernetes computes "
      "it), NUMA node, and the GPU x NIC path classes of nvidia-smi topo -m");
  command->add_option("--sysfs", options->sysfs,
                      "The sysfs root to read (a copy, a fixture, or the host's mounted into a "
                      "container)")
      ->capture_default_str()
      ->type_name("DIR");
  CLI::Option* node =
      command->add_option("--node", options->node, "This node's name, as ResourceSlices name it")
          ->type_name("NAME");
  command
      ->add_option("--compare-slices", options->compare_slices,
                   "Check what DRA drivers publish for --node (pcieRoot, numaNode, pciBusID) "
                   "against sysfs: kubectl get resourceslices -o yaml output (files, dirs, - for "
                   "stdin; repeatable). Exit 1 on an attribute-mismatch finding")
      ->type_name("FILE")
      ->needs(node);
  command
      ->add_flag("--cluster", options->cluster,
                 "Check as --compare-slices does, with the ResourceSlices of a live cluster")
      ->needs(node)
      ->excludes("--compare-slices");
  add_kube_options(*command, options->kube, "With --cluster: ");
  command
      ->add_flag("--report", options->report,
                 "With --cluster: keep this node's OpenReports ClusterReport (named after the "
                 "Node's uid, owned by it): its devices, GPU x NIC path classes and "
                 "attribute-mismatch findings, written by server-side apply only when changed")
      ->needs("--cluster");
  command
      ->add_option("--interval", options->interval,
                   "With --cluster: run until SIGTERM, a pass now and then every DURATION (and "
                   "on SIGHUP), logging each on stderr instead of printing the inventory; 0: "
                   "one pass")
      ->capture_default_str()
      ->type_name("DURATION")
      ->needs("--cluster");
  command
      ->add_option("--metrics-listen", options->metrics_listen,
                   "With --interval: plain HTTP address for /metrics "
                   "(topoguard_node_gpu_nic_pairs{relation}, topoguard_reports_*), /healthz and "
                   "/readyz, e.g. 0.0.0.0:9090")
      ->type_name("ADDRESS")
      ->needs("--interval");
  add_output_option(*command, options->format, {"text", "json", "sarif", "junit"},
                    "Output format: text or json (the inventory, and the findings of "
                    "--compare-slices), sarif or junit (those findings only)");
  command->callback([options, &exit_code] { exit_code = run_inventory_command(*options); });
}

}  // namespace topoguard::cli
