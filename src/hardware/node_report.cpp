#include "topoguard/hardware/node_report.h"

#include <algorithm>
#include <charconv>
#include <cstdint>

#include "numa_text.h"

namespace topoguard::hardware {

namespace {

constexpr std::string_view kPciDeviceRule = "pci-device";
constexpr std::string_view kPathRule = "gpu-nic-path";
constexpr std::string_view kSysfsRule = "sysfs";
constexpr std::string_view kOmittedAnnotation = "topoguard.dev/omitted-results";

std::string_view kind_name(DeviceKind kind) { return kind == DeviceKind::kGpu ? "gpu" : "nic"; }

Json pass_result(std::string_view rule, std::string message, Json properties) {
  return Json{{"policy", kNodeInventoryPolicy}, {"rule", rule},
              {"result", "pass"},               {"severity", "info"},
              {"scored", false},                {"source", "topoguard"},
              {"message", std::move(message)},  {"properties", std::move(properties)}};
}

Json device_result(const NodeDeviceView& device) {
  Json properties = {{"kind", kind_name(device.kind)}, {"pciBusID", device.address}};
  if (device.pcie_root) {
    properties["pcieRoot"] = *device.pcie_root;
  }
  properties["numaNode"] = numa_text(device.numa_node);
  if (device.kind == DeviceKind::kGpu) {
    properties["attach"] = device.c2c ? "c2c" : "pcie";
  }
  if (!device.physfn.empty()) {
    properties["physfn"] = device.physfn;
  }
  std::string message = std::string(device.kind == DeviceKind::kGpu ? "GPU " : "RDMA NIC ") +
                        device.address + " on " + device.pcie_root.value_or("an unknown root") +
                        ", NUMA node " + numa_text(device.numa_node);
  return pass_result(kPciDeviceRule, std::move(message), std::move(properties));
}

Json mismatch_result(const AttributeMismatch& mismatch) {
  return Json{{"policy", kNodeInventoryPolicy},
              {"rule", kAttributeMismatchRule},
              {"result", "warn"},
              {"severity", "medium"},
              {"scored", true},
              {"source", "topoguard"},
              {"message", mismatch.message},
              {"resources", Json::array({Json{{"apiVersion", "resource.k8s.io/v1"},
                                              {"kind", "ResourceSlice"},
                                              {"name", mismatch.slice}}})},
              {"properties", Json{{"slice", mismatch.slice},
                                  {"driver", mismatch.driver},
                                  {"pool", mismatch.pool},
                                  {"device", mismatch.device},
                                  {"attribute", mismatch.attribute},
                                  {"published", mismatch.published},
                                  {"sysfs", mismatch.sysfs}}}};
}

Json problem_result(const std::string& problem) {
  return Json{{"policy", kNodeInventoryPolicy}, {"rule", kSysfsRule},     {"result", "error"},
              {"scored", false},                {"source", "topoguard"}, {"message", problem}};
}

Error field_error(ErrorCode code, std::string field, std::string message) {
  return Error{code, field + ": " + message, {}};
}

// A property the view needs: a string, else an error naming it.
Result<std::string> required_text(const Json& properties, std::string_view key,
                                  const std::string& field) {
  const Json* value = member(properties, key);
  if (value == nullptr || !value->is_string()) {
    return field_error(ErrorCode::kMissingField, field + "." + std::string(key),
                       "missing or not a string");
  }
  return value->get<std::string>();
}

// "0", "-1" or "unknown" (none).
Result<std::optional<int>> numa_from_text(const std::string& text, const std::string& field) {
  if (text == "unknown") {
    return std::optional<int>();
  }
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < -1) {
    return field_error(ErrorCode::kInvalidValue, field, "not a NUMA node (an integer >= -1)");
  }
  return std::optional<int>(value);
}

std::optional<PathClass> path_class_by_name(std::string_view name) {
  for (PathClass path : kPathClasses) {
    if (path_class_name(path) == name) {
      return path;
    }
  }
  return std::nullopt;
}

}  // namespace

PathCounts count_paths(const NodeInventory& inventory) {
  PathCounts counts{};
  for (const InventoryDevice& gpu : inventory.gpus) {
    for (std::size_t column : inventory.matrix_nics()) {
      ++counts[static_cast<std::size_t>(path_class(gpu, inventory.nics[column]))];
    }
  }
  return counts;
}

