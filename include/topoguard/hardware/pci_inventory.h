// A node's GPUs and RDMA NICs from its sysfs: PCI address, PCIe root (as Kubernetes computes
// resource.kubernetes.io/pcieRoot), NUMA node and the GPU x NIC path classes nvidia-smi topo -m
// names. Reading sysfs (sysfs_facts.h) and computing from what was read (here) are kept apart:
// everything here is pure, so fixtures and odd input are tested without a machine.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "topoguard/common/result.h"

namespace topoguard::hardware {

// What sysfs holds for one PCI function, as read: any file may be missing or odd, so every field
// says "unknown" on its own.
struct PciFunctionFacts {
  std::string address;      // its name under bus/pci/devices
  std::string link_target;  // the text of that symlink; empty when it could not be read
  std::optional<std::uint32_t> class_code;  // 0x030200
  std::optional<std::uint16_t> vendor;
  std::optional<std::uint16_t> device;
  std::optional<std::string> numa_node_text;  // numa_node, trimmed
  std::string physfn;                          // the PF's address for an SR-IOV VF
  std::vector<std::string> rdma_devices;       // class/infiniband entries on this function
  std::vector<std::string> net_interfaces;     // class/net entries on this function
};

struct SysfsFacts {
  std::vector<PciFunctionFacts> functions;
  // What could not be read or made sense of, one line each ("class/infiniband/loop0: ...").
  std::vector<std::string> problems;
};

// Kubernetes' rule for resource.kubernetes.io/pcieRoot (deviceattribute.GetPCIeRootAttribute-
// ByPCIBusID, v0.37.2; docs/inventory.md restates it): `address` must be extended BDF in lower
// case; `link_target` is the text of bus/pci/devices/<address>, joined to bus/pci/devices and
// cleaned when relative (an absolute one is taken as it is), must start with "devices/pci" and
// end with `address`; the root is its first element after "devices/" ("pci0000:00").
[[nodiscard]] Result<std::string> pcie_root_from_link(std::string_view address,
                                                      std::string_view link_target);

// Whether `address` is extended BDF as Kubernetes checks it: ^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-9a-f]$.
[[nodiscard]] bool is_pci_bus_id(std::string_view address);

enum class DeviceKind : std::uint8_t { kGpu, kRdmaNic, kOther };

struct InventoryDevice {
  DeviceKind kind = DeviceKind::kGpu;
  std::string address;
  std::string vendor;  // "nvidia", "amd", "intel", "mellanox", "amazon", else "0x1234"
  std::optional<std::uint16_t> device_id;
  std::optional<std::string> pcie_root;  // none when Kubernetes' rule gives an error
  std::string pcie_root_error;
  std::optional<int> numa_node;  // -1 (no affinity) kept; none when numa_node is unreadable
  std::vector<std::string> bridges;  // the PCI functions between the root and the device
  std::string physfn;                // a VF's PF
  std::vector<std::string> rdma_devices;
  std::vector<std::string> net_interfaces;
  // A GPU that reaches its CPU by a chip-to-chip link (Grace: GH200, GB200), known by an
  // NVIDIA GPU behind an NVIDIA root port; its PCIe path to a NIC still has a class.
  bool c2c = false;
};

// How a GPU reaches a NIC, as nvidia-smi topo -m names it.
enum class PathClass : std::uint8_t {
  kPix,      // at most one PCIe switch (or the same root port)
  kPxb,      // several PCIe switches, not through the host bridge
  kPhb,      // through the PCIe host bridge: same root, no bridge in common
  kNode,     // other root on the same NUMA node
  kSys,      // across NUMA nodes
  kUnknown,  // a root or a NUMA node is unknown (or -1 with the roots apart)
};

[[nodiscard]] std::string_view path_class_name(PathClass path_class);
// What a class means, for legends and messages.
[[nodiscard]] std::string_view path_class_meaning(PathClass path_class);

[[nodiscard]] PathClass path_class(const InventoryDevice& gpu, const InventoryDevice& nic);

struct NodeInventory {
  std::vector<InventoryDevice> gpus;  // by address
  std::vector<InventoryDevice> nics;  // RDMA NICs (PFs and VFs), by address
  // Every other PCI function (bridges, Ethernet NICs without RDMA, storage): not reported, but
  // what a driver publishes for one is still checked (slice_check.h).
  std::vector<InventoryDevice> others;
  std::vector<std::string> problems;
  // The NICs of the matrix: those that are no VF (a VF has its PF's path); indexes into nics.
  [[nodiscard]] std::vector<std::size_t> matrix_nics() const;
};

// The GPUs (display/3D controllers of NVIDIA, AMD, Intel) and RDMA NICs (functions that carry an
// infiniband device) of `facts`.
[[nodiscard]] NodeInventory build_inventory(const SysfsFacts& facts);

// Human-readable report: devices, then the GPU x NIC matrix with a legend. Input is escaped.
[[nodiscard]] std::string inventory_to_text(const NodeInventory& inventory);
struct SliceCheck;
// The same as a JSON document (topoguard.inventory/v1), with "node" when `node` is not empty
// (inventory --node) and "sliceCheck" when `check` is given.
[[nodiscard]] std::string inventory_to_json(const NodeInventory& inventory,
                                            const SliceCheck* check = nullptr,
                                            std::string_view node = {});

}  // namespace topoguard::hardware
