#include "topoguard/hardware/ab_plan.h"

#include <gtest/gtest.h>

namespace topoguard::hardware {
namespace {

std::string pair_of(const AbChoice& choice) {
  return choice.gpu_root ? *choice.gpu_root + "+" + *choice.nic_root : "none: " + choice.missing_reason;
}

// Two roots per NUMA node with two GPUs and two NICs each: every variant, on devices no earlier
// variant took where there are some.
TEST(AbPlanTest, DgxLikeNodeHasEveryVariant) {
  const std::vector<RootPlacement> roots = {
      {"pci0000:00", 0, 2, 2}, {"pci0000:40", 0, 2, 2}, {"pci0000:80", 1, 2, 2}};
  const auto choices = choose_ab_pairs(roots);
  EXPECT_EQ(pair_of(choices[0]), "pci0000:00+pci0000:00");
  EXPECT_EQ(pair_of(choices[1]), "pci0000:00+pci0000:40");
  EXPECT_EQ(pair_of(choices[2]), "pci0000:40+pci0000:80");
}

// With one GPU and one NIC per root the later variants reuse devices rather than vanish.
TEST(AbPlanTest, ReusesDevicesWhenNoneAreLeft) {
  const auto choices = choose_ab_pairs({{"pci0000:00", 0, 1, 1}, {"pci0000:40", 1, 1, 1}});
  EXPECT_EQ(pair_of(choices[0]), "pci0000:00+pci0000:00");
  EXPECT_EQ(pair_of(choices[1]),
            "none: no NUMA node has a GPU and an RDMA NIC on different PCIe roots");
  EXPECT_EQ(pair_of(choices[2]), "pci0000:00+pci0000:40");
}

// GPUs alone on their roots (GB200-like) and NUMA unknown (a VM): said, not guessed.
TEST(AbPlanTest, SaysWhatTheNodeCannotGive) {
  const auto gb200 = choose_ab_pairs({{"pci0008:00", 0, 1, 0}, {"pci0000:00", 0, 0, 1}});
  EXPECT_FALSE(gb200[0].gpu_root.has_value());
  EXPECT_NE(gb200[0].missing_reason.find("C2C"), std::string::npos);
  const auto vm = choose_ab_pairs({{"pci0000:00", std::nullopt, 2, 2}});
  EXPECT_TRUE(vm[0].gpu_root.has_value());
  EXPECT_EQ(pair_of(vm[2]), "none: NUMA nodes unknown (numa_node -1 or not published)");
}

// The selectors quote whatever the names hold as CEL string literals.
TEST(AbPlanTest, SelectorsQuoteTheRoot) {
  AbOptions options;
  options.root_attribute = "example.com/root";
  const auto manifests = ab_manifests(choose_ab_pairs({{"a\"b", 0, 1, 1}}), options);
  ASSERT_EQ(manifests.size(), 2U);
  EXPECT_EQ(manifests[0]["spec"]["spec"]["devices"]["requests"][0]["exactly"]["selectors"][0]
                     ["cel"]["expression"],
            "device.attributes[\"example.com\"][\"root\"] == \"a\\\"b\"");
  EXPECT_EQ(manifests[0]["spec"]["spec"]["devices"]["constraints"][0]["matchAttribute"],
            "example.com/root");
}

// Inventory JSON that is not one is refused with the field named.
TEST(AbPlanTest, InventoryJsonChecked) {
  EXPECT_FALSE(root_placements_from_inventory_json("[]"));
  const auto wrong = root_placements_from_inventory_json(
      R"({"kind": "topoguard.inventory/v1", "gpus": [{"pcieRoot": 1, "numaNode": 0}], "nics": []})");
  ASSERT_FALSE(wrong);
  EXPECT_EQ(wrong.error().message,
            "gpus[0]: pcieRoot must be a string or null, numaNode an integer or null");
  const auto good = root_placements_from_inventory_json(
      R"({"kind": "topoguard.inventory/v1", "gpus": [{"pcieRoot": "r", "numaNode": -1}],
          "nics": [{"pcieRoot": "r", "numaNode": null}]})");
  ASSERT_TRUE(good);
  ASSERT_EQ(good->size(), 1U);
  EXPECT_EQ((*good)[0].gpus, 1U);
  EXPECT_FALSE((*good)[0].numa_node.has_value());
}

}  // namespace
}  // namespace topoguard::hardware
