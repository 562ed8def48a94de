#include "topoguard/hardware/pci_inventory.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <map>

#include "topoguard/common/json_writer.h"
#include "topoguard/common/printable_text.h"
#include "topoguard/hardware/slice_check.h"

#include "numa_text.h"

namespace topoguard::hardware {

namespace {

constexpr std::uint16_t kVendorNvidia = 0x10de;
constexpr std::uint16_t kVendorAmd = 0x1002;
constexpr std::uint16_t kVendorIntel = 0x8086;
constexpr std::uint8_t kClassDisplay = 0x03;  // base class: VGA 0x0300, 3D 0x0302, other 0x0380

bool is_hex_digit(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

std::vector<std::string_view> split_path(std::string_view path) {
  std::vector<std::string_view> parts;
  while (!path.empty()) {
    const std::size_t slash = path.find('/');
    parts.push_back(path.substr(0, slash));
    path = slash == std::string_view::npos ? std::string_view() : path.substr(slash + 1);
  }
  return parts;
}

// Go's filepath.Clean for a relative path: "." and empty elements dropped, ".." undoing the
// element before it (kept at the start, where there is none to undo).
std::string clean_relative_path(std::string_view path) {
  std::vector<std::string_view> kept;
  for (std::string_view part : split_path(path)) {
    if (part.empty() || part == ".") {
      continue;
    }
    if (part == ".." && !kept.empty() && kept.back() != "..") {
      kept.pop_back();
    } else {
      kept.push_back(part);
    }
  }
  std::string cleaned;
  for (std::string_view part : kept) {
    cleaned += (cleaned.empty() ? "" : "/") + std::string(part);
  }
  return cleaned.empty() ? "." : cleaned;
}

// Go's filepath.Base: the last element, trailing slashes ignored.
std::string_view base_name(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') {
    path.remove_suffix(1);
  }
  const std::size_t slash = path.rfind('/');
  return slash == std::string_view::npos || path.size() == 1 ? path : path.substr(slash + 1);
}

// The link target as Kubernetes resolves it: relative ones from bus/pci/devices, cleaned.
std::string resolved_link(std::string_view link_target) {
  return !link_target.empty() && link_target.front() == '/'
             ? std::string(link_target)
             : clean_relative_path("bus/pci/devices/" + std::string(link_target));
}

std::string vendor_name(std::optional<std::uint16_t> vendor) {
  if (!vendor) {
    return "unknown";
  }
  switch (*vendor) {
    case kVendorNvidia: return "nvidia";
    case kVendorAmd: return "amd";
    case kVendorIntel: return "intel";
    case 0x15b3: return "mellanox";
    case 0x1d0f: return "amazon";
    case 0x14e4: return "broadcom";
    default: break;
  }
  char text[8];
  std::snprintf(text, sizeof text, "0x%04x", *vendor);
  return text;
}

bool is_gpu(const PciFunctionFacts& facts) {
  return facts.class_code && (*facts.class_code >> 16) == kClassDisplay && facts.vendor &&
         (*facts.vendor == kVendorNvidia || *facts.vendor == kVendorAmd ||
          *facts.vendor == kVendorIntel);
}

// numa_node as the kernel writes it ("0", "-1"); none, with a problem line, for anything else.
std::optional<int> read_numa_node(const PciFunctionFacts& facts, std::vector<std::string>& problems) {
  if (!facts.numa_node_text) {
    problems.push_back(facts.address + ": numa_node could not be read; NUMA node unknown");
    return std::nullopt;
  }
  const std::string& text = *facts.numa_node_text;
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < -1) {
    problems.push_back(facts.address + ": numa_node \"" + text + "\" is no NUMA node; unknown");
    return std::nullopt;
  }
  return value;
}

InventoryDevice make_device(const PciFunctionFacts& facts, DeviceKind kind,
                            const std::map<std::string_view, const PciFunctionFacts*>& by_address,
                            std::vector<std::string>& problems) {
  InventoryDevice device;
  device.kind = kind;
  device.address = facts.address;
  device.vendor = vendor_name(facts.vendor);
  device.device_id = facts.device;
  Result<std::string> root = pcie_root_from_link(facts.address, facts.link_target);
  if (root) {
    device.pcie_root = *root;
    const std::string resolved = resolved_link(facts.link_target);  // the views below point in
    const std::vector<std::string_view> parts = split_path(resolved);
    // devices/<root>/<bridge>/.../<address>
    for (std::size_t i = 2; i + 1 < parts.size(); ++i) {
      device.bridges.emplace_back(parts[i]);
    }
  } else {
    device.pcie_root_error = root.error().message;
    problems.push_back(facts.address + ": " + root.error().message);
  }
  device.numa_node = read_numa_node(facts, problems);
  device.physfn = facts.physfn;
  device.rdma_devices = facts.rdma_devices;
  device.net_interfaces = facts.net_interfaces;
  if (kind == DeviceKind::kGpu && facts.vendor == kVendorNvidia && !device.bridges.empty()) {
    const auto root_port = by_address.find(device.bridges.front());
    device.c2c = root_port != by_address.end() && root_port->second->vendor == kVendorNvidia;
  }
  return device;
}

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) {
    text += (text.empty() ? "" : ",") + printable(name);
  }
  return text.empty() ? "-" : text;
}

