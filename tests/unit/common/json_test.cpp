#include "topoguard/common/json.h"

#include <vector>

#include <gtest/gtest.h>

#include "note_name.h"

namespace topoguard {
namespace {

struct PointerCase {
  std::string_view note;
  std::string_view pointer;
  bool found;
};

class FindAtTest : public ::testing::TestWithParam<PointerCase> {};

const Json kDocument = Json::parse(R"({"a": {"b/c": [10, {"d~e": true}]}, "n": null})");

// find_at resolves escaped tokens and array indexes, and never throws on bad pointers.
TEST_P(FindAtTest, ResolvesOrReturnsNull) {
  const PointerCase& c = GetParam();
  EXPECT_EQ(find_at(kDocument, c.pointer) != nullptr, c.found) << c.pointer;
}

INSTANTIATE_TEST_SUITE_P(
    Pointers, FindAtTest,
    ::testing::Values(PointerCase{"root", "", true}, PointerCase{"member", "/a", true},
                      PointerCase{"escaped_slash", "/a/b~1c/0", true},
                      PointerCase{"escaped_tilde", "/a/b~1c/1/d~0e", true},
                      PointerCase{"index_out_of_range", "/a/b~1c/2", false},
                      PointerCase{"non_numeric_index", "/a/b~1c/x", false},
                      PointerCase{"negative_index", "/a/b~1c/-1", false},
                      PointerCase{"through_scalar", "/a/b~1c/0/x", false},
                      PointerCase{"missing", "/zzz", false},
                      PointerCase{"null_value", "/n", true},
                      PointerCase{"no_leading_slash", "a", false}),
    topoguard::testing::NoteName());

// Tokens with "/" and "~" are escaped so the API server resolves them.
TEST(AppendPointerTest, EscapesTokens) {
  EXPECT_EQ(append_pointer("/metadata/annotations", "k8s.v1.cni.cncf.io/networks"),
            "/metadata/annotations/k8s.v1.cni.cncf.io~1networks");
  EXPECT_EQ(append_pointer("", "a~b"), "/a~0b");
  EXPECT_EQ(append_pointer("/list", std::size_t{3}), "/list/3");
}

// release_tree empties trees of every shape, including one nested as deep as a review may be
// (128 levels), and leaves null behind (ASan checks that nothing leaks or is freed twice).
TEST(ReleaseTreeTest, EmptiesTreesOfEveryShape) {
  std::vector<Json> trees = {
      Json::parse(R"({"a": {"b": [1, "two", {"c": null}, [], {}]}, "d": "a string longer than SSO"})"),
      Json::parse("[[[[]]], {}, 3.5, true]"),
      Json::parse(R"("scalar")"),
      Json(),
  };
  Json deep = Json::array();
  for (int level = 0; level < 127; ++level) {
    Json outer = Json::object();
    outer["next"] = std::move(deep);
    deep = std::move(outer);
  }
  trees.push_back(std::move(deep));
  for (Json& tree : trees) {
    release_tree(tree);
    EXPECT_TRUE(tree.is_null());
  }
}

}  // namespace
}  // namespace topoguard
