#include "topoguard/hardware/pci_inventory.h"

#include <gtest/gtest.h>

namespace topoguard::hardware {
namespace {

std::string root_or_error(std::string_view address, std::string_view link) {
  const Result<std::string> root = pcie_root_from_link(address, link);
  return root ? *root : "error: " + root.error().message;
}

// The kernel's relative link, cleaned from bus/pci/devices as Go's filepath.Clean does.
TEST(PcieRootTest, RelativeLinkGivesTheHostBridge) {
  EXPECT_EQ(root_or_error("0000:3b:00.0",
                          "../../../devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0"),
            "pci0000:3a");
  EXPECT_EQ(root_or_error("0000:3b:00.0", "./../../.././devices//pci0000:3a/0000:3b:00.0/"),
            "pci0000:3a");
}

// Kubernetes' checks, in its order and with its words: BDF shape (lower case, one function
// digit), prefix devices/pci, last element the address; absolute targets are not joined and so
// fail the prefix check; climbing above the sysfs root fails it too.
TEST(PcieRootTest, RejectsWhatKubernetesRejects) {
  EXPECT_EQ(root_or_error("", "x"), "error: PCI Bus ID cannot be empty");
  EXPECT_EQ(root_or_error("0000:3B:00.0", "../../../devices/pci0000:3a/0000:3B:00.0"),
            "error: invalid PCI Bus ID format: 0000:3B:00.0");
  EXPECT_EQ(root_or_error("0000:3b:00.10", "x"), "error: invalid PCI Bus ID format: 0000:3b:00.10");
  EXPECT_EQ(root_or_error("0000:3b:00.0", "/sys/devices/pci0000:3a/0000:3b:00.0"),
            "error: symlink target for PCI Bus ID 0000:3b:00.0 is invalid: it must start with "
            "devices/pci: /sys/devices/pci0000:3a/0000:3b:00.0");
  EXPECT_EQ(root_or_error("0000:3b:00.0", "../../../../devices/pci0000:3a/0000:3b:00.0"),
            "error: symlink target for PCI Bus ID 0000:3b:00.0 is invalid: it must start with "
            "devices/pci: ../devices/pci0000:3a/0000:3b:00.0");
  EXPECT_EQ(root_or_error("0000:3b:00.0", "../../../devices/pci0000:3a/0000:3b:00.1"),
            "error: symlink target for PCI Bus ID 0000:3b:00.0 is invalid: it must end with "
            "0000:3b:00.0: devices/pci0000:3a/0000:3b:00.1");
  // Only the prefix is checked: a root that is no host bridge name is still Kubernetes' answer.
  EXPECT_EQ(root_or_error("0000:3b:00.0", "../../../devices/pcifoo/0000:3b:00.0"), "pcifoo");
}

InventoryDevice device(std::string root, int numa, std::vector<std::string> bridges) {
  InventoryDevice out;
  out.pcie_root = std::move(root);
  out.numa_node = numa;
  out.bridges = std::move(bridges);
  return out;
}

// The classes of nvidia-smi topo -m from the bridge chains and NUMA nodes.
TEST(PathClassTest, FromBridgesAndNuma) {
  const InventoryDevice gpu = device("pci0000:00", 0, {"rp", "up", "down-1"});
  EXPECT_EQ(path_class(gpu, device("pci0000:00", 0, {"rp", "up", "down-2"})), PathClass::kPix);
  EXPECT_EQ(path_class(gpu, device("pci0000:00", 0, {"rp", "up", "down-1"})), PathClass::kPix);
  EXPECT_EQ(path_class(gpu, device("pci0000:00", 0, {"rp", "up", "down-2", "up-2", "down-3"})),
            PathClass::kPxb);
  EXPECT_EQ(path_class(gpu, device("pci0000:00", 0, {"rp-2"})), PathClass::kPhb);
  EXPECT_EQ(path_class(device("pci0000:00", -1, {}), device("pci0000:00", -1, {})), PathClass::kPhb);
  EXPECT_EQ(path_class(gpu, device("pci0000:40", 0, {"rp"})), PathClass::kNode);
  EXPECT_EQ(path_class(gpu, device("pci0000:80", 1, {"rp"})), PathClass::kSys);
  // Roots apart and a NUMA node unknown or without affinity: no guess.
  EXPECT_EQ(path_class(gpu, device("pci0000:80", -1, {"rp"})), PathClass::kUnknown);
  InventoryDevice rootless = device("", 0, {});
  rootless.pcie_root.reset();
  EXPECT_EQ(path_class(gpu, rootless), PathClass::kUnknown);
}

PciFunctionFacts function(std::string address, std::string link, std::uint32_t class_code,
                          std::uint16_t vendor, std::string numa) {
  PciFunctionFacts facts;
  facts.address = std::move(address);
  facts.link_target = std::move(link);
  facts.class_code = class_code;
  facts.vendor = vendor;
  facts.numa_node_text = std::move(numa);
  return facts;
}

// GPUs by class and vendor (a BMC's VGA is none), NICs by an RDMA device, VFs by physfn, C2C by
// an NVIDIA root port; a numa_node that is no number is unknown, with a problem line.
TEST(BuildInventoryTest, ClassifiesAndKeepsUnknowns) {
  SysfsFacts facts;
  facts.functions.push_back(function("0000:00:01.0", "../../../devices/pci0000:00/0000:00:01.0",
                                     0x060400, 0x10de, "0"));
  facts.functions.push_back(function("0000:01:00.0",
                                     "../../../devices/pci0000:00/0000:00:01.0/0000:01:00.0",
                                     0x030200, 0x10de, "x"));
  facts.functions.push_back(function("0000:02:00.0", "../../../devices/pci0000:02/0000:02:00.0",
                                     0x030000, 0x1a03, "0"));
  PciFunctionFacts nic = function("0000:03:00.1", "../../../devices/pci0000:02/0000:03:00.1",
                                  0x020000, 0x15b3, "-1");
  nic.physfn = "0000:03:00.0";
  nic.rdma_devices = {"mlx5_3"};
  facts.functions.push_back(nic);
  const NodeInventory inventory = build_inventory(facts);
  ASSERT_EQ(inventory.gpus.size(), 1U);
  EXPECT_TRUE(inventory.gpus[0].c2c);
  EXPECT_FALSE(inventory.gpus[0].numa_node.has_value());
  ASSERT_EQ(inventory.nics.size(), 1U);
  EXPECT_EQ(inventory.nics[0].numa_node, -1);
  EXPECT_TRUE(inventory.matrix_nics().empty());  // a VF has its PF's column
  EXPECT_EQ(inventory.others.size(), 2U);
  ASSERT_EQ(inventory.problems.size(), 1U);
  EXPECT_EQ(inventory.problems[0], "0000:01:00.0: numa_node \"x\" is no NUMA node; unknown");
}

}  // namespace
}  // namespace topoguard::hardware