// Lines of a table end without the padding of their last cell.
void end_line(std::string& out) {
  while (!out.empty() && out.back() == ' ') {
    out.pop_back();
  }
  out += '\n';
}

std::string padded(std::string text, std::size_t width) {
  text.resize(std::max(width, text.size()), ' ');
  return text;
}

}  // namespace

bool is_pci_bus_id(std::string_view address) {
  static constexpr std::string_view kShape = "hhhh:hh:hh.h";
  if (address.size() != kShape.size()) {
    return false;
  }
  for (std::size_t i = 0; i < kShape.size(); ++i) {
    if (kShape[i] == 'h' ? !is_hex_digit(address[i]) : address[i] != kShape[i]) {
      return false;
    }
  }
  return true;
}

Result<std::string> pcie_root_from_link(std::string_view address, std::string_view link_target) {
  if (address.empty()) {
    return Error{ErrorCode::kInvalidValue, "PCI Bus ID cannot be empty", {}};
  }
  if (!is_pci_bus_id(address)) {
    return Error{ErrorCode::kInvalidValue,
                 "invalid PCI Bus ID format: " + std::string(address), {}};
  }
  if (link_target.empty()) {
    return Error{ErrorCode::kIo, "bus/pci/devices/" + std::string(address) + " is no symlink", {}};
  }
  const std::string target = resolved_link(link_target);
  if (!target.starts_with("devices/pci")) {
    return Error{ErrorCode::kInvalidValue,
                 "symlink target for PCI Bus ID " + std::string(address) +
                     " is invalid: it must start with devices/pci: " + target, {}};
  }
  if (base_name(target) != address) {
    return Error{ErrorCode::kInvalidValue,
                 "symlink target for PCI Bus ID " + std::string(address) +
                     " is invalid: it must end with " + std::string(address) + ": " + target, {}};
  }
  const std::string_view below_devices = std::string_view(target).substr(std::string_view("devices/").size());
  return std::string(below_devices.substr(0, below_devices.find('/')));
}

std::string_view path_class_name(PathClass path_class) {
  switch (path_class) {
    case PathClass::kPix: return "PIX";
    case PathClass::kPxb: return "PXB";
    case PathClass::kPhb: return "PHB";
    case PathClass::kNode: return "NODE";
    case PathClass::kSys: return "SYS";
    case PathClass::kUnknown: break;
  }
  return "?";
}

std::string_view path_class_meaning(PathClass path_class) {
  switch (path_class) {
    case PathClass::kPix: return "at most one PCIe switch between them";
    case PathClass::kPxb: return "several PCIe switches, not through the host bridge";
    case PathClass::kPhb: return "same PCIe root, through its host bridge";
    case PathClass::kNode: return "same NUMA node, other PCIe root";
    case PathClass::kSys: return "across NUMA nodes";
    case PathClass::kUnknown: break;
  }
  return "unknown: a PCIe root or NUMA node could not be read";
}

