#include "derived_attributes.h"

#include <gtest/gtest.h>

#include "note_name.h"

namespace topoguard::cluster::derived {
namespace {

// A device of driver gpu.example.com with a pcieRoot, a NUMA node, a version and a list-valued
// attribute (which the CEL binding leaves unknown).
cel::Activation device() {
  cel::Activation activation;
  activation.driver = "gpu.example.com";
  activation.attributes = cel::Attributes{
      {"resource.kubernetes.io", {{"pcieRoot", std::string("pci0000:10")}, {"numaNode", 1}}},
      {"gpu.example.com",
       {{"driverVersion", *cel::Version::parse("1.2.3-rc.1")},
        {"ports", cel::UnknownValue{"list-valued attribute gpu.example.com/ports"}}}}};
  activation.capacity = cel::Capacity{};
  return activation;
}

struct DerivedCase {
  std::string_view note;
  std::string expression;
  State state;
  std::string value = "";  // AttributeValue::to_string() for kValue
  AttributeValue::Type type = AttributeValue::Type::kString;
};

class DerivedValueTest : public ::testing::TestWithParam<DerivedCase> {};

// The expression's value becomes an attribute value of the same type; other types and CEL errors
// are errors (the allocation fails); what the evaluator cannot know is unknown.
TEST_P(DerivedValueTest, AsTheAllocatorReadsIt) {
  const DerivedCase& c = GetParam();
  auto program = cel::compile(c.expression);
  ASSERT_TRUE(program) << program.error().to_string();
  cel::CostBudget budget(cel::kRequestCostBudget);
  const Outcome outcome = evaluate(*program, device(), budget);
  EXPECT_EQ(outcome.state, c.state) << outcome.message;
  if (c.state == State::kValue) {
    EXPECT_EQ(outcome.value.to_string(), c.value);
    EXPECT_EQ(outcome.value.type, c.type);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cluster, DerivedValueTest,
    ::testing::Values(
        DerivedCase{"string_read", R"(device.attributes["resource.kubernetes.io"].pcieRoot)",
                    State::kValue, "pci0000:10"},
        DerivedCase{"constant", R"("any")", State::kValue, "any"},
        DerivedCase{"int", R"(device.attributes["resource.kubernetes.io"].numaNode)",
                    State::kValue, "1", AttributeValue::Type::kInt},
        DerivedCase{"bool", "device.driver == 'gpu.example.com'", State::kValue, "true",
                    AttributeValue::Type::kBool},
        DerivedCase{"semver", R"(device.attributes["gpu.example.com"].driverVersion)",
                    State::kValue, "1.2.3-rc.1", AttributeValue::Type::kVersion},
        DerivedCase{"int_list", "[0, 1]", State::kValue, "[0, 1]", AttributeValue::Type::kInt},
        DerivedCase{"missing_attribute", R"(device.attributes["resource.kubernetes.io"].pciBusID)",
                    State::kError},
        DerivedCase{"missing_domain", R"(device.attributes["dra.net"].numaNode)", State::kError},
        DerivedCase{"double", "1.5", State::kError},
        DerivedCase{"uint", "1u", State::kError},
        DerivedCase{"null", "null", State::kError},
        DerivedCase{"map", "{'a': 1}", State::kError},
        DerivedCase{"mixed_list", "[1, 'a']", State::kError},
        DerivedCase{"list_of_lists", "[[1]]", State::kError},
        DerivedCase{"division_by_zero", "1 / 0", State::kError},
        DerivedCase{"empty_list", "[]", State::kUnknown},
        DerivedCase{"list_valued_attribute", R"(device.attributes["gpu.example.com"].ports)",
                    State::kUnknown}),
    topoguard::testing::NoteName{});

// A budget that runs out leaves the value unknown, never an error: the allocator's own limit
// is not the same.
TEST(DerivedValue, BudgetRunsOutToUnknown) {
  auto program = cel::compile(R"("a" + "b" + "c" + "d")");
  ASSERT_TRUE(program);
  cel::CostBudget budget(1);
  const Outcome outcome = evaluate(*program, device(), budget);
  EXPECT_EQ(outcome.state, State::kUnknown);
  EXPECT_TRUE(outcome.budget_exhausted);
  EXPECT_TRUE(budget.cut_short());
}

}  // namespace
}  // namespace topoguard::cluster::derived
