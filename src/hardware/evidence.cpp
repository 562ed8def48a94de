#include "topoguard/hardware/evidence.h"

#include <algorithm>
#include <array>
#include <set>

#include "topoguard/k8s/kinds.h"

namespace topoguard::hardware {

namespace {

constexpr std::array<std::string_view, 2> kNumaAttributes = {"resource.kubernetes.io/numaNode",
                                                             "dra.net/numaNode"};

Json attribute_json(const k8s::AttributeValue& value) {
  Json values = Json::array();
  for (const k8s::AttributeValue::Scalar& scalar : value.values) {
    std::visit([&values](const auto& item) { values.push_back(item); }, scalar);
  }
  return value.list ? values : values.empty() ? Json() : values.front();
}

const k8s::Device* find_device(const std::vector<k8s::ParsedSlicePtr>& slices,
                               const std::string& driver, const std::string& pool,
                               const std::string& name) {
  // The newest generation of the pool wins, as for the allocator.
  const k8s::Device* found = nullptr;
  std::int64_t generation = -1;
  for (const k8s::ParsedSlicePtr& slice : slices) {
    if (slice->driver != driver || slice->pool != pool || slice->generation < generation) {
      continue;
    }
    for (const k8s::Device& device : slice->devices) {
      if (device.name.get() == name) {
        found = &device;
        generation = slice->generation;
      }
    }
  }
  return found;
}

}  // namespace

std::string_view verdict_name(EvidenceVerdict verdict) {
  switch (verdict) {
    case EvidenceVerdict::kAligned: return "aligned";
    case EvidenceVerdict::kSameNumaOtherRoot: return "same NUMA other root";
    case EvidenceVerdict::kAcrossNuma: return "across NUMA";
    case EvidenceVerdict::kUnknown: break;
  }
  return "unknown";
}

Result<Evidence> build_evidence(const Json& claim, const std::vector<k8s::ParsedSlicePtr>& slices) {
  const Json* results = find_at(claim, "/status/allocation/devices/results");
  if (results == nullptr || !results->is_array() || results->empty()) {
    return Error{ErrorCode::kMissingField,
                 "the claim is not allocated (no status.allocation.devices.results)", {}};
  }
  Json devices = Json::array();
  std::set<std::string> roots;
  std::set<std::int64_t> numa_nodes;
  bool roots_known = true;
  bool numa_known = true;
  for (const Json& result : *results) {
    if (!result.is_object()) {
      return Error{ErrorCode::kWrongType, "status.allocation.devices.results: an item is no object", {}};
    }
    const std::string driver = string_member(result, "driver");
    const std::string pool = string_member(result, "pool");
    const std::string name = string_member(result, "device");
    Json entry = {{"request", string_member(result, "request")},
                  {"driver", driver},
                  {"pool", pool},
                  {"device", name}};
    const k8s::Device* device = find_device(slices, driver, pool, name);
    Json attributes = Json::object();
    const k8s::AttributeValue* root = nullptr;
    const k8s::AttributeValue* numa = nullptr;
    if (device != nullptr) {
      for (const auto& [attribute, value] : device->attributes) {
        attributes[attribute] = attribute_json(value);
      }
      root = device->attribute(k8s::kPcieRootAttribute);
      for (const std::string_view attribute : kNumaAttributes) {
        numa = numa != nullptr ? numa : device->attribute(attribute);
      }
    }
    entry["attributes"] = device != nullptr ? attributes : Json();
    devices.push_back(std::move(entry));
    if (root != nullptr && root->type == k8s::AttributeValue::Type::kString && !root->values.empty()) {
      roots.insert(std::get<std::string>(root->values.front()));
    } else {
      roots_known = false;
    }
    // The physical node comes first in the list form.
    if (numa != nullptr && numa->type == k8s::AttributeValue::Type::kInt && !numa->values.empty()) {
      numa_nodes.insert(std::get<std::int64_t>(numa->values.front()));
    } else {
      numa_known = false;
    }
  }
  Evidence evidence;
  const auto joined = [](const auto& items) {
    std::string text;
    for (const auto& item : items) {
      text += (text.empty() ? "" : ", ") + Json(item).dump();
    }
    return text;
  };
  if (roots_known && roots.size() == 1) {
    evidence.verdict = EvidenceVerdict::kAligned;
  } else if (numa_known && numa_nodes.size() == 1) {
    evidence.verdict = EvidenceVerdict::kSameNumaOtherRoot;
  } else if (numa_known && numa_nodes.size() > 1) {
    evidence.verdict = EvidenceVerdict::kAcrossNuma;
  }
  evidence.verdict_line = std::string(verdict_name(evidence.verdict)) + " (pcieRoot " +
                          (roots_known ? joined(roots) : "not published by every device") +
                          "; NUMA " + (numa_known ? joined(numa_nodes) : "not published by every device") +
                          ")";
  const Json* metadata = member(claim, "metadata");
  evidence.document = Json{
      {"claim",
       {{"namespace", metadata != nullptr ? string_member(*metadata, "namespace") : ""},
        {"name", metadata != nullptr ? string_member(*metadata, "name") : ""},
        {"uid", metadata != nullptr ? string_member(*metadata, "uid") : ""}}},
      {"allocation", *find_at(claim, "/status/allocation")},
      {"devices", devices},
      {"verdict", verdict_name(evidence.verdict)},
      {"verdictLine", evidence.verdict_line}};
  return evidence;
}

void add_node_inventory(Evidence& evidence, const NodeSysfsView& view, const std::string& source) {
  Json devices = Json::array();
  std::vector<const NodeDeviceView*> gpus;
  std::vector<const NodeDeviceView*> nics;
  for (const Json& allocated : evidence.document["devices"]) {
    const Json* attributes = member(allocated, "attributes");
    std::string address;
    for (const char* attribute : {"resource.kubernetes.io/pciBusID", "dra.net/pciAddress"}) {
      const Json* value = attributes != nullptr && attributes->is_object()
                              ? member(*attributes, attribute)
                              : nullptr;
      if (address.empty() && value != nullptr && value->is_string()) {
        address = value->get<std::string>();
      }
    }
    const auto found = std::find_if(view.devices.begin(), view.devices.end(),
                                    [&address](const NodeDeviceView& device) {
                                      return !address.empty() && device.address == address;
                                    });
    Json sysfs;
    if (found != view.devices.end()) {
      sysfs = Json{{"pcieRoot", found->pcie_root ? Json(*found->pcie_root) : Json()},
                   {"numaNode", found->numa_node ? Json(*found->numa_node) : Json()}};
      (found->kind == DeviceKind::kGpu ? gpus : nics).push_back(&*found);
    }
    devices.push_back(Json{{"request", string_member(allocated, "request")},
                           {"device", string_member(allocated, "device")},
                           {"pciBusID", address.empty() ? Json() : Json(address)},
                           {"sysfs", std::move(sysfs)}});
  }
  Json paths = Json::array();
  std::string classes;
  for (const NodeDeviceView* gpu : gpus) {
    for (const NodeDeviceView* nic : nics) {
      // A VF is on its PF's path.
      const std::string& column = nic->physfn.empty() ? nic->address : nic->physfn;
      const auto path = std::find_if(view.paths.begin(), view.paths.end(),
                                     [&](const PairPath& pair) {
                                       return pair.gpu == gpu->address && pair.nic == column;
                                     });
      const std::string relation(path != view.paths.end() ? path_class_name(path->relation)
                                                          : std::string_view("?"));
      paths.push_back(Json{{"gpu", gpu->address}, {"nic", nic->address}, {"relation", relation}});
      classes += (classes.empty() ? "" : ", ") + relation;
    }
  }
  evidence.document["nodeInventory"] =
      Json{{"source", source}, {"devices", std::move(devices)}, {"paths", std::move(paths)}};
  if (!classes.empty()) {
    evidence.verdict_line += "; sysfs: " + classes;
    evidence.document["verdictLine"] = evidence.verdict_line;
  }
}

}  // namespace topoguard::hardware