PathClass path_class(const InventoryDevice& gpu, const InventoryDevice& nic) {
  if (!gpu.pcie_root || !nic.pcie_root) {
    return PathClass::kUnknown;
  }
  if (*gpu.pcie_root != *nic.pcie_root) {
    if (!gpu.numa_node || !nic.numa_node || *gpu.numa_node < 0 || *nic.numa_node < 0) {
      return PathClass::kUnknown;
    }
    return *gpu.numa_node == *nic.numa_node ? PathClass::kNode : PathClass::kSys;
  }
  const auto [gpu_end, nic_end] = std::mismatch(gpu.bridges.begin(), gpu.bridges.end(),
                                                nic.bridges.begin(), nic.bridges.end());
  const auto shared = static_cast<std::size_t>(gpu_end - gpu.bridges.begin());
  if (shared == 0) {
    return PathClass::kPhb;
  }
  // Below the lowest shared bridge, one bridge on each side is a switch's downstream port: the
  // path crosses one switch. More on either side is another switch.
  const std::size_t gpu_below = gpu.bridges.size() - shared;
  const std::size_t nic_below = nic.bridges.size() - shared;
  return gpu_below <= 1 && nic_below <= 1 ? PathClass::kPix : PathClass::kPxb;
}

std::vector<std::size_t> NodeInventory::matrix_nics() const {
  std::vector<std::size_t> indexes;
  for (std::size_t i = 0; i < nics.size(); ++i) {
    if (nics[i].physfn.empty()) {
      indexes.push_back(i);
    }
  }
  return indexes;
}

NodeInventory build_inventory(const SysfsFacts& facts) {
  NodeInventory inventory;
  inventory.problems = facts.problems;
  std::map<std::string_view, const PciFunctionFacts*> by_address;
  for (const PciFunctionFacts& function : facts.functions) {
    by_address.emplace(function.address, &function);
  }
  for (const auto& [address, function] : by_address) {
    if (is_gpu(*function)) {
      inventory.gpus.push_back(make_device(*function, DeviceKind::kGpu, by_address, inventory.problems));
    } else if (!function->rdma_devices.empty()) {
      inventory.nics.push_back(
          make_device(*function, DeviceKind::kRdmaNic, by_address, inventory.problems));
    } else {
      inventory.others.push_back(
          make_device(*function, DeviceKind::kOther, by_address, inventory.problems));
    }
  }
  return inventory;
}

std::string inventory_to_text(const NodeInventory& inventory) {
  std::string out;
  const auto device_line = [&out](const InventoryDevice& device, std::string_view what) {
    out += "  " + padded(printable(device.address), 13) + padded(std::string(what), 8) +
           padded(printable(device.vendor), 9) + " root " +
           padded(device.pcie_root ? printable(*device.pcie_root) : "unknown", 11) + " numa " +
           padded(numa_text(device.numa_node), 7);
    if (device.kind == DeviceKind::kRdmaNic) {
      out += " rdma " + joined(device.rdma_devices) + " net " + joined(device.net_interfaces);
    }
    if (!device.physfn.empty()) {
      out += " vf-of " + printable(device.physfn);
    }
    if (device.c2c) {
      out += " c2c";
    }
    end_line(out);
  };
  out += "GPUs (" + std::to_string(inventory.gpus.size()) + "):\n";
  for (const InventoryDevice& gpu : inventory.gpus) {
    device_line(gpu, "gpu");
  }
  out += "RDMA NICs (" + std::to_string(inventory.nics.size()) + "):\n";
  for (const InventoryDevice& nic : inventory.nics) {
    device_line(nic, nic.physfn.empty() ? "nic" : "nic-vf");
  }
  const std::vector<std::size_t> columns = inventory.matrix_nics();
  if (!inventory.gpus.empty() && !columns.empty()) {
    out += "GPU x NIC path (nvidia-smi topo -m classes; VFs share their PF's column):\n";
    out += padded("", 14);
    for (std::size_t column : columns) {
      out += ' ' + padded(printable(inventory.nics[column].address), 12);
    }
    end_line(out);
    for (const InventoryDevice& gpu : inventory.gpus) {
      out += padded(printable(gpu.address), 14);
      for (std::size_t column : columns) {
        out += ' ' + padded(std::string(path_class_name(path_class(gpu, inventory.nics[column]))), 12);
      }
      end_line(out);
    }
    out += "Legend:\n";
    for (PathClass path : {PathClass::kPix, PathClass::kPxb, PathClass::kPhb, PathClass::kNode,
                           PathClass::kSys, PathClass::kUnknown}) {
      out += "  " + padded(std::string(path_class_name(path)), 5) + ' ' +
             std::string(path_class_meaning(path)) + '\n';
    }
  }
  if (std::any_of(inventory.gpus.begin(), inventory.gpus.end(),
                  [](const InventoryDevice& gpu) { return gpu.c2c; })) {
    out += "c2c: the GPU reaches its CPU by a chip-to-chip link, not PCIe (the path to a NIC "
           "still crosses PCIe)\n";
  }
  if (!inventory.problems.empty()) {
    out += "Problems (" + std::to_string(inventory.problems.size()) + "):\n";
    for (const std::string& problem : inventory.problems) {
      out += "  " + printable(problem) + '\n';
    }
  }
  return out;
}

