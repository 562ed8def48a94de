#include "topoguard/common/json_document.h"

#include <string>

#include <gtest/gtest.h>

namespace topoguard {
namespace {

// The parts of a document answer their type and value without building Json.
TEST(JsonDocumentTest, PartsReadTypesAndScalars) {
  JsonDocumentParser parser;
  const Result<JsonPart> root = parser.parse(
      R"({"s":"text","b":false,"n":null,"i":-3,"u":7,"d":1.5,"a":[1],"o":{}})", 8);
  ASSERT_TRUE(root.has_value()) << root.error().to_string();
  EXPECT_TRUE(root->is_object());
  EXPECT_STREQ(root->type_name(), "object");
  const auto [s, b, n, i, u, d, a, o, absent] =
      root->members<9>({"s", "b", "n", "i", "u", "d", "a", "o", "absent"});
  ASSERT_TRUE(s && b && n && i && u && d && a && o);
  EXPECT_FALSE(absent.has_value());
  EXPECT_EQ(s->string(), "text");
  EXPECT_EQ(b->boolean(), false);
  EXPECT_TRUE(n->is_null());
  EXPECT_FALSE(s->boolean().has_value());
  EXPECT_FALSE(b->string().has_value());
  EXPECT_FALSE(n->is_object());
  EXPECT_STREQ(s->type_name(), "string");
  EXPECT_STREQ(b->type_name(), "boolean");
  EXPECT_STREQ(n->type_name(), "null");
  EXPECT_STREQ(i->type_name(), "integer");
  EXPECT_STREQ(u->type_name(), "integer");
  EXPECT_STREQ(d->type_name(), "number");
  EXPECT_STREQ(a->type_name(), "array");
  EXPECT_TRUE(o->is_object());
}

// A repeated key answers with its last value, as Json::parse keeps it; a value that is not an
// object has no members.
TEST(JsonDocumentTest, MembersTakeTheLastOccurrence) {
  JsonDocumentParser parser;
  const Result<JsonPart> root = parser.parse(R"({"k":1,"other":2,"k":"last"})", 8);
  ASSERT_TRUE(root.has_value());
  const auto [k] = root->members<1>({"k"});
  ASSERT_TRUE(k.has_value());
  EXPECT_EQ(k->string(), "last");
  const Result<JsonPart> array = parser.parse(R"([{"k":1}])", 8);
  ASSERT_TRUE(array.has_value());
  EXPECT_FALSE(array->members<1>({"k"})[0].has_value());
}

// to_json builds what Json::parse builds, for the whole document and for a member.
TEST(JsonDocumentTest, ToJsonIsJsonParse) {
  const std::string text =
      "\xEF\xBB\xBF" R"({"z":{"b":[1,-2,2.5,"x",true,null],"a":{},"b":0},"y":18446744073709551615})";
  JsonDocumentParser parser;
  const Result<JsonPart> root = parser.parse(text, 8);
  ASSERT_TRUE(root.has_value()) << root.error().to_string();
  const Json expected = Json::parse(text);
  EXPECT_EQ(root->to_json().dump(), expected.dump());
  EXPECT_EQ(root->members<1>({"z"})[0]->to_json(), expected.at("z"));
}

// Errors name the text as the caller calls it; the parser reads the next text after an error and
// after its buffers were released.
TEST(JsonDocumentTest, ErrorsAndReuse) {
  JsonDocumentParser parser;
  const Result<JsonPart> deep = parser.parse("[[[1]]]", 2, "body");
  ASSERT_FALSE(deep.has_value());
  EXPECT_EQ(deep.error().code, ErrorCode::kTooDeep);
  EXPECT_EQ(deep.error().message, "body nests deeper than 2 levels");
  const Result<JsonPart> invalid = parser.parse(R"({"a":})", 8, "body");
  ASSERT_FALSE(invalid.has_value());
  EXPECT_EQ(invalid.error().code, ErrorCode::kInvalidJson);
  EXPECT_TRUE(invalid.error().message.starts_with("body is not valid JSON: "));

  const std::string large = "[" + std::string(100000, ' ') + "1]";
  ASSERT_TRUE(parser.parse(large, 8).has_value());
  parser.release_beyond(1024);
  const Result<JsonPart> after = parser.parse(R"({"a":"b"})", 8);
  ASSERT_TRUE(after.has_value());
  EXPECT_EQ(after->members<1>({"a"})[0]->string(), "b");
}

}  // namespace
}  // namespace topoguard
