#include "topoguard/engine/json_patch.h"

#include <gtest/gtest.h>

#include "note_name.h"

namespace topoguard::engine {
namespace {

struct PatchCase {
  std::string_view note;
  std::string document;
  std::string patch;
  std::string expected;  // "" = the patch must fail
};

class ApplyPatchTest : public ::testing::TestWithParam<PatchCase> {};

// The API server's rules: `add` needs the parent, `-` appends, failures are errors.
TEST_P(ApplyPatchTest, AppliesLikeTheApiServer) {
  const PatchCase& c = GetParam();
  auto result = apply_patch(Json::parse(c.document), Json::parse(c.patch));
  if (c.expected.empty()) {
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().code, ErrorCode::kInvalidValue);
    return;
  }
  ASSERT_TRUE(result) << result.error().to_string();
  EXPECT_EQ(*result, Json::parse(c.expected));
}

INSTANTIATE_TEST_SUITE_P(
    Patches, ApplyPatchTest,
    ::testing::Values(
        PatchCase{"add_whole_array", R"({"d":{}})",
                  R"([{"op":"add","path":"/d/constraints","value":[1]}])",
                  R"({"d":{"constraints":[1]}})"},
        PatchCase{"append_with_dash", R"({"d":{"c":[1]}})",
                  R"([{"op":"add","path":"/d/c/-","value":2}])", R"({"d":{"c":[1,2]}})"},
        PatchCase{"append_to_missing_array_fails", R"({"d":{}})",
                  R"([{"op":"add","path":"/d/c/-","value":2}])", ""},
        PatchCase{"missing_parent_fails", R"({})",
                  R"([{"op":"add","path":"/d/c","value":2}])", ""},
        PatchCase{"not_an_array_fails", R"({})", R"({"op":"add","path":"/a","value":1})", ""},
        PatchCase{"empty_patch", R"({"a":1})", "[]", R"({"a":1})"}),
    topoguard::testing::NoteName());

}  // namespace
}  // namespace topoguard::engine
