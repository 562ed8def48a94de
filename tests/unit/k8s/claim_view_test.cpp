#include "topoguard/k8s/claim_view.h"

#include <gtest/gtest.h>

#include "note_name.h"

#include "topoguard/common/yaml_document.h"

namespace topoguard::k8s {
namespace {

Json parse(const std::string& yaml) {
  YamlStream stream = parse_yaml_stream(yaml, "inline.yaml");
  EXPECT_TRUE(stream.errors.empty());
  return stream.documents.at(0).value;
}

struct VersionCase {
  std::string_view note;
  std::string yaml;
  std::string expected_choice_pointer;
};

class ClaimSpecVersionsTest : public ::testing::TestWithParam<VersionCase> {};

// The same request reads the same in v1beta1 (flat), v1beta2 and v1 (`exactly`), with the
// pointer of the object that really holds deviceClassName.
TEST_P(ClaimSpecVersionsTest, NormalisesRequest) {
  const VersionCase& c = GetParam();
  auto spec = read_claim_spec(parse(c.yaml));
  ASSERT_TRUE(spec) << spec.error().to_string();
  ASSERT_EQ(spec->requests.size(), 1u);
  const DeviceRequest& request = spec->requests[0];
  EXPECT_EQ(request.name, "gpu");
  EXPECT_EQ(request.pointer, "/spec/spec/devices/requests/0");
  ASSERT_EQ(request.choices.size(), 1u);
  EXPECT_EQ(request.choices[0].device_class_name, "gpu.nvidia.com");
  EXPECT_EQ(request.choices[0].count, 2);
  EXPECT_EQ(request.choices[0].selectors, std::vector<std::string>{"device.driver == 'x'"});
  EXPECT_EQ(request.choices[0].pointer, c.expected_choice_pointer);
  EXPECT_TRUE(request.choices[0].subrequest.empty());
  EXPECT_FALSE(spec->has_constraints_array);
  EXPECT_EQ(spec->constraints_pointer, "/spec/spec/devices/constraints");
}

const std::string kExactlyBody = R"(
kind: ResourceClaimTemplate
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.nvidia.com
          count: 2
          selectors: [{cel: {expression: "device.driver == 'x'"}}]
)";

INSTANTIATE_TEST_SUITE_P(
    Versions, ClaimSpecVersionsTest,
    ::testing::Values(
        VersionCase{"v1beta1_flat", R"(
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaimTemplate
spec:
  spec:
    devices:
      requests:
      - name: gpu
        deviceClassName: gpu.nvidia.com
        count: 2
        selectors: [{cel: {expression: "device.driver == 'x'"}}]
)",
                    "/spec/spec/devices/requests/0"},
        VersionCase{"v1beta2_exactly", "apiVersion: resource.k8s.io/v1beta2" + kExactlyBody,
                    "/spec/spec/devices/requests/0/exactly"},
        VersionCase{"v1_exactly", "apiVersion: resource.k8s.io/v1" + kExactlyBody,
                    "/spec/spec/devices/requests/0/exactly"}),
    topoguard::testing::NoteName());

