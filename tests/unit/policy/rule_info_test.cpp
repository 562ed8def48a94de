// The rule table: complete, consistent with the rule ids, and linked from the README.
#include "topoguard/policy/rule_info.h"

#include <fstream>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

namespace topoguard::policy {
namespace {

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
  std::ifstream in(std::string(TOPOGUARD_SOURCE_DIR) + "/README.md");
  ASSERT_TRUE(in) << "README.md not found";
  std::ostringstream text;
  text << in.rdbuf();
  const std::string readme = text.str();
  for (RuleId rule : kAllRules) {
    const RuleInfo& info = rule_info(rule);
    const std::string row_start = "| <a id=\"" + help_anchor(rule) + "\"></a>`" +
                                  std::string(info.name) + "` |";
    const std::size_t row = readme.find(row_start);
    ASSERT_NE(row, std::string::npos) << "README rules table lacks a row starting " << row_start;
    const std::string line = readme.substr(row, readme.find('\n', row) - row);
    EXPECT_NE(line.find("| " + std::string(action_name(info.default_action)) + " |"),
              std::string::npos)
        << "README default for " << info.name << " differs: " << line;
  }
}

}  // namespace
}  // namespace topoguard::policy
