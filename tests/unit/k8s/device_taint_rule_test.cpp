#include "topoguard/k8s/device_taint_rule.h"

#include <gtest/gtest.h>

#include <string>

namespace topoguard::k8s {
namespace {

Json rule(const std::string& spec) {
  return Json::parse(R"({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule",
                         "metadata": {"name": "maintenance"}, "spec": )" +
                     spec + "}");
}

Device device(const std::string& driver, const std::string& pool, const std::string& name) {
  Device out;
  out.driver = Interned<std::string>(driver);
  out.pool = Interned<std::string>(pool);
  out.name = Interned<std::string>(name);
  return out;
}

// The selector's driver, pool and device each narrow the devices the taint applies to; one
// that is not set matches all. The taint names its rule.
TEST(DeviceTaintRuleTest, SelectsByDriverPoolAndDevice) {
  const auto read = read_device_taint_rule(rule(R"({
    "deviceSelector": {"driver": "gpu.example.com", "pool": "n1"},
    "taint": {"key": "maintenance", "effect": "NoSchedule"}})"));
  ASSERT_TRUE(read) << read.error().to_string();
  ASSERT_TRUE(read->has_value());
  const DeviceTaintRule& taint_rule = **read;
  EXPECT_EQ(taint_rule.taint.key, "maintenance");
  EXPECT_EQ(taint_rule.taint.effect, "NoSchedule");
  EXPECT_EQ(taint_rule.taint.rule, "maintenance");
  EXPECT_FALSE(taint_rule.taint.uncertain);
  EXPECT_TRUE(taint_rule.applies_to(device("gpu.example.com", "n1", "gpu-0")));
  EXPECT_TRUE(taint_rule.applies_to(device("gpu.example.com", "n1", "gpu-7")));
  EXPECT_FALSE(taint_rule.applies_to(device("gpu.example.com", "n2", "gpu-0")));
  EXPECT_FALSE(taint_rule.applies_to(device("dra.net", "n1", "gpu-0")));
}

// A rule without a selector taints nothing; one that also selects by class or CEL (which
// topoguard does not evaluate) may not taint the devices it names.
TEST(DeviceTaintRuleTest, WithoutSelectorOrWithUnevaluatedSelectors) {
  const auto none = read_device_taint_rule(rule(R"({"taint": {"key": "k", "effect": "None"}})"));
  ASSERT_TRUE(none) << none.error().to_string();
  EXPECT_FALSE(none->has_value());

  const auto by_class = read_device_taint_rule(rule(R"({
    "deviceSelector": {"deviceClassName": "gpus", "device": "gpu-0"},
    "taint": {"key": "k", "effect": "NoExecute"}})"));
  ASSERT_TRUE(by_class) << by_class.error().to_string();
  ASSERT_TRUE(by_class->has_value());
  EXPECT_TRUE((*by_class)->taint.uncertain);
  EXPECT_TRUE((*by_class)->applies_to(device("any.example.com", "p", "gpu-0")));
  EXPECT_FALSE((*by_class)->applies_to(device("any.example.com", "p", "gpu-1")));
}

struct BadTaintRuleCase {
  const char* spec;
  const char* field;
};

class BadDeviceTaintRuleTest : public ::testing::TestWithParam<BadTaintRuleCase> {};

TEST_P(BadDeviceTaintRuleTest, NamesTheField) {
  const auto read = read_device_taint_rule(rule(GetParam().spec));
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().location.field, GetParam().field) << read.error().to_string();
}

INSTANTIATE_TEST_SUITE_P(
    Fields, BadDeviceTaintRuleTest,
    ::testing::Values(BadTaintRuleCase{"[]", "/spec"}, BadTaintRuleCase{"{}", "/spec/taint"},
                      BadTaintRuleCase{R"({"taint": []})", "/spec/taint"},
                      BadTaintRuleCase{R"({"taint": {"key": 1}})", "/spec/taint/key"},
                      BadTaintRuleCase{R"({"deviceSelector": [], "taint": {}})",
                                       "/spec/deviceSelector"},
                      BadTaintRuleCase{R"({"deviceSelector": {"pool": 3}, "taint": {}})",
                                       "/spec/deviceSelector/pool"}));

}  // namespace
}  // namespace topoguard::k8s
