#include <gtest/gtest.h>

#include "note_name.h"
#include "topoguard/cel/cel.h"

namespace topoguard::cel {
namespace {

// An NVIDIA GPU as a ResourceSlice publishes it.
Activation gpu() {
  Activation device;
  device.driver = "gpu.nvidia.com";
  device.attributes = Attributes{
      {"gpu.nvidia.com",
       {{"productName", std::string("NVIDIA A100-SXM4-40GB")},
        {"index", std::int64_t{3}},
        {"mig", false},
        {"driverVersion", *Version::parse("550.54.15")},
        {"listValued", UnknownValue{}}}},
      {"resource.kubernetes.io", {{"pcieRoot", std::string("pci0000:00")}}}};
  device.capacity = Capacity{{"gpu.nvidia.com", {{"memory", *Quantity::parse("40Gi")}}}};
  return device;
}

// Only the driver is known: how device roles are read from selectors.
Activation driver_only(std::string driver) {
  Activation device;
  device.driver = std::move(driver);
  return device;
}

enum class Device { kGpu, kDriverOnly, kNothing };

struct EvalCase {
  std::string_view note;
  std::string expression;
  Device device;
  Outcome outcome;
};

class EvaluateTest : public ::testing::TestWithParam<EvalCase> {};

// The selector's outcome on the device, with CEL's semantics.
TEST_P(EvaluateTest, GivesTheOutcome) {
  const auto program = compile(GetParam().expression);
  ASSERT_TRUE(program) << program.error().to_string();
  const Activation device = GetParam().device == Device::kGpu
                                ? gpu()
                                : GetParam().device == Device::kDriverOnly
                                      ? driver_only("dra.net")
                                      : Activation{};
  const Evaluation result = evaluate(*program, device);
  EXPECT_EQ(outcome_name(result.outcome), std::string(outcome_name(GetParam().outcome)))
      << result.message;
}

constexpr Device kGpu = Device::kGpu;
constexpr Device kDriver = Device::kDriverOnly;
constexpr Device kNothing = Device::kNothing;
constexpr Outcome kTrue = Outcome::kTrue;
constexpr Outcome kFalse = Outcome::kFalse;
constexpr Outcome kError = Outcome::kError;
constexpr Outcome kUnknown = Outcome::kUnknown;

INSTANTIATE_TEST_SUITE_P(
    Device, EvaluateTest,
    ::testing::Values(
        EvalCase{"driver_equals", R"(device.driver == "gpu.nvidia.com")", kGpu, kTrue},
        EvalCase{"driver_not_equals", R"(!(device.driver == "gpu.nvidia.com"))", kGpu, kFalse},
        EvalCase{"driver_in_list", R"(device.driver in ["gpu.nvidia.com", "gpu.amd.com"])", kGpu, kTrue},
        EvalCase{"driver_in_list_other", R"(device.driver in ["gpu.nvidia.com", "gpu.amd.com"])", kDriver, kFalse},
        EvalCase{"attribute_dotted", R"(device.attributes["gpu.nvidia.com"].index == 3)", kGpu, kTrue},
        EvalCase{"attribute_indexed", R"(device.attributes["gpu.nvidia.com"]["productName"].startsWith("NVIDIA A100"))", kGpu, kTrue},
        EvalCase{"attribute_bool", R"(!device.attributes["gpu.nvidia.com"].mig)", kGpu, kTrue},
        EvalCase{"attribute_missing_is_error", R"(device.attributes["gpu.nvidia.com"].numa == 0)", kGpu, kError},
        EvalCase{"domain_missing_is_empty_map", R"(size(device.attributes["other.io"]) == 0)", kGpu, kTrue},
        EvalCase{"has_attribute", R"(has(device.attributes["gpu.nvidia.com"].index))", kGpu, kTrue},
        EvalCase{"has_missing_attribute", R"(has(device.attributes["dra.net"].rdma))", kGpu, kFalse},
        EvalCase{"list_valued_attribute_unknown", R"(device.attributes["gpu.nvidia.com"].listValued == 1)", kGpu, kUnknown},
        EvalCase{"attributes_unknown", R"(device.attributes["dra.net"].rdma)", kDriver, kUnknown},
        EvalCase{"driver_unknown", R"(device.driver == "dra.net")", kNothing, kUnknown},
        EvalCase{"false_and_unknown", R"(device.driver == "gpu.nvidia.com" && device.attributes["dra.net"].rdma)", kDriver, kFalse},
        EvalCase{"unknown_and_false", R"(device.attributes["dra.net"].rdma && device.driver == "gpu.nvidia.com")", kDriver, kFalse},
        EvalCase{"true_or_unknown", R"(device.attributes["x"].y || device.driver == "dra.net")", kDriver, kTrue},
        EvalCase{"true_and_unknown", R"(device.driver == "dra.net" && device.attributes["x"].y)", kDriver, kUnknown},
        EvalCase{"error_or_true", R"(device.attributes["gpu.nvidia.com"].nope || true)", kGpu, kTrue},
        EvalCase{"error_and_false", R"(device.attributes["gpu.nvidia.com"].nope && false)", kGpu, kFalse},
        EvalCase{"error_and_true", R"(device.attributes["gpu.nvidia.com"].nope && true)", kGpu, kError},
        EvalCase{"unknown_and_error", R"(device.attributes["x"].y && 1 / 0 == 1)", kDriver, kUnknown},
        EvalCase{"capacity_compare", R"(device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40960Mi")) == 0)", kGpu, kTrue},
        EvalCase{"capacity_greater", R"(device.capacity["gpu.nvidia.com"].memory.isGreaterThan(quantity("32Gi")))", kGpu, kTrue},
        EvalCase{"version_attribute", R"(device.attributes["gpu.nvidia.com"].driverVersion.isGreaterThan(semver("535.0.0")))", kGpu, kTrue},
        EvalCase{"version_equals", R"(device.attributes["gpu.nvidia.com"].driverVersion == semver("550.54.15"))", kGpu, kTrue},
        EvalCase{"matches_regex", R"(device.attributes["resource.kubernetes.io"].pcieRoot.matches("^pci[0-9a-f]{4}:[0-9a-f]{2}$"))", kGpu, kTrue},
        EvalCase{"matches_invalid_regex", R"(device.driver.matches("("))", kGpu, kError},
        EvalCase{"contains_endsWith", R"(device.driver.contains("nvidia") && device.driver.endsWith(".com"))", kGpu, kTrue},
        EvalCase{"unimplemented_function", R"(device.driver.lowerAscii() == "gpu.nvidia.com")", kGpu, kUnknown},
        EvalCase{"unimplemented_conversion", R"(string(device.attributes["gpu.nvidia.com"].index) == "3")", kGpu, kUnknown},
        EvalCase{"unknown_field_of_device", R"(device.name == "x")", kGpu, kError},
        EvalCase{"undeclared_variable", R"(self == 1)", kGpu, kError},
        EvalCase{"not_a_bool", R"(device.driver)", kGpu, kError},
        EvalCase{"macro_over_attributes", R"(device.attributes["gpu.nvidia.com"].exists(k, k == "mig"))", kGpu, kTrue},
        EvalCase{"all_macro_absorbs_error", R"([0, 1].all(x, 1 / x > 0 && x > 5))", kNothing, kFalse},
        EvalCase{"exists_macro_absorbs_error", R"([0, 1].exists(x, 1 / x == 1))", kNothing, kTrue},
        EvalCase{"exists_one", R"([1, 2, 3].exists_one(x, x > 2))", kNothing, kTrue},
        EvalCase{"map_filter", R"([1, 2, 3].map(x, x > 1, x * 10) == [20, 30])", kNothing, kTrue},
        EvalCase{"filter_size", R"(size([1, 2, 3].filter(x, x % 2 == 1)) == 2)", kNothing, kTrue},
        EvalCase{"ternary", R"(device.driver == "gpu.nvidia.com" ? true : 1 / 0 == 0)", kGpu, kTrue},
        EvalCase{"ternary_non_bool", R"(1 ? true : false)", kNothing, kError},
        EvalCase{"heterogeneous_equality", R"(1 == 1u && 1 == 1.0 && 1 != "1")", kNothing, kTrue},
        EvalCase{"cross_type_order", R"(1 < 1.5 && 2u > 1 && -1 < 0u)", kNothing, kTrue},
        EvalCase{"int_overflow", R"(9223372036854775807 + 1 > 0)", kNothing, kError},
        EvalCase{"uint_underflow", R"(0u - 1u > 0u)", kNothing, kError},
        EvalCase{"division_by_zero", R"(1 / 0 == 0)", kNothing, kError},
        EvalCase{"double_division_by_zero", R"(1.0 / 0.0 > 1e308)", kNothing, kTrue},
        EvalCase{"nan_not_equal", R"(0.0 / 0.0 != 0.0 / 0.0)", kNothing, kTrue},
        EvalCase{"string_size_code_points", R"(size("héllo") == 5)", kNothing, kTrue},
        EvalCase{"map_lookup_numeric_key", R"({1: "a"}[1u] == "a" && {1: "a"}[1.0] == "a")", kNothing, kTrue},
        EvalCase{"map_missing_key", R"({"a": 1}["b"] == 1)", kNothing, kError},
        EvalCase{"map_repeated_key", R"({"a": 1, "a": 2}.size() == 2)", kNothing, kError},
        EvalCase{"map_in", R"("a" in {"a": 1} && !("b" in {"a": 1}))", kNothing, kTrue},
        EvalCase{"list_index_out_of_range", R"([1][1] == 1)", kNothing, kError},
        EvalCase{"list_concat_equality", R"([1] + [2] == [1, 2] && [[1]] != [[2]])", kNothing, kTrue},
        EvalCase{"string_order", R"("a" < "b" && b"a" < b"b" && false < true)", kNothing, kTrue},
        EvalCase{"bad_comparison", R"(1 < "a")", kNothing, kError},
        EvalCase{"message_construction", R"(google.protobuf.Int64Value{value: 1} == 1)", kNothing, kUnknown},
        EvalCase{"type_value", R"(type(1) == int)", kNothing, kUnknown},
        EvalCase{"shadowed_device", R"([{"driver": "x"}].all(device, device.driver == "x"))", kGpu, kTrue},
        EvalCase{"whole_device_map", R"(device["driver"] == "gpu.nvidia.com")", kGpu, kTrue}),
    testing::NoteName());

struct ExtensionCase {
  std::string_view note;
  std::string expression;
  Outcome outcome;
};

class KubernetesLibraryTest : public ::testing::TestWithParam<ExtensionCase> {};

// Kubernetes' quantity and semver libraries, with the examples of the Kubernetes CEL
// documentation (kubernetes.io/docs/reference/using-api/cel, "Kubernetes quantity library" and
// "Kubernetes semver library") turned into boolean checks.
TEST_P(KubernetesLibraryTest, MatchesTheDocumentation) {
  const auto program = compile(GetParam().expression);
  ASSERT_TRUE(program) << program.error().to_string();
  const Evaluation result = evaluate(*program, Activation{});
  EXPECT_EQ(outcome_name(result.outcome), std::string(outcome_name(GetParam().outcome)))
      << result.message;
}

INSTANTIATE_TEST_SUITE_P(
    Kubernetes, KubernetesLibraryTest,
    ::testing::Values(
        ExtensionCase{"isQuantity_decimal", R"(isQuantity("1.3G"))", kTrue},
        ExtensionCase{"isQuantity_binary", R"(isQuantity("1.3Gi"))", kTrue},
        ExtensionCase{"isQuantity_comma", R"(isQuantity("1,3G"))", kFalse},
        ExtensionCase{"isQuantity_exponent", R"(isQuantity("12e6") && isQuantity("12E6"))", kTrue},
        ExtensionCase{"isQuantity_bad_suffix", R"(isQuantity("10Gb") || isQuantity("") || isQuantity("1e"))", kFalse},
        ExtensionCase{"quantity_invalid", R"(quantity("abc").isInteger())", kError},
        ExtensionCase{"isInteger_large", R"(quantity("500000G").isInteger())", kTrue},
        ExtensionCase{"isInteger_fraction", R"(quantity("50m").isInteger())", kFalse},
        ExtensionCase{"asInteger", R"(quantity("50k").asInteger() == 50000)", kTrue},
        ExtensionCase{"asInteger_overflow", R"(quantity("9999999999999999999999999999999999999G").asInteger() > 0)", kError},
        ExtensionCase{"asApproximateFloat", R"(quantity("50.703k").asApproximateFloat() == 50703.0)", kTrue},
        ExtensionCase{"asApproximateFloat_huge", R"(quantity("9999999999999999999999999999999999999G").asApproximateFloat() > 9.9e45)", kTrue},
        ExtensionCase{"add", R"(quantity("50k").add(quantity("20k")) == quantity("70k"))", kTrue},
        ExtensionCase{"add_int", R"(quantity("50k").add(20) == quantity("50020"))", kTrue},
        ExtensionCase{"sub", R"(quantity("50k").sub(quantity("20k")) == quantity("30k"))", kTrue},
        ExtensionCase{"sub_int", R"(quantity("50k").sub(20000) == quantity("30k"))", kTrue},
        ExtensionCase{"sub_below_zero", R"(quantity("1").sub(quantity("3")).sign() == -1)", kTrue},
        ExtensionCase{"isLessThan", R"(quantity("50M").isLessThan(quantity("100M")))", kTrue},
        ExtensionCase{"isGreaterThan", R"(quantity("100M").isGreaterThan(quantity("50M")))", kTrue},
        ExtensionCase{"compareTo_equal_units", R"(quantity("200M").compareTo(quantity("0.2G")) == 0)", kTrue},
        ExtensionCase{"compareTo_binary_decimal", R"(quantity("1Ki").compareTo(quantity("1k")) == 1)", kTrue},
        ExtensionCase{"equal_binary_forms", R"(quantity("1Gi") == quantity("1024Mi"))", kTrue},
        ExtensionCase{"sign", R"(quantity("-50k").sign() == -1 && quantity("0").sign() == 0)", kTrue},
        ExtensionCase{"nano_rounds_up", R"(quantity("0.1n") == quantity("1n"))", kTrue},
        ExtensionCase{"milli", R"(quantity("1500m") == quantity("1.5"))", kTrue},
        ExtensionCase{"quantity_vs_int_equality", R"(quantity("1") == 1)", kError},
        ExtensionCase{"isSemver", R"(isSemver("1.0.0"))", kTrue},
        ExtensionCase{"isSemver_invalid", R"(isSemver("v1.0") || isSemver("1.0") || isSemver("01.0.0"))", kFalse},
        ExtensionCase{"isSemver_normalize", R"(isSemver("v1.0", true) && isSemver("01.02.03", true))", kTrue},
        ExtensionCase{"semver_invalid", R"(semver("1.0").major() == 1)", kError},
        ExtensionCase{"semver_normalized", R"(semver("v01.2", true) == semver("1.2.0"))", kTrue},
        ExtensionCase{"semver_major_minor_patch", R"(semver("1.2.3").major() == 1 && semver("1.2.3").minor() == 2 && semver("1.2.3").patch() == 3)", kTrue},
        ExtensionCase{"semver_isGreaterThan", R"(semver("1.0.0").isGreaterThan(semver("0.1.0")))", kTrue},
        ExtensionCase{"semver_isLessThan", R"(semver("1.0.0").isLessThan(semver("1.1.0")))", kTrue},
        ExtensionCase{"semver_compareTo", R"(semver("1.0.0").compareTo(semver("1.0.0")) == 0 && semver("1.0.0").compareTo(semver("2.0.0")) == -1)", kTrue},
        ExtensionCase{"semver_prerelease_lower", R"(semver("1.0.0-alpha").isLessThan(semver("1.0.0")))", kTrue},
        ExtensionCase{"semver_prerelease_order", R"(semver("1.0.0-alpha.1").isLessThan(semver("1.0.0-alpha.beta")) && semver("1.0.0-beta.2").isLessThan(semver("1.0.0-beta.11")))", kTrue},
        ExtensionCase{"semver_build_ignored", R"(semver("1.0.0+build.1") == semver("1.0.0+build.2"))", kTrue},
        ExtensionCase{"semver_less_operator_has_no_overload", R"(semver("1.0.0") < semver("2.0.0"))", kError}),
    testing::NoteName());

// A program is immutable: evaluating it on many devices gives each its own answer.
TEST(CelEvaluator, OneProgramManyDevices) {
  const auto program = compile(R"(device.driver == "dra.net")");
  ASSERT_TRUE(program);
  EXPECT_EQ(evaluate(*program, driver_only("dra.net")).outcome, Outcome::kTrue);
  EXPECT_EQ(evaluate(*program, gpu()).outcome, Outcome::kFalse);
  EXPECT_EQ(evaluate(*program, Activation{}).outcome, Outcome::kUnknown);
}

// Runaway comprehensions stop at the per-call cost limit with an unknown result.
TEST(CelEvaluator, CostLimitGivesUnknown) {
  std::string list = "[";
  for (int i = 0; i < 300; ++i) {
    list += std::to_string(i) + ",";
  }
  list += "]";
  // The list is made once: the cost limit, not the memory limit, ends it.
  const auto program =
      compile("[" + list + "].all(l, l.all(a, l.all(b, l.all(c, a + b + c >= 0))))");
  ASSERT_TRUE(program);
  const Evaluation evaluation = evaluate(*program, Activation{});
  EXPECT_EQ(evaluation.outcome, Outcome::kUnknown);
  EXPECT_EQ(evaluation.message, "evaluation exceeds the cost limit of 1000000");
  EXPECT_EQ(evaluation.cost, kPerCallCostLimit + 1);
}

}  // namespace
}  // namespace topoguard::cel

