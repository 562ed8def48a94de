#include "topoguard/common/json_writer.h"

#include <string>

#include <gtest/gtest.h>

#include "note_name.h"

namespace topoguard {
namespace {

struct TreeCase {
  std::string_view note;
  std::string_view json;
};

class JsonWriterTreeTest : public ::testing::TestWithParam<TreeCase> {};

// A tree is written byte for byte as nlohmann's dump() writes it, compact and pretty-printed, so
// that responses, logs and reports read the same whichever wrote them before.
TEST_P(JsonWriterTreeTest, SameBytesAsDump) {
  const Json tree = Json::parse(GetParam().json);
  for (const int indent : {-1, 0, 2, 4}) {
    EXPECT_EQ(to_json_text(tree, indent), tree.dump(indent, ' ', false, Json::error_handler_t::replace))
        << "indent " << indent;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Trees, JsonWriterTreeTest,
    ::testing::Values(
        TreeCase{"EmptyObject", "{}"}, TreeCase{"EmptyArray", "[]"},
        TreeCase{"Scalars", R"([true,false,null,0,-1,18446744073709551615,-9223372036854775808,
                              1.5,-0.0,1e300,2.5e-8,1.0,""])"},
        TreeCase{"Nested", R"({"z":{"a":[],"b":{},"c":[{}, [[]], {"d":[1,{"e":null}]}]},"a":1})"},
        TreeCase{"Escapes", R"(["quote \" backslash \\ \/ \b \f \n \r \t \u0001 \u001f \u007f"])"},
        TreeCase{"NonAsciiKeysAndValues", R"({"\u00e9t\u00e9":"\u20ac\ud83d\ude00"})"},
        TreeCase{"ScalarRoot", R"("text")"}),
    topoguard::testing::NoteName());

// Bytes that are not UTF-8 (a Json built in-process, or a string from a client) are replaced as
// nlohmann replaces them, in keys and values.
TEST(JsonWriterTest, InvalidUtf8IsReplaced) {
  const Json tree = {{"bad\xff key", "x\xc3("}, {"truncated", "\xe2\x82"}, {"ok", "\xc3\xa9"}};
  EXPECT_EQ(to_json_text(tree), tree.dump(-1, ' ', false, Json::error_handler_t::replace));
  std::string out;
  append_json_string(out, "\xed\xa0\x80 surrogate");
  EXPECT_EQ(out, Json("\xed\xa0\x80 surrogate").dump(-1, ' ', false, Json::error_handler_t::replace));
}

// Every byte value, alone and between text, before and after non-ASCII (valid and not), is
// written as nlohmann writes it, and appended after what the string already held.
TEST(JsonWriterTest, EveryByteAsDumpWritesIt) {
  const std::string contexts[] = {"", "plain", "\xc3\xa9t\xc3\xa9", "\xff", "tail \xe2\x82"};
  for (int value = 0; value < 256; ++value) {
    const std::string byte(1, static_cast<char>(value));
    for (const std::string& before : contexts) {
      for (const std::string& after : contexts) {
        const std::string text = before + byte + after + byte;
        std::string out = "prefix";
        append_json_string(out, text);
        EXPECT_EQ(out, "prefix" + Json(text).dump(-1, ' ', false, Json::error_handler_t::replace))
            << "byte " << value;
      }
    }
  }
}

// The streaming calls write what the same tree would give, member values of every type included.
TEST(JsonWriterTest, StreamingEqualsTree) {
  for (const int indent : {-1, 2}) {
    std::string out;
    JsonWriter writer(out, indent);
    writer.begin_object()
        .member("text", "a\"b")
        .member("view", std::string_view("v"))
        .member("string", std::string("s"))
        .member("flag", true)
        .member("int", -3)
        .member("size", std::size_t{7})
        .member("ratio", 0.25)
        .member("tree", Json::parse(R"({"x":[1,{}]})"))
        .key("list")
        .begin_array()
        .string("one")
        .null()
        .begin_array()
        .end_array()
        .end_array()
        .key("empty")
        .begin_object()
        .end_object()
        .end_object();
    const Json expected = Json::parse(
        R"({"text":"a\"b","view":"v","string":"s","flag":true,"int":-3,"size":7,"ratio":0.25,
            "tree":{"x":[1,{}]},"list":["one",null,[]],"empty":{}})");
    EXPECT_EQ(out, expected.dump(indent)) << "indent " << indent;
  }
}

// Appending leaves what the string held before in place.
TEST(JsonWriterTest, AppendsToTheCallersString) {
  std::string out = "prefix ";
  JsonWriter(out).begin_array().number(std::int64_t{1}).number(std::uint64_t{2}).end_array();
  EXPECT_EQ(out, "prefix [1,2]");
}

}  // namespace
}  // namespace topoguard