NodeSysfsView node_view(const NodeInventory& inventory, const SliceCheck* check,
                        std::string node) {
  NodeSysfsView view;
  view.node = std::move(node);
  for (const std::vector<InventoryDevice>* devices : {&inventory.gpus, &inventory.nics}) {
    for (const InventoryDevice& device : *devices) {
      view.devices.push_back(NodeDeviceView{device.kind, device.address, device.pcie_root,
                                            device.numa_node, device.c2c, device.physfn});
    }
  }
  view.pairs = count_paths(inventory);
  if (check != nullptr) {
    view.mismatches = check->mismatches;
  }
  view.problems = inventory.problems;
  return view;
}

Json node_report(const NodeInventory& inventory, const SliceCheck* check,
                 const NodeIdentity& node) {
  const NodeSysfsView view = node_view(inventory, check, node.name);
  Json results = Json::array();
  std::size_t omitted = 0;
  const auto add = [&results, &omitted](Json result) {
    if (results.size() < kMaxNodeReportResults) {
      results.push_back(std::move(result));
    } else {
      ++omitted;
    }
  };
  std::size_t warnings = 0;
  for (const AttributeMismatch& mismatch : view.mismatches) {
    add(mismatch_result(mismatch));
    ++warnings;
  }
  for (const std::string& problem : view.problems) {
    add(problem_result(problem));
  }
  for (const NodeDeviceView& device : view.devices) {
    add(device_result(device));
  }
  const std::vector<std::size_t> columns = inventory.matrix_nics();
  for (const InventoryDevice& gpu : inventory.gpus) {
    for (std::size_t column : columns) {
      if (results.size() >= kMaxNodeReportResults) {
        ++omitted;  // counted, not built: pairs grow with the square of the devices
        continue;
      }
      const InventoryDevice& nic = inventory.nics[column];
      const std::string_view relation = path_class_name(path_class(gpu, nic));
      add(pass_result(kPathRule,
                      "GPU " + gpu.address + " and NIC " + nic.address + ": " +
                          std::string(relation) + " (" +
                          std::string(path_class_meaning(path_class(gpu, nic))) + ")",
                      Json{{"gpu", gpu.address}, {"nic", nic.address}, {"relation", relation}}));
    }
  }
  const std::size_t passes = view.devices.size() +
                             inventory.gpus.size() * columns.size();
  Json metadata = {{"name", node.uid},
                   {"labels",
                    {{"app.kubernetes.io/managed-by", "topoguard"},
                     {std::string(kNodeInventoryLabel), "true"}}},
                   {"ownerReferences", Json::array({Json{{"apiVersion", "v1"},
                                                         {"kind", "Node"},
                                                         {"name", node.name},
                                                         {"uid", node.uid}}})}};
  if (omitted > 0) {
    metadata["annotations"][std::string(kOmittedAnnotation)] = std::to_string(omitted);
  }
  return Json{{"apiVersion", "openreports.io/v1alpha1"},
              {"kind", "ClusterReport"},
              {"metadata", std::move(metadata)},
              {"scope", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", node.name},
                         {"uid", node.uid}}},
              {"source", "topoguard"},
              {"summary",
               {{"pass", passes}, {"fail", 0}, {"warn", warnings},
                {"error", view.problems.size()}, {"skip", 0}}},
              {"results", std::move(results)}};
}

bool is_node_inventory_report(const Json& object) {
  if (!object.is_object() || string_member(object, "kind") != "ClusterReport") {
    return false;
  }
  const Json* labels = find_at(object, "/metadata/labels");
  return labels != nullptr && labels->is_object() &&
         string_member(*labels, kNodeInventoryLabel) == "true";
}

