// `topoguard inventory`: flags -> read sysfs (the only I/O) -> the node's GPUs, RDMA NICs and
// GPU x NIC path classes (text or JSON).
#include <iostream>

#include "commands.h"
#include "conventions.h"
#include "topoguard/common/printable_text.h"
#include "topoguard/hardware/pci_inventory.h"
#include "topoguard/hardware/sysfs_facts.h"

namespace topoguard::cli {

namespace {

struct InventoryOptions {
  std::string sysfs = "/sys";
  std::string format = "text";
};

int run_inventory_command(const InventoryOptions& options) {
  const Result<hardware::SysfsFacts> facts = hardware::read_sysfs_facts(options.sysfs);
  if (!facts) {
    std::cerr << "topoguard inventory: " << printable(facts.error().message) << '\n';
    return kExitUsage;
  }
  const hardware::NodeInventory inventory = hardware::build_inventory(*facts);
  std::cout << (options.format == "json" ? hardware::inventory_to_json(inventory)
                                         : hardware::inventory_to_text(inventory));
  return kExitOk;
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
  add_output_option(*command, options->format, {"text", "json"}, "Output format: text or json");
  command->callback([options, &exit_code] { exit_code = run_inventory_command(*options); });
}

}  // namespace topoguard::cli
