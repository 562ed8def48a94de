#include "topoguard/admission/json_reader.h"

#include <string>

#include <gtest/gtest.h>

#include "note_name.h"

namespace topoguard::admission {
namespace {

struct ReadCase {
  std::string_view note;
  std::string text;
};

class SameAsNlohmannTest : public ::testing::TestWithParam<ReadCase> {};

// read_json accepts exactly what Json::parse accepts and builds the same tree (values, types,
// key order); the webhook's answers must not depend on which parser read the body.
TEST_P(SameAsNlohmannTest, AcceptsAndBuildsTheSame) {
  const ReadCase& c = GetParam();
  const Json expected = Json::parse(c.text, nullptr, /*allow_exceptions=*/false);
  const Result<Json> read = read_json(c.text, 512, JsonFilter::kNone);
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
        ReadCase{"Literals", "[true,false,null]"},
        ReadCase{"Whitespace", " \t\r\n{ \"a\" :\n[ 1 ,\t2 ] } \n"},
        ReadCase{"Integers", "[0,-0,1,-1,9223372036854775807,-9223372036854775808]"},
        ReadCase{"UnsignedAboveInt64", "[9223372036854775808,18446744073709551615]"},
        ReadCase{"IntegerTooBigForUint64", "[18446744073709551616,-9223372036854775809]"},
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
      const Result<Json> read = read_json(text, 8, JsonFilter::kNone);
      ASSERT_EQ(read.has_value(), !expected.is_discarded()) << text;
      if (read.has_value()) {
        EXPECT_EQ(*read, expected) << text;
      }
    }
  }
}

// Nesting beyond the limit is kTooDeep whether or not the part is kept.
TEST(JsonReaderTest, DepthLimitCountsEveryLevel) {
  const std::string deep = std::string(129, '[') + std::string(129, ']');
  EXPECT_EQ(read_json(deep, 128, JsonFilter::kNone).error().code, ErrorCode::kTooDeep);
  EXPECT_TRUE(read_json(deep, 129, JsonFilter::kNone).has_value());
  const std::string dropped =
      R"({"request":{"userInfo":)" + std::string(200, '[') + std::string(200, ']') + "}}";
  EXPECT_EQ(read_json(dropped, 128, JsonFilter::kAdmissionReview).error().code,
            ErrorCode::kTooDeep);
}

// The review filter keeps what the webhook reads and drops the API server's bookkeeping, but
// still rejects syntax errors inside what it drops.
TEST(JsonReaderTest, AdmissionReviewFilterDropsUnreadParts) {
  const std::string text = R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",
    "extra":{"x":1},
    "request":{"uid":"u","kind":{"kind":"Pod"},"resource":{"resource":"pods"},
      "userInfo":{"username":"a","extra":{"k":["v"]}},"operation":"CREATE",
      "object":{"metadata":{"name":"n","managedFields":[{"manager":"m"}],
                            "annotations":{"managedFields":"kept"}},
                "spec":{"managedFields":"kept too"}},
      "oldObject":null,"options":{"kind":"CreateOptions"},"dryRun":false}})";
  const Result<Json> read = read_json(text, 128, JsonFilter::kAdmissionReview);
  ASSERT_TRUE(read.has_value()) << read.error().to_string();
  const Json expected = Json::parse(R"({"apiVersion":"admission.k8s.io/v1",
    "kind":"AdmissionReview",
    "request":{"uid":"u","kind":{"kind":"Pod"},"operation":"CREATE",
      "object":{"metadata":{"name":"n","annotations":{"managedFields":"kept"}},
                "spec":{"managedFields":"kept too"}},
      "oldObject":null,"dryRun":false}})");
  EXPECT_EQ(*read, expected) << read->dump();

  std::string broken = text;
  broken.replace(broken.find(R"("manager":"m")"), 13, R"("manager":m)");
  EXPECT_EQ(read_json(broken, 128, JsonFilter::kAdmissionReview).error().code,
            ErrorCode::kInvalidJson);
}

}  // namespace
}  // namespace topoguard::admission
