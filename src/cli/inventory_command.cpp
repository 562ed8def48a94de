// `topoguard inventory`: flags -> read sysfs (the only I/O) -> the node's GPUs, RDMA NICs and
// GPU x NIC path classes (text or JSON).
#include <iostream>

#include "cluster_slices.h"
#include "commands.h"
#include "conventions.h"
#include "topoguard/audit/manifest_reader.h"
#include "topoguard/common/printable_text.h"
#include "topoguard/hardware/pci_inventory.h"
#include "topoguard/hardware/slice_check.h"
#include "topoguard/hardware/sysfs_facts.h"
#include "topoguard/k8s/kinds.h"

namespace topoguard::cli {

namespace {

struct InventoryOptions {
  std::string sysfs = "/sys";
  std::string format = "text";
  std::vector<std::string> compare_slices;
  bool cluster = false;
  std::string node;
  kube::LoadOptions kube;
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
  for (const audit::Manifest& manifest : manifests.manifests) {
    if (k8s::resource_kind(*manifest.object) != k8s::ResourceKind::kResourceSlice) {
      continue;
    }
    Result<k8s::ParsedSlicePtr> slice = k8s::read_resource_slice(*manifest.object);
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

int run_inventory_command(const InventoryOptions& options) {
  const Result<hardware::SysfsFacts> facts = hardware::read_sysfs_facts(options.sysfs);
  if (!facts) {
    std::cerr << "topoguard inventory: " << printable(facts.error().message) << '\n';
    return kExitUsage;
  }
  const hardware::NodeInventory inventory = hardware::build_inventory(*facts);
  std::optional<hardware::SliceCheck> check;
  if (!options.compare_slices.empty() || options.cluster) {
    std::optional<std::vector<k8s::ParsedSlicePtr>> slices;
    if (options.cluster) {
      const std::shared_ptr<kube::ApiClient> client = make_api_client("inventory", options.kube);
      slices = client ? list_cluster_slices("inventory", *client) : std::nullopt;
    } else {
      slices = read_slices(options.compare_slices);
    }
    if (!slices) {
      return kExitUsage;
    }
    check = hardware::check_slices(inventory, *slices, options.node);
  }
  if (options.format == "sarif" || options.format == "junit") {
    if (!check) {
      std::cerr << "topoguard inventory: -o " << options.format
                << " writes the findings of --compare-slices or --cluster; give one\n";
      return kExitUsage;
    }
    std::cout << (options.format == "sarif"
                      ? hardware::slice_check_to_sarif(*check, TOPOGUARD_VERSION)
                      : hardware::slice_check_to_junit(*check));
  } else if (options.format == "json") {
    std::cout << hardware::inventory_to_json(inventory, check ? &*check : nullptr);
  } else {
    std::cout << hardware::inventory_to_text(inventory)
              << (check ? hardware::slice_check_to_text(*check) : std::string());
  }
  return check && !check->mismatches.empty() ? kExitFindings : kExitOk;
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
  add_output_option(*command, options->format, {"text", "json", "sarif", "junit"},
                    "Output format: text or json (the inventory, and the findings of "
                    "--compare-slices), sarif or junit (those findings only)");
  command->callback([options, &exit_code] { exit_code = run_inventory_command(*options); });
}

}  // namespace topoguard::cli
