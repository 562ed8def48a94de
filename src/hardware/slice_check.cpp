#include "topoguard/hardware/slice_check.h"

#include <array>
#include <map>

#include "topoguard/common/json_writer.h"
#include "topoguard/common/printable_text.h"
#include "topoguard/common/xml_text.h"
#include "topoguard/k8s/kinds.h"

namespace topoguard::hardware {

namespace {

constexpr std::string_view kPciBusId = "resource.kubernetes.io/pciBusID";
constexpr std::string_view kNumaNode = "resource.kubernetes.io/numaNode";
// DRANET's own names for the PCI address and NUMA node (corpus: dranet's p4d capture).
constexpr std::string_view kDranetPciAddress = "dra.net/pciAddress";
constexpr std::string_view kDranetNumaNode = "dra.net/numaNode";

std::optional<std::string> string_attribute(const k8s::Device& device, std::string_view name) {
  const k8s::AttributeValue* value = device.attribute(name);
  if (value == nullptr || value->type != k8s::AttributeValue::Type::kString || value->list ||
      value->values.size() != 1) {
    return std::nullopt;
  }
  return std::get<std::string>(value->values.front());
}

}  // namespace

SliceCheck check_slices(const NodeInventory& inventory,
                        const std::vector<k8s::ParsedSlicePtr>& slices, const std::string& node) {
  std::map<std::string_view, const InventoryDevice*> by_address;
  for (const auto* devices : {&inventory.gpus, &inventory.nics, &inventory.others}) {
    for (const InventoryDevice& device : *devices) {
      by_address.emplace(device.address, &device);
    }
  }
  SliceCheck check;
  for (const k8s::ParsedSlicePtr& slice : slices) {
    if (slice->scope != k8s::NodeScope::kNode || slice->node != node) {
      continue;
    }
    for (const k8s::Device& device : slice->devices) {
      const auto mismatch = [&](std::string_view attribute, const k8s::AttributeValue& published,
                                std::string sysfs, std::string message) {
        check.mismatches.push_back(AttributeMismatch{
            check.checked.size() - 1, slice->name, slice->driver, slice->pool, device.name.get(), std::string(attribute),
            published.to_string(), std::move(sysfs), std::move(message)});
      };
      std::string_view address_attribute = kPciBusId;
      std::optional<std::string> address = string_attribute(device, kPciBusId);
      if (!address) {
        address_attribute = kDranetPciAddress;
        address = string_attribute(device, kDranetPciAddress);
      }
      if (!address) {
        ++check.devices_without_address;
        continue;
      }
      check.checked.push_back(CheckedDevice{slice->name, device.id(), *address});
      const auto found = by_address.find(*address);
      if (found == by_address.end()) {
        mismatch(address_attribute, *device.attribute(address_attribute), "no such PCI function",
                 "the node has no PCI function " + *address);
        continue;
      }
      const InventoryDevice& actual = *found->second;
      if (const k8s::AttributeValue* root = device.attribute(k8s::kPcieRootAttribute)) {
        const k8s::AttributeValue expected{k8s::AttributeValue::Type::kString, false,
                                           {actual.pcie_root.value_or("")}};
        if (actual.pcie_root && !(*root == expected)) {
          mismatch(k8s::kPcieRootAttribute, *root, *actual.pcie_root,
                   "published " + root->to_string() + " but sysfs puts " + *address + " under " +
                       *actual.pcie_root + ": matchAttribute on it pairs devices that are not "
                       "on one PCIe root");
        }
      }
      for (const std::string_view name : {kNumaNode, kDranetNumaNode}) {
        const k8s::AttributeValue* numa = device.attribute(name);
        if (numa == nullptr || !actual.numa_node) {
          continue;
        }
        // The physical node comes first in the list form (DRAListTypeAttributes).
        const bool agrees = numa->type == k8s::AttributeValue::Type::kInt && !numa->values.empty() &&
                            std::get<std::int64_t>(numa->values.front()) == *actual.numa_node;
        if (!agrees) {
          mismatch(name, *numa, std::to_string(*actual.numa_node),
                   "published " + numa->to_string() + " but sysfs says numa_node " +
                       std::to_string(*actual.numa_node) + " for " + *address +
                       (*actual.numa_node < 0 ? " (no affinity: Kubernetes' helper publishes none)"
                                              : ""));
        }
      }
    }
  }
  return check;
}

std::string slice_check_to_text(const SliceCheck& check) {
  std::string out = "ResourceSlices checked against sysfs: " +
                    std::to_string(check.checked.size()) + " devices with a PCI address, " +
                    std::to_string(check.devices_without_address) + " without, " +
                    std::to_string(check.mismatches.size()) + " mismatches\n";
  for (const AttributeMismatch& mismatch : check.mismatches) {
    out += "  warn " + std::string(kAttributeMismatchRule) + " " + printable(mismatch.driver) +
           "/" + printable(mismatch.pool) + "/" + printable(mismatch.device) + " (slice " +
           printable(mismatch.slice) + ") " + printable(mismatch.attribute) + ": " +
           printable(mismatch.message) + '\n';
  }
  return out;
}

void write_slice_check_json(JsonWriter& json, const SliceCheck& check) {
  json.begin_object()
      .member("devicesChecked", check.checked.size())
      .member("devicesWithoutAddress", check.devices_without_address)
      .key("findings")
      .begin_array();
  for (const AttributeMismatch& mismatch : check.mismatches) {
    json.begin_object()
        .member("rule", kAttributeMismatchRule)
        .member("action", "warn")
        .member("slice", mismatch.slice)
        .member("driver", mismatch.driver)
        .member("pool", mismatch.pool)
        .member("device", mismatch.device)
        .member("attribute", mismatch.attribute)
        .member("published", mismatch.published)
        .member("sysfs", mismatch.sysfs)
        .member("message", mismatch.message)
        .end_object();
  }
  json.end_array().end_object();
}

std::string slice_check_to_sarif(const SliceCheck& check, std::string_view version) {
  std::string out;
  JsonWriter json(out, 2);
  json.begin_object()
      .member("$schema",
              "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/"
              "sarif-schema-2.1.0.json")
      .member("version", "2.1.0")
      .key("runs")
      .begin_array()
      .begin_object()
      .key("tool")
      .begin_object()
      .key("driver")
      .begin_object()
      .member("name", "topoguard")
      .member("version", version)
      .key("rules")
      .begin_array()
      .begin_object()
      .member("id", kAttributeMismatchRule)
      .key("shortDescription")
      .begin_object()
      .member("text", "A DRA driver publishes a PCIe root, NUMA node or PCI address that the "
                      "node's sysfs contradicts")
      .end_object()
      .key("defaultConfiguration")
      .begin_object()
      .member("level", "warning")
      .end_object()
      .end_object()
      .end_array()
      .end_object()
      .end_object()
      .key("results")
      .begin_array();
  for (const AttributeMismatch& mismatch : check.mismatches) {
    json.begin_object()
        .member("ruleId", kAttributeMismatchRule)
        .member("level", "warning")
        .key("message")
        .begin_object()
        .member("text", mismatch.driver + "/" + mismatch.pool + "/" + mismatch.device + " " +
                            mismatch.attribute + ": " + mismatch.message)
        .end_object()
        .key("locations")
        .begin_array()
        .begin_object()
        .key("logicalLocations")
        .begin_array()
        .begin_object()
        .member("name", mismatch.device)
        .member("fullyQualifiedName", "ResourceSlice/" + mismatch.slice + "/" + mismatch.device)
        .member("kind", "object")
        .end_object()
        .end_array()
        .end_object()
        .end_array()
        .end_object();
  }
  json.end_array().end_object().end_array().end_object();
  out += '\n';
  return out;
}

std::string slice_check_to_junit(const SliceCheck& check) {
  std::string cases;
  std::size_t failed = 0;
  for (std::size_t i = 0; i < check.checked.size(); ++i) {
    const CheckedDevice& device = check.checked[i];
    std::string failures;
    for (const AttributeMismatch& mismatch : check.mismatches) {
      if (mismatch.checked == i) {
        failures += "      <failure type=\"warn\" message=\"" +
                    xml_escape(mismatch.attribute + ": " + mismatch.message) + "\">" +
                    xml_escape("published " + mismatch.published + ", sysfs " + mismatch.sysfs,
                               false) +
                    "</failure>\n";
      }
    }
    failed += failures.empty() ? 0 : 1;
    cases += "    <testcase classname=\"ResourceSlice " + xml_escape(device.slice) +
             "\" name=\"" + xml_escape(device.id + " " + device.address) + "\"" +
             (failures.empty() ? "/>\n" : ">\n" + failures + "    </testcase>\n");
  }
  const std::string counts = "tests=\"" + std::to_string(check.checked.size()) +
                             "\" failures=\"" + std::to_string(failed) + "\" errors=\"0\"";
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"topoguard inventory\" " +
         counts + ">\n  <testsuite name=\"" + std::string(kAttributeMismatchRule) + "\" " +
         counts + " skipped=\"0\">\n" + cases + "  </testsuite>\n</testsuites>\n";
}

}  // namespace topoguard::hardware