// firstAvailable subrequests become choices with their own names and pointers; a claim (not a
// template) keeps its spec at /spec.
TEST(ClaimSpecTest, ReadsFirstAvailableAndConstraints) {
  auto spec = read_claim_spec(parse(R"(
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
spec:
  devices:
    requests:
    - name: nic
      firstAvailable:
      - name: fast
        deviceClassName: dranet
        allocationMode: All
      - name: slow
        deviceClassName: sriov
    constraints:
    - requests: [nic/fast]
      matchAttribute: resource.kubernetes.io/pcieRoot
    - distinctAttribute: x.io/y
)"));
  ASSERT_TRUE(spec) << spec.error().to_string();
  ASSERT_EQ(spec->requests.size(), 1u);
  const DeviceRequest& nic = spec->requests[0];
  EXPECT_TRUE(nic.first_available);
  ASSERT_EQ(nic.choices.size(), 2u);
  EXPECT_EQ(nic.choices[0].subrequest, "fast");
  EXPECT_EQ(nic.choices[0].allocation_mode, AllocationMode::kAll);
  EXPECT_EQ(nic.choices[1].pointer, "/spec/devices/requests/0/firstAvailable/1");
  EXPECT_TRUE(spec->has_constraints_array);
  ASSERT_EQ(spec->constraints.size(), 2u);
  EXPECT_EQ(spec->constraints[0].requests, std::vector<std::string>{"nic/fast"});
  EXPECT_EQ(spec->constraints[0].match_attribute, "resource.kubernetes.io/pcieRoot");
  EXPECT_EQ(spec->constraints[1].distinct_attribute, "x.io/y");
  EXPECT_EQ(spec->constraints[1].pointer, "/spec/devices/constraints/1");
}

// An allocationMode this version does not know is read as ExactCount, not rejected.
TEST(ClaimSpecTest, UnknownAllocationModeCountsDevices) {
  auto spec = read_claim_spec(parse(
      "kind: ResourceClaim\nspec: {devices: {requests: [{name: a, deviceClassName: c, "
      "allocationMode: Future, count: 3}]}}"));
  ASSERT_TRUE(spec) << spec.error().to_string();
  EXPECT_EQ(spec->requests[0].choices[0].allocation_mode, AllocationMode::kExactCount);
  EXPECT_EQ(spec->requests[0].choices[0].count, 3);
}

// derivedAttributes (KEP-6080) read the same from v1 `exactly`, a v1beta1 flat request and a
// firstAvailable subrequest, each compiled and with the pointer of its entry.
TEST(ClaimSpecTest, ReadsDerivedAttributesInEveryShape) {
  auto spec = read_claim_spec(parse(R"(
kind: ResourceClaim
spec:
  devices:
    requests:
    - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com, derivedAttributes: [
        {name: root, expression: 'device.attributes["resource.kubernetes.io"].pcieRoot'}]}}
    - name: flat
      deviceClassName: dranet
      derivedAttributes:
      - {name: derived/numa, expression: 'device.attributes["dra.net"]["numaNode"]'}
      - {name: example.com/x, expression: '"x"'}
    - name: nic
      firstAvailable:
      - name: vf
        deviceClassName: dranet
        derivedAttributes: [{name: root, expression: 'device.attributes["dra.net"].numaNode'}]
)"));
  ASSERT_TRUE(spec) << spec.error().to_string();
  const auto& gpu = spec->requests[0].choices[0].derived_attributes;
  ASSERT_EQ(gpu.size(), 1u);
  EXPECT_EQ(gpu[0].name, "root");
  EXPECT_EQ(gpu[0].pointer, "/spec/devices/requests/0/exactly/derivedAttributes/0");
  EXPECT_EQ(cel::attribute_read(gpu[0].program), "resource.kubernetes.io/pcieRoot");
  const auto& flat = spec->requests[1].choices[0].derived_attributes;
  ASSERT_EQ(flat.size(), 2u);
  EXPECT_EQ(flat[0].pointer, "/spec/devices/requests/1/derivedAttributes/0");
  EXPECT_EQ(cel::attribute_read(flat[0].program), "dra.net/numaNode");
  EXPECT_EQ(flat[1].name, "example.com/x");
  EXPECT_EQ(cel::attribute_read(flat[1].program), "");
  const auto& sub = spec->requests[2].choices[0].derived_attributes;
  ASSERT_EQ(sub.size(), 1u);
  EXPECT_EQ(sub[0].pointer, "/spec/devices/requests/2/firstAvailable/0/derivedAttributes/0");
}

std::string derived_list(std::size_t count, const std::string& expression) {
  std::string list;
  for (std::size_t i = 0; i < count; ++i) {
    list += std::string(i == 0 ? "" : ", ") + "{name: d/a" + std::to_string(i) + ", expression: '" +
            expression + "'}";
  }
  return "kind: ResourceClaim\nspec: {devices: {requests: [{name: a, exactly: "
         "{deviceClassName: c, derivedAttributes: [" +
         list + "]}}]}}";
}

// Capacity requests are quantities, written as strings or, unquoted in YAML, as numbers (which
// the API server parses the same way).
TEST(ClaimSpecTest, CapacityRequestsTakeStringsAndNumbers) {
  auto spec = read_claim_spec(parse(
      "kind: ResourceClaim\nspec: {devices: {requests: [{name: a, exactly: {deviceClassName: c, "
      "capacity: {requests: {bandwidth: 10Gi, queues: 8, share: 1.5}}}}]}}"));
  ASSERT_TRUE(spec) << spec.error().to_string();
  const auto& requests = spec->requests[0].choices[0].capacity_requests;
  EXPECT_EQ(requests.at("bandwidth"), "10Gi");
  EXPECT_EQ(requests.at("queues"), "8");
  EXPECT_EQ(requests.at("share"), "1.5");
}

struct BadClaimCase {
  std::string_view note;
  std::string yaml;
  ErrorCode code;
  std::string field;
};

class ClaimSpecErrorsTest : public ::testing::TestWithParam<BadClaimCase> {};

// Wrong types are errors that name the field, never a crash or a silent skip.
TEST_P(ClaimSpecErrorsTest, NamesTheField) {
  const BadClaimCase& c = GetParam();
  auto spec = read_claim_spec(parse(c.yaml));
  ASSERT_FALSE(spec);
  EXPECT_EQ(spec.error().code, c.code);
  EXPECT_EQ(spec.error().location.field, c.field);
}

