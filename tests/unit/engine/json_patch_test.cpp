#include "topoguard/engine/json_patch.h"

#include <gtest/gtest.h>

#include "note_name.h"
#include "typed_patch.h"

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
  auto result = apply_patch(Json::parse(c.document), topoguard::testing::typed_patch(Json::parse(c.patch)));
  if (c.expected.empty()) {
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().code, ErrorCode::kInvalidValue);
    return;
  }
  ASSERT_TRUE(result) << result.error().to_string();
  EXPECT_EQ(*result, Json::parse(c.expected));
}

// In place, the same patch gives the same document, or fails the same way.
TEST_P(ApplyPatchTest, AppliesInPlaceLikeOnACopy) {
  const PatchCase& c = GetParam();
  Json document = Json::parse(c.document);
  Status applied = apply_patch_in_place(document, topoguard::testing::typed_patch(Json::parse(c.patch)));
  if (c.expected.empty()) {
    ASSERT_FALSE(applied);
    EXPECT_EQ(applied.error().code, ErrorCode::kInvalidValue);
    return;
  }
  ASSERT_TRUE(applied) << applied.error().to_string();
  EXPECT_EQ(document, Json::parse(c.expected));
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
        PatchCase{"empty_patch", R"({"a":1})", "[]", R"({"a":1})"},
        // Members added beside large siblings keep document order and leave the siblings whole.
        PatchCase{"several_adds_to_one_object",
                  R"({"d":{"requests":[{"name":"gpu"},{"name":"nic"}],"x":{"y":[1,2]}}})",
                  R"([{"op":"add","path":"/d/constraints","value":[]},
                      {"op":"add","path":"/d/constraints/-","value":{"requests":["gpu","nic"]}},
                      {"op":"add","path":"/d/z","value":"last"},
                      {"op":"add","path":"/d/x/y/0","value":0}])",
                  R"({"d":{"requests":[{"name":"gpu"},{"name":"nic"}],"x":{"y":[0,1,2]},
                      "constraints":[{"requests":["gpu","nic"]}],"z":"last"}})"},
        PatchCase{"replacing_an_existing_member", R"({"d":{"a":1,"b":2}})",
                  R"([{"op":"add","path":"/d/a","value":3}])", R"({"d":{"a":3,"b":2}})"}),
    topoguard::testing::NoteName());

}  // namespace
}  // namespace topoguard::engine
