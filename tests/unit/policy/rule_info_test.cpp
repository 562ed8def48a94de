// The rule table: complete, consistent with the rule ids, and linked from the README.
#include "topoguard/policy/rule_info.h"

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include <gtest/gtest.h>
#include "test_paths.h"

namespace topoguard::policy {
namespace {

std::string readme_text() {
  std::ifstream in(test::source_dir() + "/README.md");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Every rule has a distinct name that parses back to it, a title and a description; fixable is
// what the parser enforces for `mutate`.
TEST(RuleInfoTest, EveryRuleDescribed) {
  std::set<std::string_view> names;
  for (RuleId rule : kAllRules) {
    const RuleInfo& info = rule_info(rule);
    EXPECT_EQ(info.id, rule);
    EXPECT_EQ(info.name, rule_name(rule));
    EXPECT_EQ(parse_rule_name(info.name), rule);
    EXPECT_TRUE(names.insert(info.name).second) << info.name;
    EXPECT_FALSE(info.title.empty()) << info.name;
    EXPECT_NE(info.title.back(), '.') << info.name;
    EXPECT_GT(info.description.size(), info.title.size()) << info.name;
    EXPECT_EQ(info.fixable, rule_is_fixable(rule)) << info.name;
    EXPECT_NE(info.default_action, Action::kOff) << info.name;
  }
  EXPECT_EQ(help_anchor(RuleId::kSplitClaims), "rule-split-claims");
  EXPECT_EQ(severity_name(rule_info(RuleId::kMissingPcieAlignment).severity), "high");
}

// Report formats link each rule to "#rule-<id>": the README's rules table defines each anchor
// and names the same default action.
TEST(RuleInfoTest, ReadmeRulesTableHasEveryAnchor) {
  const std::string readme = readme_text();
  ASSERT_FALSE(readme.empty()) << "README.md not found";
  for (RuleId rule : kAllRules) {
    const RuleInfo& info = rule_info(rule);
    const std::string row_start = "| <a id=\"" + help_anchor(rule) + "\"></a>`" +
                                  std::string(info.name) + "` |";
    const std::size_t row = readme.find(row_start);
    ASSERT_NE(row, std::string::npos) << "README rules table lacks a row starting " << row_start;
    const std::string line = readme.substr(row, readme.find('\n', row) - row);
    EXPECT_NE(line.find("| " + std::string(info.title)), std::string::npos)
        << "README title for " << info.name << " differs: " << line;
    EXPECT_NE(line.find("| " + std::string(action_name(info.default_action)) + " |"),
              std::string::npos)
        << "README default for " << info.name << " differs: " << line;
    EXPECT_NE(line.find(info.fixable ? "| yes" : "| no"), std::string::npos)
        << "README fix column for " << info.name << " differs: " << line;
  }
}

// The measured figures are told by `topoguard explain` and the README's "Why": the same ones.
TEST(RuleInfoTest, ReadmeWhyGivesTheMeasuredFigures) {
  const std::string readme = readme_text();
  ASSERT_FALSE(readme.empty()) << "README.md not found";
  const std::string why = readme.substr(readme.find("## Why"), readme.find("## Rules") -
                                                                 readme.find("## Why"));
  const std::string help = rule_help(RuleId::kMissingPcieAlignment, HelpFormat::kText);
  const std::regex figure(R"(\d+\.\d+ (Gbit/s|ms))");
  std::size_t figures = 0;
  for (auto it = std::sregex_iterator(help.begin(), help.end(), figure);
       it != std::sregex_iterator(); ++it, ++figures) {
    const std::string number = it->str().substr(0, it->str().find(' '));
    EXPECT_NE(why.find(number), std::string::npos) << "README's Why lacks " << it->str();
  }
  EXPECT_EQ(figures, 5u);
}

// The explanation `topoguard explain` prints and SARIF carries: every part in order, the
// measured figures for the rules about the GPU-NIC path and only there.
TEST(RuleInfoTest, HelpExplainsWhyWhatAndFix) {
  for (RuleId rule : kAllRules) {
    const RuleInfo& info = rule_info(rule);
    const std::string text = rule_help(rule, HelpFormat::kText);
    EXPECT_EQ(text.rfind(std::string(info.name) + ": " + std::string(info.title) + "\n", 0), 0u)
        << text;
    const std::size_t why = text.find("\n\nWhy: ");
    const std::size_t fires = text.find("\n\nFires when: ");
    const std::size_t fix = text.find("\n\nFix: ");
    EXPECT_TRUE(why != std::string::npos && why < fires && fires < fix && fix != std::string::npos)
        << text;
    EXPECT_NE(text.find(info.fix), std::string::npos) << text;
    EXPECT_NE(text.find("Default action: " + std::string(action_name(info.default_action))),
              std::string::npos)
        << text;
    const std::string markdown = rule_help(rule, HelpFormat::kMarkdown);
    EXPECT_NE(markdown.find("\n\n**Why.** "), std::string::npos) << markdown;
    EXPECT_EQ(markdown.find('<'), std::string::npos) << "read as HTML: " << markdown;
  }
  EXPECT_NE(rule_help(RuleId::kMissingPcieAlignment, HelpFormat::kText).find("194.6 Gbit/s"),
            std::string::npos);
  EXPECT_NE(rule_help(RuleId::kSplitClaims, HelpFormat::kText).find("110.0 Gbit/s"),
            std::string::npos);
  EXPECT_EQ(rule_help(RuleId::kUnresolvedClaim, HelpFormat::kText).find("Gbit/s"),
            std::string::npos);
}

}  // namespace
}  // namespace topoguard::policy
