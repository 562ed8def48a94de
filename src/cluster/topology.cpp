#include "topoguard/cluster/topology.h"

#include <algorithm>
#include <array>
#include <map>
#include <numeric>
#include <sstream>

#include "topoguard/common/counted_noun.h"
#include "topoguard/common/printable_text.h"

namespace topoguard::cluster {

namespace {

// Where drivers publish a device's PCI address, standard name first (older NVIDIA drivers used
// their own pcieBusID, DRANET and dra-driver-sriov their pciAddress).
constexpr std::array<std::string_view, 5> kBusIdAttributes{
    "resource.kubernetes.io/pciBusID", "gpu.nvidia.com/pcieBusID", "dra.net/pciAddress",
    "sriovnetwork.k8snetworkplumbingwg.io/pciAddress", "k8s.cni.cncf.io/deviceID"};
constexpr std::string_view kStandardNumaAttribute = "resource.kubernetes.io/numaNode";

TopologyDevice describe(const Device& device, const policy::Policy& policy) {
  TopologyDevice out{device.name, device.driver, device.pool, {}, std::nullopt};
  for (std::string_view name : kBusIdAttributes) {
    if (const AttributeValue* value = device.attribute(name)) {
      out.bus_id = value->to_string();
      break;
    }
  }
  if (const AttributeValue* numa = device.attribute(kStandardNumaAttribute)) {
    out.numa_node = numa->to_string();
    return out;
  }
  for (const auto& [name, value] : device.attributes) {
    if (value.type == AttributeValue::Type::kInt && policy.numa_attributes.matches_any(name)) {
      out.numa_node = value.to_string();
      break;
    }
  }
  return out;
}

Json device_to_json(const TopologyDevice& device) {
  Json out = Json::object();
  out["busID"] = device.bus_id.empty() ? Json() : Json(device.bus_id);
  out["driver"] = device.driver;
  out["name"] = device.name;
  out["numaNode"] = device.numa_node ? Json(*device.numa_node) : Json();
  out["pool"] = device.pool;
  return out;
}

Json devices_to_json(const std::vector<TopologyDevice>& devices) {
  Json out = Json::array();
  for (const TopologyDevice& device : devices) {
    out.push_back(device_to_json(device));
  }
  return out;
}

void write_devices(std::ostream& out, const char* role, const std::vector<TopologyDevice>& devices) {
  for (const TopologyDevice& device : devices) {
    out << "    " << role << "  " << printable(device.name) << "  " << printable(device.driver)
        << "  bus " << (device.bus_id.empty() ? "-" : printable(device.bus_id)) << "  numa "
        << printable(device.numa_node.value_or("-")) << '\n';
  }
}

// The strongest attribute pairing a GPU with a NIC of `node`: accepted alignment attributes
// before NUMA attributes; within a kind, more pairs first, then by name.
Pairing best_pairing(const ClusterState& state, const Node& node, const policy::Policy& policy) {
  // attribute -> value -> (GPUs, NICs) publishing it
  std::map<std::string, std::map<std::string, std::pair<std::size_t, std::size_t>>> counts;
  for (std::size_t index : node.devices) {
    const Device& device = state.devices()[index];
    const bool gpu = policy.gpu.drivers.matches_any(device.driver.get());
    if (!gpu && !policy.nic.drivers.matches_any(device.driver.get())) {
      continue;
    }
    for (const auto& [name, value] : device.attributes) {
      if (!policy.is_alignment_attribute(name) && !policy.numa_attributes.matches_any(name)) {
        continue;
      }
      auto& [gpus, nics] = counts[name][value.to_string()];
      ++(gpu ? gpus : nics);
    }
  }
  Pairing best;
  bool best_alignment = false;
  for (const auto& [name, values] : counts) {
    std::size_t pairs = 0;
    for (const auto& [value, count] : values) {
      pairs += std::min(count.first, count.second);
    }
    const bool alignment = policy.is_alignment_attribute(name);
    if (pairs != 0 && (best.pairs == 0 || (alignment && !best_alignment) ||
                       (alignment == best_alignment && pairs > best.pairs))) {
      best = Pairing{name, pairs};
      best_alignment = alignment;
    }
  }
  return best;
}

}  // namespace

std::size_t NodeTopology::aligned_pairs() const {
  return std::accumulate(roots.begin(), roots.end(), std::size_t{0},
                         [](std::size_t sum, const PcieRoot& root) {
                           return sum + root.aligned_pairs();
                         });
}

Topology build_topology(const ClusterState& state, const policy::Policy& policy) {
  Topology topology;
  topology.attribute = policy.alignment_attribute;
  for (const Node& node : state.nodes()) {
    NodeTopology out;
    out.name = node.name;
    out.incomplete = node.incomplete || state.incomplete();
    std::map<std::string, PcieRoot> roots;
    for (std::size_t index : node.devices) {
      const Device& device = state.devices()[index];
      const bool gpu = policy.gpu.drivers.matches_any(device.driver.get());
      const bool nic = policy.nic.drivers.matches_any(device.driver.get());
      if (!gpu && !nic) {
        continue;
      }
      PcieRoot* root = &out.unrooted;
      if (const AttributeValue* value = device.attribute(policy.alignment_attribute)) {
        root = &roots[value->to_string()];
        root->root = value->to_string();
      }
      (gpu ? root->gpus : root->nics).push_back(describe(device, policy));
    }
    for (auto& [name, root] : roots) {
      out.roots.push_back(std::move(root));
    }
    const auto has = [&](auto member) {
      return !(out.unrooted.*member).empty() ||
             std::any_of(out.roots.begin(), out.roots.end(),
                         [&](const PcieRoot& root) { return !(root.*member).empty(); });
    };
    if (out.aligned_pairs() == 0 && has(&PcieRoot::gpus) && has(&PcieRoot::nics)) {
      out.best_available = best_pairing(state, node, policy);
    }
    topology.nodes.push_back(std::move(out));
  }
  return topology;
}

Json topology_to_json(const Topology& topology) {
  Json nodes = Json::array();
  Json without = Json::array();
  std::size_t gpus = 0;
  std::size_t nics = 0;
  std::size_t pairs = 0;
  for (const NodeTopology& node : topology.nodes) {
    Json roots = Json::array();
    for (const PcieRoot& root : node.roots) {
      Json entry = Json::object();
      entry["alignedPairs"] = root.aligned_pairs();
      entry["gpus"] = devices_to_json(root.gpus);
      entry["nics"] = devices_to_json(root.nics);
      entry["root"] = root.root;
      roots.push_back(std::move(entry));
      gpus += root.gpus.size();
      nics += root.nics.size();
    }
    gpus += node.unrooted.gpus.size();
    nics += node.unrooted.nics.size();
    pairs += node.aligned_pairs();
    if (node.aligned_pairs() == 0) {
      without.push_back(node.name);
    }
    Json unrooted = Json::object();
    unrooted["gpus"] = devices_to_json(node.unrooted.gpus);
    unrooted["nics"] = devices_to_json(node.unrooted.nics);
    Json entry = Json::object();
    entry["alignedPairs"] = node.aligned_pairs();
    entry["bestAvailable"] = Json();
    if (node.best_available) {
      entry["bestAvailable"]["attribute"] = node.best_available->attribute.empty()
                                                ? Json()
                                                : Json(node.best_available->attribute);
      entry["bestAvailable"]["pairs"] = node.best_available->pairs;
    }
    entry["incomplete"] = node.incomplete;
    entry["name"] = node.name;
    entry["roots"] = std::move(roots);
    entry["unrooted"] = std::move(unrooted);
    nodes.push_back(std::move(entry));
  }
  Json summary = Json::object();
  summary["alignedPairs"] = pairs;
  summary["gpus"] = gpus;
  summary["nics"] = nics;
  summary["nodes"] = topology.nodes.size();
  summary["nodesWithoutAlignedPairs"] = without.size();
  Json out = Json::object();
  out["attribute"] = topology.attribute;
  out["nodes"] = std::move(nodes);
  out["nodesWithoutAlignedPairs"] = std::move(without);
  out["summary"] = std::move(summary);
  return out;
}

std::string topology_to_text(const Topology& topology) {
  // Node, device and attribute names come from the slices: printed escaped, one per line.
  const std::string attribute = printable(topology.attribute);
  std::ostringstream out;
  std::vector<std::string> without;
  std::size_t pairs = 0;
  for (const NodeTopology& node : topology.nodes) {
    out << "node " << printable(node.name) << ": "
        << counted_noun(node.aligned_pairs(), "aligned GPU+NIC pair")
        << (node.incomplete ? " (incomplete: some of its slices could not be read)" : "") << '\n';
    if (node.best_available) {
      out << "  no GPU and NIC share a " << attribute << "; "
          << (node.best_available->attribute.empty()
                  ? std::string("no alignment or NUMA attribute pairs them either")
                  : "the strongest attribute that pairs them is " +
                        printable(node.best_available->attribute) + " (" +
                        counted_noun(node.best_available->pairs, "pair") + ")")
          << '\n';
    }
    for (const PcieRoot& root : node.roots) {
      out << "  " << printable(root.root) << ": " << counted_noun(root.gpus.size(), "GPU") << ", "
          << counted_noun(root.nics.size(), "NIC") << '\n';
      write_devices(out, "gpu", root.gpus);
      write_devices(out, "nic", root.nics);
    }
    if (!node.unrooted.gpus.empty() || !node.unrooted.nics.empty()) {
      out << "  no " << attribute << ": " << counted_noun(node.unrooted.gpus.size(), "GPU")
          << ", " << counted_noun(node.unrooted.nics.size(), "NIC") << '\n';
      write_devices(out, "gpu", node.unrooted.gpus);
      write_devices(out, "nic", node.unrooted.nics);
    }
    pairs += node.aligned_pairs();
    if (node.aligned_pairs() == 0) {
      without.push_back(node.name);
    }
  }
  out << "nodes without an aligned GPU+NIC pair:";
  for (const std::string& name : without) {
    out << ' ' << printable(name);
  }
  out << (without.empty() ? " none" : "") << '\n';
  out << "summary: " << counted_noun(topology.nodes.size(), "node") << ", "
      << counted_noun(pairs, "aligned GPU+NIC pair") << " (attribute " << attribute << ")\n";
  return out.str();
}

}  // namespace topoguard::cluster