INSTANTIATE_TEST_SUITE_P(
    Errors, ClaimSpecErrorsTest,
    ::testing::Values(
        BadClaimCase{"requests_not_list",
                     "kind: ResourceClaim\nspec: {devices: {requests: {name: a}}}",
                     ErrorCode::kWrongType, "/spec/devices/requests"},
        BadClaimCase{"count_is_string",
                     "kind: ResourceClaim\nspec: {devices: {requests: [{name: a, exactly: "
                     "{deviceClassName: c, count: '2'}}]}}",
                     ErrorCode::kWrongType, "/spec/devices/requests/0/exactly/count"},
        BadClaimCase{"request_without_name",
                     "kind: ResourceClaim\nspec: {devices: {requests: [{exactly: {deviceClassName: "
                     "c}}]}}",
                     ErrorCode::kMissingField, "/spec/devices/requests/0/name"},
        BadClaimCase{"constraint_requests_not_strings",
                     "kind: ResourceClaim\nspec: {devices: {requests: [], constraints: [{requests: "
                     "[1]}]}}",
                     ErrorCode::kWrongType, "/spec/devices/constraints/0/requests/0"},
        BadClaimCase{"spec_is_list", "kind: ResourceClaimTemplate\nspec: []", ErrorCode::kWrongType,
                     "/spec"},
        // A capacity request the allocator would compute with must be a quantity.
        BadClaimCase{"capacity_request_not_a_quantity",
                     "kind: ResourceClaim\nspec: {devices: {requests: [{name: a, exactly: "
                     "{deviceClassName: c, capacity: {requests: {bandwidth: abc}}}}]}}",
                     ErrorCode::kInvalidValue,
                     "/spec/devices/requests/0/exactly/capacity/requests/bandwidth"},
        BadClaimCase{"capacity_request_a_list",
                     "kind: ResourceClaim\nspec: {devices: {requests: [{name: a, exactly: "
                     "{deviceClassName: c, capacity: {requests: {bandwidth: [1]}}}}]}}",
                     ErrorCode::kWrongType,
                     "/spec/devices/requests/0/exactly/capacity/requests/bandwidth"},
        // Names are unique in the API (checked after mutating webhooks); the rules rely on it.
        BadClaimCase{"repeated_request_name",
                     "kind: ResourceClaim\nspec: {devices: {requests: [{name: a, exactly: "
                     "{deviceClassName: c}}, {name: b, exactly: {deviceClassName: c}}, {name: a, "
                     "exactly: {deviceClassName: c}}, {name: b, exactly: {deviceClassName: c}}]}}",
                     ErrorCode::kInvalidValue, "/spec/devices/requests/2/name"},
        BadClaimCase{"repeated_subrequest_name",
                     "kind: ResourceClaim\nspec: {devices: {requests: [{name: a, firstAvailable: "
                     "[{name: x, deviceClassName: c}, {name: x, deviceClassName: d}]}]}}",
                     ErrorCode::kInvalidValue, "/spec/devices/requests/0/firstAvailable/1/name"},
        // The API server's limits on derived attributes: 32 per request, 10 Ki an expression.
        BadClaimCase{"too_many_derived_attributes", derived_list(33, "1"), ErrorCode::kTooLarge,
                     "/spec/devices/requests/0/exactly/derivedAttributes"},
        BadClaimCase{"derived_expression_too_large",
                     derived_list(1, std::string(10 * 1024 + 1, '1')),
                ErrorCode::kTooLarge,
                "/spec/devices/requests/0/exactly/derivedAttributes/0/expression"},
        // The API server compiles the expression: one that does not parse is refused there, so
        // it is an input error here, never a rule's finding.
        BadClaimCase{"derived_expression_syntax_error", derived_list(1, "device.attributes["),
                     ErrorCode::kInvalidValue,
                     "/spec/devices/requests/0/exactly/derivedAttributes/0/expression"},
        BadClaimCase{"derived_attribute_without_expression",
                     "kind: ResourceClaim\nspec: {devices: {requests: [{name: a, "
                     "deviceClassName: c, derivedAttributes: [{name: root}]}]}}",
                     ErrorCode::kMissingField,
                     "/spec/devices/requests/0/derivedAttributes/0/expression"},
        BadClaimCase{"derived_attributes_not_list",
                     "kind: ResourceClaim\nspec: {devices: {requests: [{name: a, "
                     "deviceClassName: c, derivedAttributes: {name: root}}]}}",
                     ErrorCode::kWrongType, "/spec/devices/requests/0/derivedAttributes"}),
    topoguard::testing::NoteName());

}  // namespace
}  // namespace topoguard::k8s
