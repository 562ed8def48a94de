// `topoguard topology`: flags -> read cluster state -> per-node PCIe topology (text or JSON), and
// with node inventories (--inventory files, or the nodes' ClusterReports among the cluster
// state) what each node's sysfs says beside what its drivers publish.
#include <iostream>

#include "commands.h"
#include "input_options.h"
#include "conventions.h"
#include "topoguard/audit/cluster_state_loader.h"
#include "topoguard/audit/manifest_reader.h"
#include "topoguard/cluster/topology.h"
#include "topoguard/common/json_reader.h"
#include "topoguard/common/json_writer.h"
#include "topoguard/common/printable_text.h"
#include "topoguard/common/text_file.h"
#include "topoguard/hardware/inventory_beside_slices.h"
#include "topoguard/policy/policy_loader.h"

namespace topoguard::cli {

namespace {

struct TopologyOptions {
  std::vector<std::string> policies;
  std::vector<std::string> cluster_state;
  std::vector<std::string> inventories;  // [NODE=]FILE
  std::string format = "text";
};

constexpr int kInventoryJsonDepth = 16;

// `--inventory [NODE=]FILE`: the output of `topoguard inventory -o json`; NODE names the node when
// the inventory was run without --node. Errors name the file.
Result<hardware::SourcedNodeView> read_inventory_file(const std::string& argument) {
  std::string node;
  std::string path = argument;
  if (const std::size_t equals = argument.find('=');
      equals != std::string::npos && argument.find('/') > equals) {
    node = argument.substr(0, equals);
    path = argument.substr(equals + 1);
  }
  const auto in_file = [&path](Error error) {
    error.message = path + ": " + error.message;
    return error;
  };
  Result<std::string> text = read_text_file(path, kMaxInputFileBytes);
  if (!text) {
    return in_file(text.error());
  }
  Result<Json> document = read_json(*text, kInventoryJsonDepth);
  if (!document) {
    return in_file(document.error());
  }
  Result<hardware::NodeSysfsView> view = hardware::node_view_from_inventory_json(*document, node);
  if (!view) {
    return in_file(view.error());
  }
  return hardware::SourcedNodeView{path, std::move(*view)};
}

// The nodes' inventory reports among the manifests (kubectl get clusterreports -o yaml).
std::vector<hardware::SourcedNodeView> inventory_reports(const audit::ManifestSet& manifests,
                                                         std::vector<Error>& errors) {
  std::vector<hardware::SourcedNodeView> views;
  for (const audit::Manifest& manifest : manifests.manifests) {
    if (!hardware::is_node_inventory_report(*manifest.object)) {
      continue;
    }
    Result<hardware::NodeSysfsView> view = hardware::node_view_from_report(*manifest.object);
    if (!view) {
      Error error = view.error();
      error.location.file = manifests.path_of(manifest);
      error.location.line = manifests.line_of(manifest, "");
      errors.push_back(std::move(error));
      continue;
    }
    const Json* name = find_at(*manifest.object, "/metadata/name");
    views.push_back(hardware::SourcedNodeView{
        "ClusterReport " + (name != nullptr && name->is_string() ? name->get<std::string>() : ""),
        std::move(*view)});
  }
  return views;
}

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
  std::vector<Error> inventory_errors;
  std::vector<hardware::SourcedNodeView> inventories = inventory_reports(manifests, inventory_errors);
  for (const std::string& argument : options.inventories) {
    Result<hardware::SourcedNodeView> inventory = read_inventory_file(argument);
    if (inventory) {
      inventories.push_back(std::move(*inventory));
    } else {
      inventory_errors.push_back(inventory.error());
    }
  }
  for (const std::vector<Error>* errors :
       {&manifests.errors, &loaded.errors, static_cast<const std::vector<Error>*>(&inventory_errors)}) {
    for (const Error& error : *errors) {
      std::cerr << printable(error.to_string()) << '\n';
    }
  }
  // GPUs, NICs and the alignment attribute as the first policy defines them.
  const cluster::Topology topology =
      cluster::build_topology(loaded.state, policies->policies().front());
  if (options.format == "json") {
    Json document = cluster::topology_to_json(topology);
    if (!inventories.empty()) {
      document["inventory"] = hardware::inventory_beside_slices_json(inventories, topology);
    }
    std::cout << to_json_text(document, 2) << '\n';
  } else {
    std::cout << cluster::topology_to_text(topology)
              << hardware::inventory_beside_slices_text(inventories, topology);
  }
  return manifests.errors.empty() && loaded.errors.empty() && inventory_errors.empty()
             ? kExitOk
             : kExitUsage;
}

}  // namespace

void add_topology_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<TopologyOptions>();
  CLI::App* command = app.add_subcommand(
      "topology", "Per node, the PCIe roots with their GPUs and NICs, from ResourceSlices, and "
      "beside them what the node's sysfs says when its inventory is given");
  command->add_option("--cluster-state", options->cluster_state,
                      "kubectl get resourceslices,deviceclasses -A -o yaml|json output "
                      "(files, dirs, - for stdin; repeatable)")
      ->required()
      ->expected(1, -1)
      ->type_name("FILE");
  command
      ->add_option("--inventory", options->inventories,
                   "A node's inventory (topoguard inventory -o json), shown beside what its "
                   "drivers publish; NODE= names the node when it was taken without --node "
                   "(repeatable). The nodes' inventory ClusterReports (kubectl get clusterreports "
                   "-l topoguard.dev/node-inventory=true -o yaml) are read from --cluster-state")
      ->type_name("[NODE=]FILE");
  add_policies_option(*command, options->policies,
                      "the first one's GPU/NIC drivers and alignment attribute are used");
  add_output_option(*command, options->format, {"text", "json"}, "Output format: text or json");
  command->callback([options, &exit_code] { exit_code = run_topology_command(*options); });
}

}  // namespace topoguard::cli
