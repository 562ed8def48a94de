// `topoguard ab`: where a node's GPUs and RDMA NICs sit (its inventory, its sysfs, or its
// ResourceSlices) -> three ResourceClaimTemplates and Jobs (aligned, same NUMA other root, across
// NUMA) as a YAML stream on stdout; a variant the node cannot give is said on stderr and in a
// comment.
#include <charconv>
#include <iostream>

#include "commands.h"
#include "conventions.h"
#include "input_options.h"
#include "topoguard/audit/cluster_state_loader.h"
#include "topoguard/audit/manifest_reader.h"
#include "topoguard/cluster/topology.h"
#include "topoguard/common/printable_text.h"
#include "topoguard/common/text_file.h"
#include "topoguard/common/yaml_document.h"
#include "topoguard/hardware/ab_plan.h"
#include "topoguard/hardware/sysfs_facts.h"
#include "topoguard/policy/policy_loader.h"

namespace topoguard::cli {

namespace {

struct AbCommandOptions {
  hardware::AbOptions ab;
  std::string inventory;
  std::string sysfs;
  std::vector<std::string> cluster_state;
  std::vector<std::string> policies;
};

std::optional<int> numa_number(const std::optional<std::string>& text) {
  int value = 0;
  if (!text || std::from_chars(text->data(), text->data() + text->size(), value).ec != std::errc() ||
      value < 0) {
    return std::nullopt;
  }
  return value;
}

// The node's roots as its ResourceSlices publish them, GPUs and NICs recognised by the policy.
std::optional<std::vector<hardware::RootPlacement>> placements_from_slices(
    AbCommandOptions& options) {
  std::vector<audit::ManifestPath> inputs;
  for (const std::string& path : options.cluster_state) {
    inputs.push_back(audit::ManifestPath{path, true});
  }
  if (!stdin_read_once("ab", options.policies, inputs)) {
    return std::nullopt;
  }
  const std::optional<policy::PolicySet> policies = load_command_policies("ab", options.policies);
  if (!policies || policies->policies().empty()) {
    std::cerr << "topoguard ab: no policy to recognise GPUs and NICs by\n";
    return std::nullopt;
  }
  const audit::ManifestSet manifests = audit::read_manifests(options.cluster_state, std::cin);
  const audit::LoadedClusterState loaded = audit::load_cluster_state(manifests);
  bool failed = false;
  for (const std::vector<Error>* errors : {&manifests.errors, &loaded.errors}) {
    for (const Error& error : *errors) {
      std::cerr << printable(error.to_string()) << '\n';
      failed = true;
    }
  }
  if (failed) {
    return std::nullopt;
  }
  const cluster::Topology topology =
      cluster::build_topology(loaded.state, policies->policies().front());
  options.ab.root_attribute = topology.attribute;
  for (const cluster::NodeTopology& node : topology.nodes) {
    if (node.name != options.ab.node) {
      continue;
    }
    std::vector<hardware::RootPlacement> roots;
    for (const cluster::PcieRoot& root : node.roots) {
      hardware::RootPlacement placement{root.root, std::nullopt, root.gpus.size(), root.nics.size()};
      for (const auto* devices : {&root.gpus, &root.nics}) {
        for (const cluster::TopologyDevice& device : *devices) {
          placement.numa_node = placement.numa_node ? placement.numa_node : numa_number(device.numa_node);
        }
      }
      roots.push_back(std::move(placement));
    }
    return roots;
  }
  std::cerr << "topoguard ab: no GPU or NIC of node \"" << printable(options.ab.node)
            << "\" in the ResourceSlices given\n";
  return std::nullopt;
}

std::optional<std::vector<hardware::RootPlacement>> placements(AbCommandOptions& options) {
  if (!options.cluster_state.empty()) {
    return placements_from_slices(options);
  }
  if (!options.inventory.empty()) {
    Result<std::string> text = read_text_file(options.inventory, kMaxInputFileBytes);
    Result<std::vector<hardware::RootPlacement>> roots =
        text ? hardware::root_placements_from_inventory_json(*text)
             : Result<std::vector<hardware::RootPlacement>>(text.error());
    if (!roots) {
      std::cerr << "topoguard ab: " << printable(options.inventory) << ": "
                << printable(roots.error().message) << '\n';
      return std::nullopt;
    }
    return *roots;
  }
  const Result<hardware::SysfsFacts> facts = hardware::read_sysfs_facts(options.sysfs);
  if (!facts) {
    std::cerr << "topoguard ab: " << printable(facts.error().message) << '\n';
    return std::nullopt;
  }
  return hardware::root_placements(hardware::build_inventory(*facts));
}

int run_ab_command(AbCommandOptions& options) {
  const std::optional<std::vector<hardware::RootPlacement>> roots = placements(options);
  if (!roots) {
    return kExitUsage;
  }
  const std::array<hardware::AbChoice, 3> choices = hardware::choose_ab_pairs(*roots);
  std::string out =
      "# topoguard ab: node " + printable(options.ab.node) +
      ". The aligned variant keeps the GPU and NIC on one PCIe root; the others are what\n"
      "# topoguard denies by design: apply them where the policy lets them through (an exception\n"
      "# or an excluded namespace), run each Job alone, and keep its claim's allocation with the result.\n";
  bool any = false;
  for (const hardware::AbChoice& choice : choices) {
    if (!choice.gpu_root) {
      const std::string line = "no " + std::string(hardware::ab_variant_name(choice.variant)) +
                               " pair on this node: " + choice.missing_reason;
      out += "# " + line + '\n';
      note("ab", line);
    }
    any = any || choice.gpu_root.has_value();
  }
  for (const Json& manifest : hardware::ab_manifests(choices, options.ab)) {
    out += "---\n" + to_yaml(manifest);
  }
  std::cout << out;
  return any ? kExitOk : kExitFindings;
}

}  // namespace

void add_ab_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<AbCommandOptions>();
  CLI::App* command = app.add_subcommand(
      "ab",
      "A/B test of GPU-NIC placement on one node: ResourceClaimTemplates and Jobs for an aligned "
      "pair, a same-NUMA other-root pair and a cross-NUMA pair (exit 1 when the node has none)");
  command->add_option("--node", options->ab.node, "The node (its kubernetes.io/hostname)")
      ->required()
      ->type_name("NAME");
  CLI::Option_group* source = command->add_option_group("source", "Where the devices sit");
  source->add_option("--inventory", options->inventory,
                     "The node's `topoguard inventory -o json` output")
      ->type_name("FILE");
  source->add_option("--sysfs", options->sysfs, "Read the node's sysfs (run on the node)")
      ->type_name("DIR");
  source->add_option("--cluster-state", options->cluster_state,
                     "The node's ResourceSlices (kubectl get resourceslices -o yaml; files, dirs, "
                     "- for stdin; repeatable)")
      ->type_name("FILE");
  source->require_option(1);
  add_policies_option(*command, options->policies,
                      "with --cluster-state, the first one's GPU/NIC drivers and alignment "
                      "attribute are used");
  command->add_option("--gpu-class", options->ab.gpu_class, "The GPUs' DeviceClass")
      ->required()
      ->type_name("NAME");
  command->add_option("--nic-class", options->ab.nic_class, "The RDMA NICs' DeviceClass")
      ->required()
      ->type_name("NAME");
  command->add_option("--image", options->ab.image, "The benchmark's container image")
      ->required()
      ->type_name("IMAGE");
  command->add_option("--command", options->ab.command,
                      "The benchmark command, run with /bin/sh -c in each Job")
      ->required()
      ->type_name("TEXT");
  command->add_option("--namespace,-n", options->ab.namespace_name, "Namespace of the objects")
      ->capture_default_str()
      ->type_name("NAME");
  command->add_option("--name-prefix", options->ab.name_prefix,
                      "Objects are named PREFIX-aligned, PREFIX-same-numa, PREFIX-cross-numa")
      ->capture_default_str()
      ->type_name("PREFIX");
  command->callback([options, &exit_code] { exit_code = run_ab_command(*options); });
}

}  // namespace topoguard::cli
