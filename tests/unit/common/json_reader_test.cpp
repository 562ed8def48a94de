#include "topoguard/common/json_reader.h"

#include <string>

#include <gtest/gtest.h>

#include "note_name.h"

namespace topoguard {
namespace {

struct ReadCase {
  std::string_view note;
  std::string text;
};

class SameAsNlohmannTest : public ::testing::TestWithParam<ReadCase> {};

// read_json accepts what Json::parse accepts and builds the same tree (values, types, key order);
// the webhook's answers must not depend on which parser read the body. The one difference, kept
// on purpose, is in ReaderDifferenceTest below.
TEST_P(SameAsNlohmannTest, AcceptsAndBuildsTheSame) {
  const ReadCase& c = GetParam();
  const Json expected = Json::parse(c.text, nullptr, /*allow_exceptions=*/false);
  const Result<Json> read = read_json(c.text, 512);
  ASSERT_EQ(read.has_value(), !expected.is_discarded())
      << (read.has_value() ? read->dump() : read.error().to_string());
  if (read.has_value()) {
    EXPECT_EQ(*read, expected);
    EXPECT_EQ(read->dump(), expected.dump());
    if (expected.is_number()) {
      EXPECT_EQ(read->type(), expected.type());
    }
  } else {
    EXPECT_EQ(read.error().code, ErrorCode::kInvalidJson);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Texts, SameAsNlohmannTest,
    ::testing::Values(
        ReadCase{"EmptyObject", "{}"}, ReadCase{"EmptyArray", " [ ] "},
        ReadCase{"Nested", R"({"a":{"b":[1,{"c":[]},{}],"d":null},"e":[[[]]]})"},
        ReadCase{"KeyOrderKept", R"({"z":1,"a":2,"m":3})"},
        ReadCase{"DuplicateKeyLastWins", R"({"a":1,"b":2,"a":3})"},
        ReadCase{"DuplicateKeysInLargeObject",
                 R"({"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,)"
                 R"("k1":"one","k9":{"nine":9},"k1":"uno","k10":10,"k0":[0]})"},
        ReadCase{"DuplicateKeyAtPairwiseBoundary",
                 R"({"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k0":"x"})"},
        ReadCase{"DuplicateKeyNested", R"({"a":{"x":1,"x":2},"a":{"y":3,"y":4}})"},
        ReadCase{"Literals", "[true,false,null]"},
        ReadCase{"Whitespace", " \t\r\n{ \"a\" :\n[ 1 ,\t2 ] } \n"},
        ReadCase{"Integers", "[0,-0,1,-1,9223372036854775807,-9223372036854775808]"},
        ReadCase{"UnsignedAboveInt64", "[9223372036854775808,18446744073709551615]"},
        ReadCase{"Floats", "[0.5,-1.25e3,1E-2,2e+2,1.0,123456789.123456789]"},
        ReadCase{"FloatUnderflow", "[1e-400]"}, ReadCase{"FloatOverflow", "[1e400]"},
        ReadCase{"NegativeFloatOverflow", "[-1e400]"},
        ReadCase{"Escapes", R"(["\"\\\/\b\f\n\r\t", "\u0041\u00e9\u20ac"])"},
        ReadCase{"SurrogatePair", R"(["\ud83d\ude00"])"},
        ReadCase{"RawUtf8", "[\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"]"},
        ReadCase{"ByteOrderMark", "\xef\xbb\xbf{\"a\":1}"},
        ReadCase{"ScalarRoot", "\"x\""}, ReadCase{"NumberRoot", " 42 "},
        ReadCase{"Empty", ""}, ReadCase{"OnlyWhitespace", "  "},
        ReadCase{"TrailingGarbage", "{} x"}, ReadCase{"TwoValues", "1 2"},
        ReadCase{"TrailingComma", "[1,]"}, ReadCase{"TrailingCommaObject", R"({"a":1,})"},
        ReadCase{"MissingColon", R"({"a" 1})"}, ReadCase{"UnquotedKey", "{a:1}"},
        ReadCase{"SingleQuotes", "['a']"}, ReadCase{"Unclosed", R"({"a":[1,2)"},
        ReadCase{"UnclosedString", R"(["abc)"}, ReadCase{"MismatchedClose", "[1}"},
        ReadCase{"LeadingZero", "[01]"}, ReadCase{"BareMinus", "[-]"},
        ReadCase{"DotWithoutDigits", "[1.]"}, ReadCase{"LeadingDot", "[.5]"},
        ReadCase{"ExponentWithoutDigits", "[1e]"}, ReadCase{"PlusSign", "[+1]"},
        ReadCase{"BadLiteral", "[tru]"}, ReadCase{"CapitalLiteral", "[True]"},
        ReadCase{"RawControlCharacter", "[\"a\tb\"]"}, ReadCase{"BadEscape", R"(["\x"])"},
        ReadCase{"ShortUnicodeEscape", R"(["\u12"])"}, ReadCase{"BadHex", R"(["\u12g4"])"},
        ReadCase{"LoneLowSurrogate", R"(["\udc00"])"},
        ReadCase{"HighSurrogateAlone", R"(["\ud800"])"},
        ReadCase{"HighSurrogateThenLetter", R"(["\ud800x"])"},
        ReadCase{"HighSurrogateThenNonLow", R"(["\ud800\u0041"])"},
        ReadCase{"InvalidUtf8Lead", "[\"\xff\"]"}, ReadCase{"Overlong", "[\"\xc0\xaf\"]"},
        ReadCase{"EncodedSurrogate", "[\"\xed\xa0\x80\"]"},
        ReadCase{"AboveU10FFFF", "[\"\xf4\x90\x80\x80\"]"},
        ReadCase{"TruncatedUtf8", "[\"\xe2\x82\"]"}, ReadCase{"PartialBom", "\xef\xbb{}"},
        ReadCase{"NulInString", std::string("[\"a\0b\"]", 7)},
        ReadCase{"Comment", "[1 /* c */]"}),
    topoguard::testing::NoteName());

// Strings are scanned eight bytes at a time: a byte that ends a plain run (escape, quote, control
// character, non-ASCII) or a neighbour of one (space, '!', '#', '[', ']', DEL) is read as nlohmann
// reads it at every offset of a word.
TEST(JsonReaderTest, StringRunsEndAtAnyOffset) {
  for (const std::string_view special :
       {"\\n", "\\\"", "\\\\", "\t", "\x1f", " ", "!", "#", "[", "]", "\x7f", "\xc3\xa9", "\xff"}) {
    for (std::size_t offset = 0; offset < 20; ++offset) {
      const std::string text = "[\"" + std::string(offset, 'a') + std::string(special) +
                               std::string(20 - offset, 'b') + "\"]";
      const Json expected = Json::parse(text, nullptr, /*allow_exceptions=*/false);
      const Result<Json> read = read_json(text, 8);
      ASSERT_EQ(read.has_value(), !expected.is_discarded()) << text;
      if (read.has_value()) {
        EXPECT_EQ(*read, expected) << text;
      }
    }
  }
}

// Nesting beyond the limit is kTooDeep, wherever it is.
TEST(JsonReaderTest, DepthLimitCountsEveryLevel) {
  const std::string deep = std::string(129, '[') + std::string(129, ']');
  EXPECT_EQ(read_json(deep, 128).error().code, ErrorCode::kTooDeep);
  EXPECT_TRUE(read_json(deep, 129).has_value());
  const std::string in_member =
      R"({"request":{"userInfo":)" + std::string(200, '[') + std::string(200, ']') + "}}";
  EXPECT_EQ(read_json(in_member, 128).error().code, ErrorCode::kTooDeep);
}

// Integers outside -2^63..2^64-1 are refused (nlohmann would read them as doubles): simdjson does
// not read them, and the API server never sends them (it encodes numbers from int64 or float64).
TEST(ReaderDifferenceTest, IntegersBeyond64BitsAreInvalid) {
  for (const std::string_view text : {"[18446744073709551616]", "[-9223372036854775809]"}) {
    ASSERT_FALSE(Json::parse(text, nullptr, false).is_discarded());
    EXPECT_EQ(read_json(text, 8).error().code, ErrorCode::kInvalidJson) << text;
  }
}

// Many distinct keys and many repeats of one key are both read in n log n, and folded as
// nlohmann folds them.
TEST(JsonReaderTest, ManyKeysAndManyRepeats) {
  std::string text = "{";
  for (int i = 0; i < 20000; ++i) {
    text += "\"k" + std::to_string(i % 5000) + "\":" + std::to_string(i) + ",";
  }
  text += R"("last":true})";
  const Result<Json> read = read_json(text, 8);
  ASSERT_TRUE(read.has_value()) << read.error().to_string();
  EXPECT_EQ(*read, Json::parse(text));
  EXPECT_EQ(read->size(), 5001u);
  EXPECT_EQ(read->at("k7"), 15007);
}

}  // namespace
}  // namespace topoguard
