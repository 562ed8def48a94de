// The A/B pattern (issue 44): on one node, three claims for a GPU and an RDMA NIC that differ
// only in where the pair sits: on one PCIe root (aligned), on two roots of one NUMA node, across
// NUMA nodes. Each is pinned by CEL selectors on the published root, so the scheduler has no
// other choice, and comes with a Job skeleton that runs the user's benchmark. Pure: where the
// node's devices sit in, manifests out.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "topoguard/common/json.h"
#include "topoguard/common/result.h"
#include "topoguard/hardware/pci_inventory.h"
#include "topoguard/k8s/kinds.h"

namespace topoguard::hardware {

// How many GPUs and NICs one PCIe root of the node holds, and its NUMA node (none: unknown or
// no affinity).
struct RootPlacement {
  std::string root;
  std::optional<int> numa_node;
  std::size_t gpus = 0;
  std::size_t nics = 0;
};

enum class AbVariant : std::uint8_t { kAligned, kSameNumaOtherRoot, kAcrossNuma };
inline constexpr std::array<AbVariant, 3> kAbVariants = {
    AbVariant::kAligned, AbVariant::kSameNumaOtherRoot, AbVariant::kAcrossNuma};

// "aligned", "same-numa", "cross-numa": the variant in names and labels.
[[nodiscard]] std::string_view ab_variant_name(AbVariant variant);

struct AbChoice {
  AbVariant variant = AbVariant::kAligned;
  std::optional<std::string> gpu_root;  // none: the node has no such pair
  std::optional<std::string> nic_root;
  std::string missing_reason;  // why there is none
};

// For each variant the first pair of roots (in root order), preferring devices no variant before
// took, so that the Jobs can run at once where the node has enough.
[[nodiscard]] std::array<AbChoice, 3> choose_ab_pairs(const std::vector<RootPlacement>& roots);

// The roots of an inventory: NICs that are VFs count with their PF's root.
[[nodiscard]] std::vector<RootPlacement> root_placements(const NodeInventory& inventory);
// The same from `topoguard inventory -o json` output (read on another machine than the node).
[[nodiscard]] Result<std::vector<RootPlacement>> root_placements_from_inventory_json(
    std::string_view text);

struct AbOptions {
  std::string node;
  std::string namespace_name = "default";
  std::string name_prefix = "ab";
  std::string gpu_class;
  std::string nic_class;
  std::string image;
  std::string command;  // run with /bin/sh -c
  // The attribute the drivers publish the root under, "<domain>/<name>".
  std::string root_attribute{k8s::kPcieRootAttribute};
};

// A ResourceClaimTemplate and a Job per variant that has a pair, in variant order.
[[nodiscard]] std::vector<Json> ab_manifests(const std::array<AbChoice, 3>& choices,
                                             const AbOptions& options);

}  // namespace topoguard::hardware
