#include "topoguard/hardware/ab_plan.h"

#include <algorithm>
#include <map>

#include "topoguard/common/json_reader.h"

namespace topoguard::hardware {

namespace {

// Nesting of an inventory document: object, device list, device, list of names.
constexpr int kInventoryJsonDepth = 8;

bool same_numa(const RootPlacement& a, const RootPlacement& b) {
  return a.numa_node && b.numa_node && *a.numa_node == *b.numa_node;
}

bool other_numa(const RootPlacement& a, const RootPlacement& b) {
  return a.numa_node && b.numa_node && *a.numa_node != *b.numa_node;
}

// The first pair (in root order) of a GPU root and a NIC root that are `related`, preferring roots
// with devices the pairs chosen before left over, so that the three Jobs can run side by side.
template <class Related>
std::optional<std::pair<std::size_t, std::size_t>> find_pair(
    const std::vector<RootPlacement>& roots, const std::vector<RootPlacement>& left,
    Related related) {
  for (const std::vector<RootPlacement>* counts : {&left, &roots}) {
    for (std::size_t gpu = 0; gpu < roots.size(); ++gpu) {
      for (std::size_t nic = 0; nic < roots.size(); ++nic) {
        if ((*counts)[gpu].gpus > 0 && (*counts)[nic].nics > 0 &&
            related(roots[gpu], roots[nic])) {
          return std::make_pair(gpu, nic);
        }
      }
    }
  }
  return std::nullopt;
}

std::string missing_reason(AbVariant variant, const std::vector<RootPlacement>& roots) {
  const bool numa_known = std::all_of(roots.begin(), roots.end(), [](const RootPlacement& root) {
    return root.numa_node.has_value();
  });
  switch (variant) {
    case AbVariant::kAligned:
      return "no PCIe root holds both a GPU and an RDMA NIC (GPUs alone on their roots, as "
             "C2C-attached GB200-class GPUs are, or no NIC at all)";
    case AbVariant::kSameNumaOtherRoot:
      return numa_known ? "no NUMA node has a GPU and an RDMA NIC on different PCIe roots"
                        : "NUMA nodes unknown (numa_node -1 or not published)";
    case AbVariant::kAcrossNuma:
      return numa_known ? "no GPU and RDMA NIC on different NUMA nodes"
                        : "NUMA nodes unknown (numa_node -1 or not published)";
  }
  return {};
}

// `device.attributes["<domain>"]["<name>"] == "<root>"` for a qualified attribute name.
std::string root_selector(std::string_view attribute, const std::string& root) {
  const std::size_t slash = attribute.find('/');
  const Json domain(std::string(attribute.substr(0, slash)));
  const Json name(std::string(attribute.substr(slash + 1)));
  return "device.attributes[" + domain.dump() + "][" + name.dump() + "] == " + Json(root).dump();
}

Json request(const std::string& name, const std::string& device_class, const std::string& selector) {
  return Json{{"name", name},
              {"exactly",
               {{"deviceClassName", device_class},
                {"selectors", Json::array({Json{{"cel", {{"expression", selector}}}}})}}}};
}

std::string_view expected_path(AbVariant variant) {
  switch (variant) {
    case AbVariant::kAligned: return "same PCIe root (PIX, PXB or PHB)";
    case AbVariant::kSameNumaOtherRoot: return "same NUMA node, other PCIe root (NODE)";
    case AbVariant::kAcrossNuma: return "across NUMA nodes (SYS)";
  }
  return {};
}

}  // namespace

std::string_view ab_variant_name(AbVariant variant) {
  switch (variant) {
    case AbVariant::kAligned: return "aligned";
    case AbVariant::kSameNumaOtherRoot: return "same-numa";
    case AbVariant::kAcrossNuma: return "cross-numa";
  }
  return {};
}

std::array<AbChoice, 3> choose_ab_pairs(const std::vector<RootPlacement>& roots) {
  std::array<AbChoice, 3> choices;
  std::vector<RootPlacement> left = roots;
  for (std::size_t i = 0; i < kAbVariants.size(); ++i) {
    const AbVariant variant = kAbVariants[i];
    const auto pair =
        variant == AbVariant::kAligned
            ? find_pair(roots, left,
                        [](const RootPlacement& a, const RootPlacement& b) { return &a == &b; })
        : variant == AbVariant::kSameNumaOtherRoot
            ? find_pair(roots, left,
                        [](const RootPlacement& a, const RootPlacement& b) {
                          return &a != &b && same_numa(a, b);
                        })
            : find_pair(roots, left, other_numa);
    choices[i].variant = variant;
    if (pair) {
      choices[i].gpu_root = roots[pair->first].root;
      choices[i].nic_root = roots[pair->second].root;
      left[pair->first].gpus -= left[pair->first].gpus > 0 ? 1 : 0;
      left[pair->second].nics -= left[pair->second].nics > 0 ? 1 : 0;
    } else {
      choices[i].missing_reason = missing_reason(variant, roots);
    }
  }
  return choices;
}

std::vector<RootPlacement> root_placements(const NodeInventory& inventory) {
  std::map<std::string, RootPlacement> by_root;
  const auto add = [&by_root](const InventoryDevice& device) -> RootPlacement* {
    if (!device.pcie_root) {
      return nullptr;
    }
    RootPlacement& placement = by_root[*device.pcie_root];
    placement.root = *device.pcie_root;
    if (device.numa_node && *device.numa_node >= 0) {
      placement.numa_node = device.numa_node;
    }
    return &placement;
  };
  for (const InventoryDevice& gpu : inventory.gpus) {
    if (RootPlacement* placement = add(gpu)) {
      ++placement->gpus;
    }
  }
  for (const InventoryDevice& nic : inventory.nics) {
    if (RootPlacement* placement = add(nic)) {
      ++placement->nics;
    }
  }
  std::vector<RootPlacement> roots;
  for (auto& [root, placement] : by_root) {
    roots.push_back(std::move(placement));
  }
  return roots;
}

Result<std::vector<RootPlacement>> root_placements_from_inventory_json(std::string_view text) {
  Result<Json> document = read_json(text, kInventoryJsonDepth);
  if (!document) {
    return document.error();
  }
  if (!document->is_object() || string_member(*document, "kind") != "topoguard.inventory/v1") {
    return Error{ErrorCode::kInvalidValue,
                 "not the output of topoguard inventory -o json (kind topoguard.inventory/v1)",
                 {}};
  }
  NodeInventory inventory;
  for (const auto& [key, kind] : {std::pair{"gpus", DeviceKind::kGpu},
                                  std::pair{"nics", DeviceKind::kRdmaNic}}) {
    const Json* devices = member(*document, key);
    if (devices == nullptr || !devices->is_array()) {
      return Error{ErrorCode::kMissingField, std::string(key) + " is missing or no list", {}};
    }
    for (std::size_t i = 0; i < devices->size(); ++i) {
      const Json& item = (*devices)[i];
      const Json* root = item.is_object() ? member(item, "pcieRoot") : nullptr;
      const Json* numa = item.is_object() ? member(item, "numaNode") : nullptr;
      if (root == nullptr || !(root->is_string() || root->is_null()) || numa == nullptr ||
          !(numa->is_number_integer() || numa->is_null())) {
        return Error{ErrorCode::kWrongType,
                     std::string(key) + "[" + std::to_string(i) +
                         "]: pcieRoot must be a string or null, numaNode an integer or null",
                     {}};
      }
      InventoryDevice device;
      device.kind = kind;
      if (root->is_string()) {
        device.pcie_root = root->get<std::string>();
      }
      if (numa->is_number_integer()) {
        device.numa_node = static_cast<int>(std::clamp<std::int64_t>(numa->get<std::int64_t>(), -1, 1 << 20));
      }
      (kind == DeviceKind::kGpu ? inventory.gpus : inventory.nics).push_back(std::move(device));
    }
  }
  return root_placements(inventory);
}

std::vector<Json> ab_manifests(const std::array<AbChoice, 3>& choices, const AbOptions& options) {
  std::vector<Json> manifests;
  for (const AbChoice& choice : choices) {
    if (!choice.gpu_root || !choice.nic_root) {
      continue;
    }
    const std::string variant(ab_variant_name(choice.variant));
    const std::string name = options.name_prefix + "-" + variant;
    const Json labels = {{"topoguard.io/ab", variant}};
    const Json annotations = {{"topoguard.io/ab-node", options.node},
                              {"topoguard.io/ab-gpu-root", *choice.gpu_root},
                              {"topoguard.io/ab-nic-root", *choice.nic_root},
                              {"topoguard.io/ab-expected-path", expected_path(choice.variant)}};
    Json devices = {{"requests", Json::array({request("gpu", options.gpu_class,
                                                      root_selector(options.root_attribute,
                                                                    *choice.gpu_root)),
                                              request("nic", options.nic_class,
                                                      root_selector(options.root_attribute,
                                                                    *choice.nic_root))})}};
    if (choice.variant == AbVariant::kAligned) {
      devices["constraints"] = Json::array(
          {Json{{"requests", Json::array({"gpu", "nic"})}, {"matchAttribute", options.root_attribute}}});
    }
    manifests.push_back(Json{{"apiVersion", "resource.k8s.io/v1"},
                             {"kind", "ResourceClaimTemplate"},
                             {"metadata",
                              {{"name", name},
                               {"namespace", options.namespace_name},
                               {"labels", labels},
                               {"annotations", annotations}}},
                             {"spec", {{"spec", {{"devices", devices}}}}}});
    Json environment = Json::array();
    for (const auto& [key, value] :
         {std::pair<std::string, std::string>{"TOPOGUARD_AB_VARIANT", variant},
          {"TOPOGUARD_AB_NODE", options.node},
          {"TOPOGUARD_AB_GPU_ROOT", *choice.gpu_root},
          {"TOPOGUARD_AB_NIC_ROOT", *choice.nic_root},
          {"TOPOGUARD_AB_EXPECTED_PATH", std::string(expected_path(choice.variant))}}) {
      environment.push_back(Json{{"name", key}, {"value", value}});
    }
    const Json container = {{"name", "benchmark"},
                            {"image", options.image},
                            {"command", Json::array({"/bin/sh", "-c", options.command})},
                            {"env", environment},
                            {"resources", {{"claims", Json::array({Json{{"name", "pair"}}})}}}};
    manifests.push_back(Json{
        {"apiVersion", "batch/v1"},
        {"kind", "Job"},
        {"metadata",
         {{"name", name},
          {"namespace", options.namespace_name},
          {"labels", labels},
          {"annotations", annotations}}},
        {"spec",
         {{"backoffLimit", 0},
          {"template",
           {{"metadata", {{"labels", labels}, {"annotations", annotations}}},
            {"spec",
             {{"restartPolicy", "Never"},
              {"nodeSelector", {{"kubernetes.io/hostname", options.node}}},
              {"resourceClaims",
               Json::array({Json{{"name", "pair"}, {"resourceClaimTemplateName", name}}})},
              {"containers", Json::array({container})}}}}}}}});
  }
  return manifests;
}

}  // namespace topoguard::hardware