Result<NodeSysfsView> node_view_from_report(const Json& report) {
  NodeSysfsView view;
  const Json* scope = member(report, "scope");
  view.node = scope != nullptr && scope->is_object() ? string_member(*scope, "name") : "";
  if (view.node.empty()) {
    return field_error(ErrorCode::kMissingField, "scope.name", "the node's name is missing");
  }
  if (const Json* annotations = find_at(report, "/metadata/annotations");
      annotations != nullptr && annotations->is_object()) {
    const std::string omitted = string_member(*annotations, kOmittedAnnotation);
    std::from_chars(omitted.data(), omitted.data() + omitted.size(), view.omitted_results);
  }
  const Json* results = member(report, "results");
  if (results == nullptr) {
    return view;  // a report without results: a node with nothing to say
  }
  if (!results->is_array()) {
    return field_error(ErrorCode::kWrongType, "results", "not a list");
  }
  for (std::size_t i = 0; i < results->size(); ++i) {
    const std::string field = "results[" + std::to_string(i) + "]";
    const Json& result = (*results)[i];
    if (!result.is_object() || string_member(result, "policy") != kNodeInventoryPolicy) {
      continue;  // another writer's result: not ours to read
    }
    const std::string rule = string_member(result, "rule");
    if (rule == kSysfsRule) {
      view.problems.push_back(string_member(result, "message"));
      continue;
    }
    const Json* properties = member(result, "properties");
    if (properties == nullptr || !properties->is_object()) {
      return field_error(ErrorCode::kMissingField, field + ".properties", "missing or no map");
    }
    const std::string where = field + ".properties";
    if (rule == kPciDeviceRule) {
      Result<std::string> kind = required_text(*properties, "kind", where);
      Result<std::string> address = required_text(*properties, "pciBusID", where);
      Result<std::string> numa = required_text(*properties, "numaNode", where);
      for (const Result<std::string>* value : {&kind, &address, &numa}) {
        if (!*value) {
          return value->error();
        }
      }
      if (*kind != "gpu" && *kind != "nic") {
        return field_error(ErrorCode::kInvalidValue, where + ".kind", "not gpu or nic");
      }
      Result<std::optional<int>> numa_node = numa_from_text(*numa, where + ".numaNode");
      if (!numa_node) {
        return numa_node.error();
      }
      NodeDeviceView device;
      device.kind = *kind == "gpu" ? DeviceKind::kGpu : DeviceKind::kRdmaNic;
      device.address = std::move(*address);
      if (const Json* root = member(*properties, "pcieRoot"); root != nullptr && root->is_string()) {
        device.pcie_root = root->get<std::string>();
      }
      device.numa_node = *numa_node;
      device.c2c = string_member(*properties, "attach") == "c2c";
      device.physfn = string_member(*properties, "physfn");
      view.devices.push_back(std::move(device));
    } else if (rule == kPathRule) {
      Result<std::string> relation = required_text(*properties, "relation", where);
      if (!relation) {
        return relation.error();
      }
      const std::optional<PathClass> path = path_class_by_name(*relation);
      if (!path) {
        return field_error(ErrorCode::kInvalidValue, where + ".relation",
                           "not a path class (PIX, PXB, PHB, NODE, SYS, ?)");
      }
      ++view.pairs[static_cast<std::size_t>(*path)];
      view.paths.push_back(
          PairPath{string_member(*properties, "gpu"), string_member(*properties, "nic"), *path});
    } else if (rule == kAttributeMismatchRule) {
      AttributeMismatch mismatch;
      mismatch.slice = string_member(*properties, "slice");
      mismatch.driver = string_member(*properties, "driver");
      mismatch.pool = string_member(*properties, "pool");
      mismatch.device = string_member(*properties, "device");
      mismatch.attribute = string_member(*properties, "attribute");
      mismatch.published = string_member(*properties, "published");
      mismatch.sysfs = string_member(*properties, "sysfs");
      mismatch.message = string_member(result, "message");
      view.mismatches.push_back(std::move(mismatch));
    }
  }
  // GPUs before NICs, as node_view() gives them, whatever order the results came in.
  std::stable_partition(view.devices.begin(), view.devices.end(),
                        [](const NodeDeviceView& device) { return device.kind == DeviceKind::kGpu; });
  return view;
}

