#include "topoguard/policy/pattern.h"

#include <gtest/gtest.h>
#include <re2/re2.h>

#include <string>
#include <vector>

namespace topoguard::policy {
namespace {

PatternList list_of(const std::vector<std::string>& texts) {
  std::vector<Pattern> patterns;
  for (const std::string& text : texts) {
    auto pattern = Pattern::compile(text, {});
    EXPECT_TRUE(pattern) << text;
    if (pattern) {
      patterns.push_back(*pattern);
    }
  }
  return PatternList(std::move(patterns));
}

TEST(PatternLiteral, PlainAndEscapedPunctuationAreLiterals) {
  EXPECT_EQ(literal_of("gpu\\.nvidia\\.com"), "gpu.nvidia.com");
  EXPECT_EQ(literal_of("kube-system"), "kube-system");
  EXPECT_EQ(literal_of("vpc\\.amazonaws\\.com/efa"), "vpc.amazonaws.com/efa");
  EXPECT_EQ(literal_of(""), "");
  EXPECT_EQ(literal_of("a\\*b\\(c\\)\\[d\\]\\\\"), "a*b(c)[d]\\");
}

TEST(PatternLiteral, OperatorsClassesAndFlagsAreNot) {
  for (const char* text : {"gpu.nvidia.com", "rdma/.*", "a|b", "(?i)gpu", "x+", "x?", "[ab]",
                           "a{2}", "^a", "a$", "\\d", "\\Qa.b\\E", "\\x41", "\\pL", "a\\",
                           "caf\xC3\xA9"}) {
    EXPECT_FALSE(literal_of(text).has_value()) << text;
  }
}

// The string comparison must answer exactly what RE2's full match answers.
TEST(PatternList, AgreesWithRe2OnEveryPatternAndSubject) {
  const std::vector<std::string> texts = {
      "gpu\\.nvidia\\.com", "dra\\.net",       "nvidia\\.com/mig-.*", "kube-system",
      "a\\*b",              ".+/numa(Node)?(ID)?", "",                 "x=y:z@w,v%u&t~s<r>q'p\"o!n;m #`",
      "(?i)GPU\\.amd\\.com", "rdma/.*",         "\\\\"};
  const std::vector<std::string> subjects = {
      "gpu.nvidia.com", "gpuXnvidia.com", "GPU.NVIDIA.COM", "gpu.amd.com", "dra.net",
      "dra.net\n",      "nvidia.com/mig-1g.10gb", "kube-system", "kube-system ", "a*b",
      "ab",             "dra.net/numaNode", "x/numa\nID", "", "x=y:z@w,v%u&t~s<r>q'p\"o!n;m #`",
      "rdma/hca\xff",   "\\",              std::string("dra.net\0", 8)};
  for (std::size_t mask = 1; mask < (std::size_t{1} << texts.size()); mask += 37) {
    std::vector<std::string> chosen;
    std::string alternation;
    for (std::size_t i = 0; i < texts.size(); ++i) {
      if ((mask >> i) & 1U) {
        chosen.push_back(texts[i]);
        alternation += (alternation.empty() ? "(?:" : "|(?:") + texts[i] + ")";
      }
    }
    const PatternList list = list_of(chosen);
    const PatternList copy = list;  // a copy matches on its own
    const re2::RE2 reference(alternation, re2::RE2::Quiet);
    ASSERT_TRUE(reference.ok()) << alternation;
    for (const std::string& subject : subjects) {
      const bool expected = re2::RE2::FullMatch(subject, reference);
      EXPECT_EQ(list.matches_any(subject), expected) << alternation << " on " << subject;
      EXPECT_EQ(copy.matches_any(subject), expected) << alternation << " on " << subject;
    }
  }
}

TEST(PatternList, EmptyMatchesNothing) {
  const PatternList empty;
  EXPECT_FALSE(empty.matches_any(""));
  EXPECT_FALSE(empty.matches_any("kube-system"));
}

// A pattern over the regex limits is refused at its location, quoted cut to 128 bytes, whether
// it is too long or needs too much memory; the 62 KB pattern of issue 19 among them.
TEST(PatternLimits, OverTheLimitsIsRefusedAndQuotedShort) {
  std::string alternatives;
  for (int i = 0; i < 3000; ++i) {
    alternatives += (i == 0 ? "" : "|") + ("a" + std::to_string(i) + "(b|c)*d{1,1000}");
  }
  std::string within_length;  // under 4 KiB, but RE2 needs more than its 1 MiB for it
  for (int i = 0; i < 150; ++i) {
    within_length += (i == 0 ? "" : "|") + ("a" + std::to_string(i) + "(b|c)*d{1,1000}");
  }
  for (const std::string& text : {alternatives, within_length}) {
    auto pattern = Pattern::compile(text, SourceLocation{"p.yaml", 7, "/spec/match/names/0"});
    ASSERT_FALSE(pattern);
    EXPECT_EQ(pattern.error().code, ErrorCode::kTooLarge);
    EXPECT_EQ(pattern.error().location.line, 7);
    EXPECT_NE(pattern.error().message.find(text.substr(0, 128)), std::string::npos);
    EXPECT_EQ(pattern.error().message.find(text.substr(0, 129)), std::string::npos);
    EXPECT_LE(pattern.error().to_string().size(), 300U) << pattern.error().to_string();
  }
}

// Patterns that are fine alone but too large as one alternation are still matched, one by one.
TEST(PatternLimits, ListTooLargeAsOneProgramStillMatches) {
  std::vector<std::string> texts;
  for (int i = 0; i < 60; ++i) {
    texts.push_back("x" + std::to_string(i) + "(b|c)*d{1,1000}");
  }
  const PatternList list = list_of(texts);
  EXPECT_TRUE(list.matches_any("x59bd"));
  EXPECT_TRUE(list.matches_any("x0cccddd"));
  EXPECT_FALSE(list.matches_any("x60bd"));
}

}  // namespace
}  // namespace topoguard::policy
