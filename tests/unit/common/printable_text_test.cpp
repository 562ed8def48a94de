#include "topoguard/common/printable_text.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "note_name.h"

#include "topoguard/common/result.h"

namespace topoguard {
namespace {

struct Case {
  std::string_view note;
  std::string_view input;
  std::string_view printed;
};

constexpr Case kCases[] = {
    {"plain_ascii_is_unchanged", "ml/gpu-nic: (policy default) \\d+",
     "ml/gpu-nic: (policy default) \\d+"},
    {"line_breaks_and_tab_are_named", "a\nsummary: 0 deny\r\tb", "a\\nsummary: 0 deny\\r\\tb"},
    {"escape_and_bell_as_hex", "\x1b]0;title\x07", "\\x1b]0;title\\x07"},
    {"erase_line_then_return", "\x1b[2K\r", "\\x1b[2K\\r"},
    {"nul_and_del", std::string_view("a\0b\x7f", 4), "a\\x00b\\x7f"},
    {"c1_csi_as_code_point", "x\xc2\x9b" "2Ky", "x\\u009b2Ky"},
    {"lone_c1_byte_is_invalid_utf8", "x\x9b" "2Ky", "x\\x9b2Ky"},
    {"truncated_sequence", "ab\xe2\x82", "ab\\xe2\\x82"},
    {"overlong_slash", "\xc0\xaf", "\\xc0\\xaf"},
    {"surrogate_half", "\xed\xa0\x80", "\\xed\\xa0\\x80"},
    {"line_separators", "a\xe2\x80\xa8" "b\xe2\x80\xa9", "a\\u2028b\\u2029"},
    {"bidi_override_and_isolate", "\xe2\x80\xae" "abc\xe2\x81\xa6", "\\u202eabc\\u2066"},
    {"readable_non_ascii_stays", "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x9a\x80",
     "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x9a\x80"},
    {"empty", "", ""},
};

class PrintableTest : public ::testing::TestWithParam<Case> {};

// Each character that could end or hide a line is escaped; everything else reads as it was.
TEST_P(PrintableTest, EscapesWhatActsOnTheTerminal) {
  EXPECT_EQ(printable(GetParam().input), GetParam().printed);
}

INSTANTIATE_TEST_SUITE_P(Printable, PrintableTest, ::testing::ValuesIn(kCases),
                         testing::NoteName());

// Whatever bytes come in (here every byte value, none of them a valid sequence), what goes out
// is printable ASCII.
TEST(PrintableTextTest, NoByteValueComesThroughRaw) {
  std::string every_byte;
  for (int byte = 0; byte < 256; ++byte) {
    every_byte += static_cast<char>(byte);
  }
  for (const char c : printable(every_byte)) {
    const auto byte = static_cast<unsigned char>(c);
    EXPECT_TRUE(byte >= 0x20 && byte < 0x7F) << static_cast<int>(byte);
  }
}

// A diff keeps its lines; what each line holds is escaped.
TEST(PrintableTextTest, LinesKeepTheirLineFeeds) {
  EXPECT_EQ(printable_lines("-a\x1b[2K\n+b\r\n"), "-a\\x1b[2K\n+b\\r\n");
  EXPECT_EQ(printable_lines("no final line feed\t"), "no final line feed\\t");
  EXPECT_EQ(printable_lines(""), "");
}

// An error is one line whatever its file, field and message hold.
TEST(PrintableTextTest, ErrorTextIsOneLine) {
  const Error error{ErrorCode::kInvalidValue, "\"x\nsummary: 0 deny\" is not valid",
                    SourceLocation{"dir\x1b/a.yaml", 3, "metadata.name"}};
  EXPECT_EQ(error.to_string(),
            "dir\\x1b/a.yaml:3: metadata.name: \"x\\nsummary: 0 deny\" is not valid "
            "[invalid_value]");
}

}  // namespace
}  // namespace topoguard
