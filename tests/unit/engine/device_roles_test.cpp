#include "device_roles.h"

#include <gtest/gtest.h>

#include "engine_test_support.h"
#include "note_name.h"

namespace topoguard::engine {
namespace {

struct RoleCase {
  std::string_view note;
  std::vector<std::string> selectors;
  bool gpu;
  bool nic;
};

class SelectorRolesTest : public ::testing::TestWithParam<RoleCase> {};

// Under the default policy, a request's role comes from evaluating its selectors against every
// driver: GPU (NIC) only when every driver they can still match is a GPU (NIC) driver.
TEST_P(SelectorRolesTest, ClassifiesByEvaluation) {
  const policy::Policy& policy = testing::builtin_policies().policies().front();
  const Inventory inventory;
  const DeviceRoles roles(policy, inventory);
  k8s::DeviceChoice choice;
  choice.device_class_name = "accel.example.com";
  for (const std::string& selector : GetParam().selectors) {
    auto program = cel::compile(selector);
    ASSERT_TRUE(program) << program.error().to_string();
    choice.selector_programs.push_back(std::move(*program));
  }
  const Roles result = roles.of_choice(choice);
  EXPECT_EQ(result.gpu, GetParam().gpu);
  EXPECT_EQ(result.nic, GetParam().nic);
}

INSTANTIATE_TEST_SUITE_P(
    Engine, SelectorRolesTest,
    ::testing::Values(
        RoleCase{"driver_equals_gpu", {R"(device.driver == "gpu.nvidia.com")"}, true, false},
        RoleCase{"reversed_single_quotes", {R"('dra.net' == device.driver)"}, false, true},
        RoleCase{"negated_gpu_is_not_a_gpu", {R"(!(device.driver == "gpu.nvidia.com"))"}, false, false},
        RoleCase{"not_equal_is_not_a_gpu", {R"(device.driver != "dra.net")"}, false, false},
        RoleCase{"in_gpu_list", {R"(device.driver in ["gpu.nvidia.com", "gpu.amd.com"])"}, true, false},
        RoleCase{"in_mixed_list", {R"(device.driver in ["gpu.nvidia.com", "dra.net"])"}, false, false},
        RoleCase{"gpu_with_attribute", {R"(device.driver == "gpu.nvidia.com" && device.attributes["gpu.nvidia.com"].productName.startsWith("NVIDIA"))"}, true, false},
        RoleCase{"gpu_or_attribute_is_unclear", {R"(device.driver == "gpu.nvidia.com" || device.attributes["x.io"].y)"}, false, false},
        RoleCase{"two_selectors_intersect", {R"(device.driver in ["gpu.nvidia.com", "dra.net"])", R"(device.driver != "dra.net")"}, true, false},
        RoleCase{"attribute_only", {R"(device.attributes["dra.net"].rdma == true)"}, false, false},
        RoleCase{"other_driver", {R"(device.driver == "accel.example.com")"}, false, false},
        RoleCase{"prefix_also_matches_unlisted_names", {R"(device.driver.startsWith("gpu."))"}, false, false},
        RoleCase{"ternary_on_driver", {R"(device.driver == "dra.net" ? true : false)"}, false, true},
        RoleCase{"unimplemented_function", {R"(device.driver.lowerAscii() == "gpu.nvidia.com")"}, false, false},
        RoleCase{"no_selectors", {}, false, false}),
    topoguard::testing::NoteName());

// One DeviceRoles answers many choices (it remembers each selector set): every answer must be
// the one a fresh DeviceRoles gives, in any order, with sets that share sources or concatenate
// to the same text.
TEST(DeviceRolesTest, RememberedSelectorSetsAnswerAsFreshOnes) {
  const policy::Policy& policy = testing::builtin_policies().policies().front();
  const Inventory inventory;
  const std::vector<std::vector<std::string>> sets = {
      {R"(device.driver == "gpu.nvidia.com")"},
      {R"(device.driver == "dra.net")"},
      {R"(device.driver == "gpu.nvidia.com")", R"(device.driver == "dra.net")"},
      {R"(device.driver in ["gpu.nvidia.com", "dra.net"])", R"(device.driver != "dra.net")"},
      {R"(device.driver in ["gpu.nvidia.com", "dra.net"])"},
      {R"(device.driver != "dra.net")"},
      {R"(device.driver == "gpu.nvidia.com")"},
      {R"(device.driver == "dra.net")"}};
  const auto choice_of = [](const std::vector<std::string>& selectors) {
    k8s::DeviceChoice choice;
    choice.device_class_name = "accel.example.com";
    for (const std::string& selector : selectors) {
      auto program = cel::compile(selector);
      EXPECT_TRUE(program);
      choice.selector_programs.push_back(std::move(*program));
    }
    return choice;
  };
  const DeviceRoles shared(policy, inventory);
  for (const auto& set : sets) {
    const k8s::DeviceChoice choice = choice_of(set);
    const Roles remembered = shared.of_choice(choice);
    const Roles fresh = DeviceRoles(policy, inventory).of_choice(choice);
    EXPECT_EQ(remembered.gpu, fresh.gpu) << set.front();
    EXPECT_EQ(remembered.nic, fresh.nic) << set.front();
  }
  EXPECT_FALSE(shared.of_choice(choice_of(sets[2])).any());  // GPU and NIC at once: neither
  EXPECT_TRUE(shared.of_choice(choice_of(sets[3])).gpu);
  EXPECT_FALSE(shared.of_choice(choice_of(sets[4])).any());
}

// A DeviceClass that selects GPUs makes its requests GPU requests, whatever their name.
TEST(DeviceRolesTest, DeviceClassSelectorsClassify) {
  const policy::Policy& policy = testing::builtin_policies().policies().front();
  const testing::InventoryFixture fixture(R"(apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: my-accelerators}
spec:
  selectors: [{cel: {expression: 'device.driver in ["gpu.nvidia.com", "gpu.amd.com"]'}}]
)", Inventory::Claims::kUnknown);
  const DeviceRoles roles(policy, fixture.inventory());
  k8s::DeviceChoice choice;
  choice.device_class_name = "my-accelerators";
  EXPECT_TRUE(roles.of_choice(choice).gpu);
  EXPECT_FALSE(roles.of_choice(choice).nic);
}

}  // namespace
}  // namespace topoguard::engine
