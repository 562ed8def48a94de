#include "topoguard/k8s/device_class.h"

#include <gtest/gtest.h>

#include <string>

namespace topoguard::k8s {
namespace {

Json device_class(const std::string& spec) {
  return Json::parse(R"({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                         "metadata": {"name": "vf"}, "spec": )" +
                     spec + "}");
}

// Selectors keep their expressions and their places in spec.selectors, compiled once here; an
// entry without `cel` (a selector kind this version does not know) is not one.
TEST(DeviceClassTest, ReadsSelectorsWithTheirPlaces) {
  const auto read = read_device_class(device_class(R"({
    "selectors": [{"cel": {"expression": "device.driver == 'a'"}}, {"future": {}},
                  {"cel": {"expression": "true"}}],
    "extendedResourceName": "example.com/vf"})"));
  ASSERT_TRUE(read) << read.error().to_string();
  EXPECT_EQ(read->name, "vf");
  EXPECT_EQ(read->selectors, (std::vector<std::string>{"device.driver == 'a'", "true"}));
  EXPECT_EQ(read->selector_positions, (std::vector<std::size_t>{0, 2}));
  ASSERT_EQ(read->programs.size(), 2U);
  EXPECT_EQ(read->programs[1].source(), "true");
  EXPECT_TRUE(read->selectors_readable());
  EXPECT_EQ(read->extended_resource_name, "example.com/vf");

  const auto bare = read_device_class(device_class("null"));
  ASSERT_TRUE(bare);
  EXPECT_TRUE(bare->selectors.empty());
}

struct BadClassCase {
  const char* spec;
  const char* field;
};

class BadDeviceClassTest : public ::testing::TestWithParam<BadClassCase> {};

// Each error names the field it is at.
TEST_P(BadDeviceClassTest, NamesTheField) {
  const auto read = read_device_class(device_class(GetParam().spec));
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().location.field, GetParam().field) << read.error().to_string();
}

INSTANTIATE_TEST_SUITE_P(
    Fields, BadDeviceClassTest,
    ::testing::Values(BadClassCase{"[]", "/spec"},
                      BadClassCase{R"({"extendedResourceName": 7})", "/spec/extendedResourceName"},
                      BadClassCase{R"({"selectors": {}})", "/spec/selectors"},
                      BadClassCase{R"({"selectors": ["true"]})", "/spec/selectors/0"},
                      BadClassCase{R"({"selectors": [{"cel": "true"}]})", "/spec/selectors/0/cel"},
                      BadClassCase{R"({"selectors": [{"cel": {}}]})",
                                   "/spec/selectors/0/cel/expression"},
                      BadClassCase{R"({"selectors": [{"cel": {"expression": ""}}]})",
                                   "/spec/selectors/0/cel/expression"}));

}  // namespace
}  // namespace topoguard::k8s