std::string inventory_to_json(const NodeInventory& inventory, const SliceCheck* check,
                              std::string_view node) {
  std::string out;
  JsonWriter json(out, 2);
  const auto device = [&json](const InventoryDevice& item) {
    json.begin_object().member("pciBusID", item.address).member("vendor", item.vendor);
    if (item.device_id) {
      char device_id[8];
      std::snprintf(device_id, sizeof device_id, "0x%04x", *item.device_id);
      json.member("deviceID", device_id);
    }
    json.key("pcieRoot");
    item.pcie_root ? json.string(*item.pcie_root) : json.null();
    if (!item.pcie_root_error.empty()) {
      json.member("pcieRootError", item.pcie_root_error);
    }
    json.key("numaNode");
    item.numa_node ? json.number(static_cast<std::int64_t>(*item.numa_node)) : json.null();
    json.key("bridges").begin_array();
    for (const std::string& bridge : item.bridges) {
      json.string(bridge);
    }
    json.end_array();
    if (item.kind == DeviceKind::kGpu) {
      json.member("attach", item.c2c ? "c2c" : "pcie");
    } else {
      json.key("rdmaDevices").begin_array();
      for (const std::string& name : item.rdma_devices) {
        json.string(name);
      }
      json.end_array().key("netInterfaces").begin_array();
      for (const std::string& name : item.net_interfaces) {
        json.string(name);
      }
      json.end_array();
      if (!item.physfn.empty()) {
        json.member("physfn", item.physfn);
      }
    }
    json.end_object();
  };
  json.begin_object().member("kind", "topoguard.inventory/v1");
  if (!node.empty()) {
    json.member("node", node);
  }
  json.key("gpus").begin_array();
  std::for_each(inventory.gpus.begin(), inventory.gpus.end(), device);
  json.end_array().key("nics").begin_array();
  std::for_each(inventory.nics.begin(), inventory.nics.end(), device);
  json.end_array().key("paths").begin_array();
  for (const InventoryDevice& gpu : inventory.gpus) {
    for (std::size_t column : inventory.matrix_nics()) {
      json.begin_object()
          .member("gpu", gpu.address)
          .member("nic", inventory.nics[column].address)
          .member("class", path_class_name(path_class(gpu, inventory.nics[column])))
          .end_object();
    }
  }
  json.end_array().key("problems").begin_array();
  for (const std::string& problem : inventory.problems) {
    json.string(problem);
  }
  json.end_array();
  if (check != nullptr) {
    json.key("sliceCheck");
    write_slice_check_json(json, *check);
  }
  json.end_object();
  out += '\n';
  return out;
}

}  // namespace topoguard::hardware
