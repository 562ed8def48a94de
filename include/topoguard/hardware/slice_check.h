// Drivers checked against the node: what each DRA driver publishes for a node's devices
// (resource.kubernetes.io/pcieRoot, numaNode, pciBusID, and the PCI address and NUMA node DRANET
// publishes under dra.net/) set against the node's inventory. Every disagreement is an
// `attribute-mismatch` finding (warn): a wrong pcieRoot makes the matchAttribute constraint pair
// devices that are not aligned. Pure: slices and inventory in, findings out.
#pragma once

#include <string>
#include <vector>

#include "topoguard/common/json_writer.h"
#include "topoguard/hardware/pci_inventory.h"
#include "topoguard/k8s/resource_slice.h"

namespace topoguard::hardware {

inline constexpr std::string_view kAttributeMismatchRule = "attribute-mismatch";

struct AttributeMismatch {
  std::size_t checked = 0;  // index of the device in SliceCheck::checked
  std::string slice;      // metadata.name of the ResourceSlice
  std::string driver;
  std::string pool;
  std::string device;     // the device's name in the slice
  std::string attribute;  // qualified name, as published
  std::string published;  // the value, as AttributeValue::to_string gives it
  std::string sysfs;      // what the node's sysfs says ("no such PCI function", "-1", ...)
  std::string message;
};

// A device of the node that publishes a PCI address, so could be checked.
struct CheckedDevice {
  std::string slice;
  std::string id;  // "<driver>/<pool>/<device>"
  std::string address;
};

struct SliceCheck {
  std::vector<CheckedDevice> checked;
  std::size_t devices_without_address = 0;
  std::vector<AttributeMismatch> mismatches;
};

// The devices of `slices` that are on `node` (spec.nodeName) against `inventory`; a device is
// found on the node by its published PCI address (resource.kubernetes.io/pciBusID, else
// dra.net/pciAddress) among all the inventory's PCI functions.
[[nodiscard]] SliceCheck check_slices(const NodeInventory& inventory,
                                      const std::vector<k8s::ParsedSlicePtr>& slices,
                                      const std::string& node);

// The findings as text lines ("warn attribute-mismatch ..."), input escaped; and as the JSON
// value the inventory's -o json holds under "sliceCheck".
[[nodiscard]] std::string slice_check_to_text(const SliceCheck& check);
void write_slice_check_json(JsonWriter& json, const SliceCheck& check);
// The findings as SARIF 2.1.0 (one run, rule attribute-mismatch, one result per finding, located
// at the slice) and as JUnit XML (a test case per checked device, a failure per finding), for
// CI and code-scanning tools as `audit` writes them. `version` names topoguard's version.
[[nodiscard]] std::string slice_check_to_sarif(const SliceCheck& check, std::string_view version);
[[nodiscard]] std::string slice_check_to_junit(const SliceCheck& check);

}  // namespace topoguard::hardware
