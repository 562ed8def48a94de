#include "topoguard/k8s/object_name.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "note_name.h"

namespace topoguard::k8s {
namespace {

struct NameCase {
  std::string_view note;
  Json object;
  std::vector<std::string> refused;  // the pointers refused, in order
};

Json object(std::string_view api_version, std::string_view kind, Json metadata) {
  return Json{{"apiVersion", api_version}, {"kind", kind}, {"metadata", std::move(metadata)}};
}

const std::string kLong64(64, 'a');
const std::string kLong254(254, 'a');

class InvalidMetadataNamesTest : public ::testing::TestWithParam<NameCase> {};

// The fields refused are those the API server refuses for the kind, none other.
TEST_P(InvalidMetadataNamesTest, RefusesWhatTheApiServerRefuses) {
  std::vector<std::string> refused;
  for (const NameProblem& problem : invalid_metadata_names(GetParam().object)) {
    refused.push_back(problem.pointer);
  }
  EXPECT_EQ(refused, GetParam().refused);
}

INSTANTIATE_TEST_SUITE_P(
    Names, InvalidMetadataNamesTest,
    ::testing::Values(
        NameCase{"claim_with_dots_is_a_subdomain",
                 object("resource.k8s.io/v1", "ResourceClaim",
                        {{"name", "gpu.nic-0"}, {"namespace", "ml"}}),
                 {}},
        NameCase{"template_name_with_line_feed",
                 object("resource.k8s.io/v1", "ResourceClaimTemplate",
                        {{"name", "x\nsummary: 0 resources, 0 deny"}, {"namespace", "ml"}}),
                 {"/metadata/name"}},
        NameCase{"escape_sequence_in_name",
                 object("apps/v1", "Deployment", {{"name", "a\x1b[2K\r"}}), {"/metadata/name"}},
        NameCase{"upper_case_name", object("v1", "Pod", {{"name", "Trainer"}}),
                 {"/metadata/name"}},
        NameCase{"name_ending_in_dash", object("batch/v1", "Job", {{"name", "job-"}}),
                 {"/metadata/name"}},
        // Length and format are two refusals, as apimachinery lists them.
        NameCase{"subdomain_too_long_and_bad",
                 object("v1", "Node", {{"name", kLong254 + "_"}}),
                 {"/metadata/name", "/metadata/name"}},
        NameCase{"subdomain_of_253", object("v1", "Node", {{"name", std::string(253, 'a')}}), {}},
        NameCase{"namespace_is_a_label_no_dots",
                 object("v1", "Pod", {{"name", "p"}, {"namespace", "team.ml"}}),
                 {"/metadata/namespace"}},
        NameCase{"namespace_of_64", object("v1", "Pod", {{"name", "p"}, {"namespace", kLong64}}),
                 {"/metadata/namespace"}},
        NameCase{"namespace_object_name_is_a_label",
                 object("v1", "Namespace", {{"name", "team.ml"}}), {"/metadata/name"}},
        // A cluster-scoped object's namespace is dropped by the API server, not refused.
        NameCase{"cluster_scoped_namespace_ignored",
                 object("resource.k8s.io/v1", "DeviceClass",
                        {{"name", "gpu.example.com"}, {"namespace", "Bad_NS"}}),
                 {}},
        NameCase{"generate_name_may_end_in_dash",
                 object("resource.k8s.io/v1", "ResourceClaim", {{"generateName", "gpu-claim-"}}),
                 {}},
        NameCase{"generate_name_with_control_character",
                 object("resource.k8s.io/v1", "ResourceClaim", {{"generateName", "g\x07pu-"}}),
                 {"/metadata/generateName"}},
        // apimachinery masks a trailing '-' by dropping the character before it too.
        NameCase{"generate_name_mask_drops_the_character_before_the_dash",
                 object("resource.k8s.io/v1", "ResourceClaim", {{"generateName", "gpu_-"}}), {}},
        NameCase{"custom_workload_is_a_subdomain",
                 object("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet", {{"name", "LWS"}}),
                 {"/metadata/name"}},
        // RBAC names are path segments ("system:controller:x"): not a DNS rule, not checked.
        NameCase{"unknown_kind_unchecked",
                 object("rbac.authorization.k8s.io/v1", "ClusterRole",
                        {{"name", "system:controller:x"}}),
                 {}},
        NameCase{"absent_and_empty_fields_unchecked",
                 object("v1", "Pod", {{"name", ""}}), {}},
        NameCase{"name_not_a_string_unchecked", object("v1", "Pod", {{"name", 7}}), {}}),
    testing::NoteName());

// The refusal quotes the value and words it as the API server does.
TEST(MetadataNameRefusalTest, WordsTheRefusalAsTheApiServer) {
  const std::vector<NameProblem> problems =
      invalid_metadata_names(object("v1", "Pod", {{"name", "p"}, {"namespace", "A"}}));
  ASSERT_EQ(problems.size(), 1U);
  EXPECT_EQ(problems[0].message,
            "Invalid value: \"A\": a lowercase RFC 1123 label must consist of lower case "
            "alphanumeric characters or '-', and must start and end with an alphanumeric "
            "character (e.g. 'my-name',  or '123-abc', regex used for validation is "
            "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')");
}

}  // namespace
}  // namespace topoguard::k8s
