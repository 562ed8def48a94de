#include "topoguard/hardware/inventory_beside_slices.h"

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <set>

#include "topoguard/common/counted_noun.h"
#include "topoguard/common/printable_text.h"

#include "numa_text.h"

namespace topoguard::hardware {

namespace {

// A device a driver publishes, with the root it was grouped under (none: it publishes none).
struct Published {
  const cluster::TopologyDevice* device;
  std::optional<std::string> root;
};

// The node's published devices by bus ID.
std::map<std::string, std::vector<Published>, std::less<>> published_by_bus_id(
    const cluster::NodeTopology* node) {
  std::map<std::string, std::vector<Published>, std::less<>> by_bus_id;
  if (node == nullptr) {
    return by_bus_id;
  }
  const auto add = [&by_bus_id](const cluster::PcieRoot& root, std::optional<std::string> name) {
    for (const std::vector<cluster::TopologyDevice>* devices : {&root.gpus, &root.nics}) {
      for (const cluster::TopologyDevice& device : *devices) {
        if (!device.bus_id.empty()) {
          by_bus_id[device.bus_id].push_back(Published{&device, name});
        }
      }
    }
  };
  for (const cluster::PcieRoot& root : node->roots) {
    add(root, root.root);
  }
  add(node->unrooted, std::nullopt);
  return by_bus_id;
}

const cluster::NodeTopology* find_node(const cluster::Topology& topology, const std::string& name) {
  for (const cluster::NodeTopology& node : topology.nodes) {
    if (node.name == name) {
      return &node;
    }
  }
  return nullptr;
}

// The inventories in node order (then source), so the output does not depend on input order.
std::vector<const SourcedNodeView*> in_node_order(const std::vector<SourcedNodeView>& inventories) {
  std::vector<const SourcedNodeView*> ordered;
  for (const SourcedNodeView& inventory : inventories) {
    ordered.push_back(&inventory);
  }
  std::stable_sort(ordered.begin(), ordered.end(), [](const auto* left, const auto* right) {
    return left->view.node < right->view.node;
  });
  return ordered;
}

}  // namespace

std::string inventory_beside_slices_text(const std::vector<SourcedNodeView>& inventories,
                                         const cluster::Topology& topology) {
  std::string out;
  for (const SourcedNodeView* inventory : in_node_order(inventories)) {
    const NodeSysfsView& view = inventory->view;
    const cluster::NodeTopology* node = find_node(topology, view.node);
    const auto published = published_by_bus_id(node);
    std::size_t gpus = 0;
    for (const NodeDeviceView& device : view.devices) {
      gpus += device.kind == DeviceKind::kGpu ? 1 : 0;
    }
    out += "inventory of node " + printable(view.node) + " (" + printable(inventory->source) +
           "): " + counted_noun(gpus, "GPU") + ", " +
           counted_noun(view.devices.size() - gpus, "RDMA NIC") +
           (node == nullptr ? "; no ResourceSlice publishes a device of this node" : "") + "\n";
    out += "  GPU x NIC pairs:";
    for (PathClass path : kPathClasses) {
      out += " " + std::string(path_class_name(path)) + " " +
             std::to_string(view.pairs[static_cast<std::size_t>(path)]);
    }
    out += view.omitted_results > 0
               ? " (" + counted_noun(view.omitted_results, "result") + " left out of the report)\n"
               : "\n";
    std::set<std::string, std::less<>> in_sysfs;
    for (const NodeDeviceView& device : view.devices) {
      in_sysfs.insert(device.address);
      out += std::string("  ") + (device.kind == DeviceKind::kGpu ? "gpu" : "nic") + " " +
             printable(device.address) + "  sysfs " +
             printable(device.pcie_root.value_or("unknown")) + " numa " +
             numa_text(device.numa_node) + (device.c2c ? " c2c" : "") +
             (device.physfn.empty() ? "" : " vf-of " + printable(device.physfn)) + "  |  published";
      const auto found = published.find(device.address);
      if (found == published.end()) {
        out += " -\n";
        continue;
      }
      for (std::size_t i = 0; i < found->second.size(); ++i) {
        const Published& item = found->second[i];
        out += std::string(i == 0 ? " " : "; ") + printable(item.device->name) + " " +
               printable(item.device->driver) + " " + printable(item.root.value_or("-")) +
               " numa " + printable(item.device->numa_node.value_or("-"));
      }
      out += "\n";
    }
    for (const auto& [bus_id, items] : published) {
      if (in_sysfs.contains(bus_id)) {
        continue;
      }
      for (const Published& item : items) {
        out += "  published only: " + printable(item.device->name) + " " +
               printable(item.device->driver) + " bus " + printable(bus_id) +
               " (no GPU or RDMA NIC of this address in the inventory)\n";
      }
    }
    for (const AttributeMismatch& mismatch : view.mismatches) {
      out += "  warn " + std::string(kAttributeMismatchRule) + ": " + printable(mismatch.message) +
             "\n";
    }
    for (const std::string& problem : view.problems) {
      out += "  sysfs problem: " + printable(problem) + "\n";
    }
  }
  return out;
}

Json inventory_beside_slices_json(const std::vector<SourcedNodeView>& inventories,
                                  const cluster::Topology& topology) {
  Json nodes = Json::array();
  for (const SourcedNodeView* inventory : in_node_order(inventories)) {
    const NodeSysfsView& view = inventory->view;
    const auto published = published_by_bus_id(find_node(topology, view.node));
    Json pairs = Json::object();
    for (PathClass path : kPathClasses) {
      pairs[std::string(path_class_name(path))] = view.pairs[static_cast<std::size_t>(path)];
    }
    Json devices = Json::array();
    for (const NodeDeviceView& device : view.devices) {
      Json publishers = Json::array();
      if (const auto found = published.find(device.address); found != published.end()) {
        for (const Published& item : found->second) {
          publishers.push_back(
              Json{{"device", item.device->name},
                   {"driver", item.device->driver},
                   {"pool", item.device->pool},
                   {"pcieRoot", item.root ? Json(*item.root) : Json()},
                   {"numaNode",
                    item.device->numa_node ? Json(*item.device->numa_node) : Json()}});
        }
      }
      devices.push_back(
          Json{{"kind", device.kind == DeviceKind::kGpu ? "gpu" : "nic"},
               {"pciBusID", device.address},
               {"sysfs",
                {{"pcieRoot", device.pcie_root ? Json(*device.pcie_root) : Json()},
                 {"numaNode", device.numa_node ? Json(*device.numa_node) : Json()},
                 {"c2c", device.c2c}}},
               {"published", std::move(publishers)}});
    }
    Json findings = Json::array();
    for (const AttributeMismatch& mismatch : view.mismatches) {
      findings.push_back(Json{{"rule", kAttributeMismatchRule}, {"action", "warn"},
                              {"slice", mismatch.slice},        {"device", mismatch.device},
                              {"attribute", mismatch.attribute}, {"published", mismatch.published},
                              {"sysfs", mismatch.sysfs},        {"message", mismatch.message}});
    }
    nodes.push_back(Json{{"node", view.node},
                         {"source", inventory->source},
                         {"pairs", std::move(pairs)},
                         {"devices", std::move(devices)},
                         {"findings", std::move(findings)},
                         {"problems", view.problems},
                         {"omittedResults", view.omitted_results}});
  }
  return nodes;
}

}  // namespace topoguard::hardware
