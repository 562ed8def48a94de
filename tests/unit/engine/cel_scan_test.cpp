#include "cel_scan.h"

#include <gtest/gtest.h>

#include "note_name.h"
#include "topoguard/engine/inventory.h"

namespace topoguard::engine {
namespace {

struct AttributeCase {
  std::string_view note;
  std::string expression;
  std::vector<std::string> attributes;
};

class AttributesInCelTest : public ::testing::TestWithParam<AttributeCase> {};

// Attribute reads in both CEL spellings become qualified names; other text is ignored.
TEST_P(AttributesInCelTest, FindsQualifiedNames) {
  EXPECT_EQ(attributes_in_cel(GetParam().expression), GetParam().attributes);
}

INSTANTIATE_TEST_SUITE_P(
    Cel, AttributesInCelTest,
    ::testing::Values(
        AttributeCase{"dotted", R"(device.attributes["dra.net"].numaNode == 0)",
                      {"dra.net/numaNode"}},
        AttributeCase{"indexed_single_quotes", R"(device.attributes['dra.net']['rdma'] == true)",
                      {"dra.net/rdma"}},
        AttributeCase{"spaces_and_newlines",
                      "device.attributes [ \"resource.kubernetes.io\" ]\n  [\"pciBusID\"] in "
                      "[\"0001:00:00.0\"]",
                      {"resource.kubernetes.io/pciBusID"}},
        AttributeCase{"two_reads",
                      R"(device.attributes["dra.net"].rdma && device.attributes["dra.net"]["numaNode"] == 1)",
                      {"dra.net/rdma", "dra.net/numaNode"}},
        AttributeCase{"map_only", R"(device.attributes["dra.net"] != null)", {}},
        AttributeCase{"unterminated", R"(device.attributes["dra.net)", {}},
        AttributeCase{"numeric_member", R"(device.attributes["x.io"].9a)", {}},
        AttributeCase{"capacity_is_not_an_attribute", R"(device.capacity["x.io"].memory)", {}},
        AttributeCase{"empty", "", {}}),
    topoguard::testing::NoteName());

struct DriverCase {
  std::string_view note;
  std::string expression;
  std::vector<std::string> drivers;
};

class DriversInCelEdgeTest : public ::testing::TestWithParam<DriverCase> {};

// The driver scan tolerates spacing and ignores comparisons it cannot read.
TEST_P(DriversInCelEdgeTest, FindsDrivers) {
  EXPECT_EQ(drivers_in_cel(GetParam().expression), GetParam().drivers);
}

INSTANTIATE_TEST_SUITE_P(
    Cel, DriversInCelEdgeTest,
    ::testing::Values(DriverCase{"no_spaces", R"(device.driver=="dra.net")", {"dra.net"}},
                      DriverCase{"multi_line", "device.driver ==\n  'dra.net' &&\n x", {"dra.net"}},
                      DriverCase{"reversed_no_spaces", R"("gpu.nvidia.com"==device.driver)",
                                 {"gpu.nvidia.com"}},
                      DriverCase{"missing_literal", "device.driver == ", {}},
                      DriverCase{"inequality", R"(device.driver != "dra.net")", {}},
                      DriverCase{"lone_quote_before", R"(' == device.driver)", {}}),
    topoguard::testing::NoteName());

}  // namespace
}  // namespace topoguard::engine
