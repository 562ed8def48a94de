// `topoguard topology`: flags -> read cluster state -> per-node PCIe topology (text or JSON).
#include <iostream>

#include "commands.h"
#include "input_options.h"
#include "conventions.h"
#include "topoguard/audit/cluster_state_loader.h"
#include "topoguard/audit/manifest_reader.h"
#include "topoguard/cluster/topology.h"
#include "topoguard/common/json_writer.h"
#include "topoguard/policy/policy_loader.h"

namespace topoguard::cli {

namespace {

struct TopologyOptions {
  std::vector<std::string> policies;
  std::vector<std::string> cluster_state;
  std::string format = "text";
};

int run_topology_command(const TopologyOptions& options) {
  std::vector<audit::ManifestPath> inputs;
  for (const std::string& path : options.cluster_state) {
    inputs.push_back(audit::ManifestPath{path, true});
  }
  if (!stdin_read_once("topology", options.policies, inputs)) {
    return kExitUsage;
  }
  const std::optional<policy::PolicySet> policies =
      load_command_policies("topology", options.policies);
  if (!policies) {
    return kExitUsage;
  }
  if (policies->policies().empty()) {
    std::cerr << "topoguard topology: no policy to take the alignment attribute from\n";
    return kExitUsage;
  }
  const audit::ManifestSet manifests = audit::read_manifests(options.cluster_state, std::cin);
  const audit::LoadedClusterState loaded = audit::load_cluster_state(manifests);
  for (const std::vector<Error>* errors : {&manifests.errors, &loaded.errors}) {
    for (const Error& error : *errors) {
      std::cerr << error.to_string() << '\n';
    }
  }
  // GPUs, NICs and the alignment attribute as the first policy defines them.
  const cluster::Topology topology =
      cluster::build_topology(loaded.state, policies->policies().front());
  if (options.format == "json") {
    std::cout << to_json_text(cluster::topology_to_json(topology), 2) << '\n';
  } else {
    std::cout << cluster::topology_to_text(topology);
  }
  return manifests.errors.empty() && loaded.errors.empty() ? kExitOk : kExitUsage;
}

}  // namespace

void add_topology_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<TopologyOptions>();
  CLI::App* command = app.add_subcommand(
      "topology", "Per node, the PCIe roots with their GPUs and NICs, from ResourceSlices");
  command->add_option("--cluster-state", options->cluster_state,
                      "kubectl get resourceslices,deviceclasses -A -o yaml|json output "
                      "(files, dirs, - for stdin; repeatable)")
      ->required()
      ->expected(1, -1)
      ->type_name("FILE");
  add_policies_option(*command, options->policies,
                      "the first one's GPU/NIC drivers and alignment attribute are used");
  add_output_option(*command, options->format, {"text", "json"}, "Output format: text or json");
  command->callback([options, &exit_code] { exit_code = run_topology_command(*options); });
}

}  // namespace topoguard::cli
