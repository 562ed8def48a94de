#include "topoguard/common/bounded_regex.h"

#include <gtest/gtest.h>
#include <re2/re2.h>

#include <string>

#include "note_name.h"

namespace topoguard {
namespace {

struct ExpansionCase {
  std::string_view note;
  std::string pattern;
  std::size_t nodes;
};

class RegexExpansionTest : public ::testing::TestWithParam<ExpansionCase> {};

TEST_P(RegexExpansionTest, CountsWrittenOutNodes) {
  EXPECT_EQ(regex_expansion(GetParam().pattern), GetParam().nodes);
}

INSTANTIATE_TEST_SUITE_P(
    Patterns, RegexExpansionTest,
    ::testing::Values(ExpansionCase{"plain", "abc", 3}, ExpansionCase{"counted", "a{1000}", 1000},
                      ExpansionCase{"range_takes_upper", "a{2,30}", 30},
                      ExpansionCase{"open_range", "a{5,}", 6},
                      ExpansionCase{"group_counts_its_content", "(ab){10}", 30},
                      ExpansionCase{"nested_groups_multiply", "(a{10}){10}", 110},
                      ExpansionCase{"class_is_one_atom", "[a-z{}]{5}", 5},
                      ExpansionCase{"leading_bracket_in_class", "[]a]{4}", 4},
                      ExpansionCase{"posix_class", "[[:alpha:]]{3}", 3},
                      ExpansionCase{"escape_with_braces", "\\x{41}{3}", 3},
                      ExpansionCase{"not_a_repetition_is_literal", "a{,5}", 5},
                      ExpansionCase{"quoted_text_is_literal", "\\Qa{1000}\\E", 7},
                      ExpansionCase{"alternation_adds", "a{100}|b{100}", 201},
                      ExpansionCase{"operators_count_one", "a*b+c?", 6},
                      ExpansionCase{"saturates",
                                    "((((((a{1000}){1000}){1000}){1000}){1000}){1000}){1000}",
                                    SIZE_MAX}),
    topoguard::testing::NoteName());

std::string alternatives(int count) {
  std::string text;
  for (int i = 0; i < count; ++i) {
    text += (i == 0 ? "" : "|") + ("a" + std::to_string(i) + "(b|c)*d{1,1000}");
  }
  return text;
}

TEST(BoundedRegex, CompilesOrdinaryPatterns) {
  auto regex = compile_bounded_regex("^gpu-[0-9]+$");
  ASSERT_TRUE(regex);
  EXPECT_TRUE(re2::RE2::FullMatch("gpu-12", **regex));
}

// Too long, too expanded, or too large for RE2's memory: kTooLarge, the pattern quoted short.
TEST(BoundedRegex, RefusesPatternsOverEachLimit) {
  const std::string too_long(kMaxRegexPatternBytes + 1, 'a');
  const std::string too_expanded = alternatives(60);  // ~60,000 nodes in 1.3 KB
  const std::string too_large = alternatives(49);     // ~49,000 nodes, over 1 MiB of program
  ASSERT_LE(regex_expansion(too_large), kMaxRegexExpansion);
  for (const auto& [pattern, reason] :
       {std::pair{too_long, "longer than"}, std::pair{too_expanded, "expands to more than"},
        std::pair{too_large, "a pattern may use"}}) {
    auto regex = compile_bounded_regex(pattern);
    ASSERT_FALSE(regex) << reason;
    EXPECT_EQ(regex.error().code, ErrorCode::kTooLarge);
    EXPECT_NE(regex.error().message.find(reason), std::string::npos) << regex.error().message;
    EXPECT_NE(regex.error().message.find(pattern.substr(0, kQuotedPatternBytes)),
              std::string::npos);
    EXPECT_LE(regex.error().message.size(), 250U) << regex.error().message;
  }
}

TEST(BoundedRegex, SyntaxErrorIsInvalidPattern) {
  auto regex = compile_bounded_regex("team-(a");
  ASSERT_FALSE(regex);
  EXPECT_EQ(regex.error().code, ErrorCode::kInvalidPattern);
  EXPECT_NE(regex.error().message.find("missing )"), std::string::npos);
}

TEST(BoundedRegex, QuoteCutsAtACharacterBoundary) {
  EXPECT_EQ(quote_pattern("abc"), "\"abc\"");
  const std::string text = std::string(127, 'a') + "\xc3\xa9" + std::string(10, 'b');
  EXPECT_EQ(quote_pattern(text), "\"" + std::string(127, 'a') + "...\" (139 bytes)");
}

}  // namespace
}  // namespace topoguard