Result<NodeSysfsView> node_view_from_inventory_json(const Json& document,
                                                    const std::string& node) {
  if (!document.is_object() || string_member(document, "kind") != "topoguard.inventory/v1") {
    return Error{ErrorCode::kInvalidValue,
                 "not the output of topoguard inventory -o json (kind topoguard.inventory/v1)",
                 {}};
  }
  NodeSysfsView view;
  view.node = string_member(document, "node");
  if (view.node.empty()) {
    view.node = node;
  }
  if (view.node.empty()) {
    return field_error(ErrorCode::kMissingField, "node",
                       "the inventory names no node (run it with --node, or give NODE=FILE)");
  }
  for (const auto& [key, kind] : {std::pair{"gpus", DeviceKind::kGpu},
                                  std::pair{"nics", DeviceKind::kRdmaNic}}) {
    const Json* devices = member(document, key);
    if (devices == nullptr || !devices->is_array()) {
      return field_error(ErrorCode::kMissingField, key, "missing or no list");
    }
    for (std::size_t i = 0; i < devices->size(); ++i) {
      const std::string field = std::string(key) + "[" + std::to_string(i) + "]";
      const Json& item = (*devices)[i];
      const Json* address = item.is_object() ? member(item, "pciBusID") : nullptr;
      const Json* root = item.is_object() ? member(item, "pcieRoot") : nullptr;
      const Json* numa = item.is_object() ? member(item, "numaNode") : nullptr;
      if (address == nullptr || !address->is_string() || root == nullptr ||
          !(root->is_string() || root->is_null()) || numa == nullptr ||
          !(numa->is_number_integer() || numa->is_null())) {
        return field_error(ErrorCode::kWrongType, field,
                           "pciBusID must be a string, pcieRoot a string or null, numaNode an "
                           "integer or null");
      }
      NodeDeviceView device;
      device.kind = kind;
      device.address = address->get<std::string>();
      if (root->is_string()) {
        device.pcie_root = root->get<std::string>();
      }
      if (numa->is_number_integer()) {
        device.numa_node =
            static_cast<int>(std::clamp<std::int64_t>(numa->get<std::int64_t>(), -1, 1 << 20));
      }
      device.c2c = string_member(item, "attach") == "c2c";
      device.physfn = string_member(item, "physfn");
      view.devices.push_back(std::move(device));
    }
  }
  if (const Json* paths = member(document, "paths"); paths != nullptr && paths->is_array()) {
    for (const Json& path : *paths) {
      const std::optional<PathClass> relation =
          path.is_object() ? path_class_by_name(string_member(path, "class")) : std::nullopt;
      if (relation) {
        ++view.pairs[static_cast<std::size_t>(*relation)];
        view.paths.push_back(
            PairPath{string_member(path, "gpu"), string_member(path, "nic"), *relation});
      }
    }
  }
  if (const Json* problems = member(document, "problems"); problems != nullptr && problems->is_array()) {
    for (const Json& problem : *problems) {
      if (problem.is_string()) {
        view.problems.push_back(problem.get<std::string>());
      }
    }
  }
  if (const Json* findings = find_at(document, "/sliceCheck/findings");
      findings != nullptr && findings->is_array()) {
    for (const Json& finding : *findings) {
      if (!finding.is_object()) {
        continue;
      }
      view.mismatches.push_back(AttributeMismatch{
          0, string_member(finding, "slice"), string_member(finding, "driver"),
          string_member(finding, "pool"), string_member(finding, "device"),
          string_member(finding, "attribute"), string_member(finding, "published"),
          string_member(finding, "sysfs"), string_member(finding, "message")});
    }
  }
  return view;
}

std::string render_node_metrics(const NodeSysfsView& view) {
  std::string text =
      "# HELP topoguard_node_gpu_nic_pairs GPU x NIC pairs of this node by path class, as "
      "nvidia-smi topo -m names them (from sysfs)\n"
      "# TYPE topoguard_node_gpu_nic_pairs gauge\n";
  for (PathClass path : kPathClasses) {
    const std::string_view name = path == PathClass::kUnknown ? "unknown" : path_class_name(path);
    text += "topoguard_node_gpu_nic_pairs{relation=\"" + std::string(name) + "\"} " +
            std::to_string(view.pairs[static_cast<std::size_t>(path)]) + "\n";
  }
  const auto c2c = std::count_if(view.devices.begin(), view.devices.end(),
                                 [](const NodeDeviceView& device) { return device.c2c; });
  text += "# HELP topoguard_node_c2c_gpus GPUs of this node attached to their CPU by a "
          "chip-to-chip link (their pairs are counted by PCIe path class)\n"
          "# TYPE topoguard_node_c2c_gpus gauge\n"
          "topoguard_node_c2c_gpus " + std::to_string(c2c) + "\n";
  text += "# HELP topoguard_node_attribute_mismatches Device attributes DRA drivers publish for "
          "this node that sysfs contradicts\n"
          "# TYPE topoguard_node_attribute_mismatches gauge\n"
          "topoguard_node_attribute_mismatches " + std::to_string(view.mismatches.size()) + "\n";
  return text;
}

}  // namespace topoguard::hardware