namespace topoguard::cel {
namespace {

TEST(ProgramCache, GivesTheProgramCompiledBeforeFromTheSameText) {
  ProgramCache cache;
  const Result<Program> first = cache.compile(R"(device.driver.matches("^gpu\\."))");
  const Result<Program> again = cache.compile(R"(device.driver.matches("^gpu\\."))");
  const Result<Program> other = cache.compile(R"(device.driver == "nic")");
  ASSERT_TRUE(first && again && other);
  EXPECT_EQ(&first->root(), &again->root());
  EXPECT_NE(&first->root(), &other->root());
  EXPECT_EQ(cache.size(), 2U);
  Activation gpu;
  gpu.driver = "gpu.example.com";
  EXPECT_EQ(evaluate(*again, gpu).outcome, Outcome::kTrue);
  EXPECT_EQ(evaluate(*again, gpu).cost, evaluate(*first, gpu).cost);
}

TEST(ProgramCache, KeepsNeitherErrorsNorLongTextsAndStartsOverWhenFull) {
  ProgramCache cache;
  EXPECT_FALSE(cache.compile("device.driver =="));
  EXPECT_TRUE(cache.compile("\"" + std::string(ProgramCache::kMaxTextBytes, 'a') + "\" != ''"));
  EXPECT_EQ(cache.size(), 0U);
  for (std::size_t i = 0; i <= ProgramCache::kMaxEntries; ++i) {
    ASSERT_TRUE(cache.compile(std::to_string(i) + " == 0"));
  }
  EXPECT_EQ(cache.size(), 1U);
}

TEST(Compile, LiteralPatternsCompiledWithTheProgramAnswerAsComputedOnes) {
  Activation gpu;
  gpu.driver = "gpu.example.com";
  const Result<Program> literal = compile(R"(device.driver.matches("^gpu\\.[a-z]+\\.com$"))");
  const Result<Program> computed =
      compile(R"(device.driver.matches("^gpu\\." + "[a-z]+\\.com$"))");
  ASSERT_TRUE(literal && computed);
  EXPECT_EQ(evaluate(*literal, gpu).outcome, Outcome::kTrue);
  EXPECT_EQ(evaluate(*computed, gpu).outcome, Outcome::kTrue);
}

}  // namespace
}  // namespace topoguard::cel
