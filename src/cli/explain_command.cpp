// `topoguard explain RULE`: the rule's whole explanation from the rule table (why it matters,
// with the measured figures, what fires it and the fix), so findings themselves stay short.
#include <iostream>
#include <sstream>
#include <string>

#include "commands.h"
#include "topoguard/common/printable_text.h"
#include "topoguard/policy/rule_info.h"

namespace topoguard::cli {

namespace {

// Each line of `text` wrapped at word boundaries to fit a terminal of `width` columns.
std::string wrapped(const std::string& text, std::size_t width) {
  std::istringstream lines(text);
  std::string out;
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::size_t column = 0;
    for (std::string word; words >> word;) {
      if (column != 0 && column + 1 + word.size() > width) {
        out += '\n';
        column = 0;
      } else if (column != 0) {
        out += ' ';
        ++column;
      }
      out += word;
      column += word.size();
    }
    out += '\n';
  }
  return out;
}

int run_explain_command(const std::string& rule_name) {
  const std::optional<policy::RuleId> rule = policy::parse_rule_name(rule_name);
  if (!rule) {
    std::cerr << "topoguard explain: unknown rule \"" << printable(rule_name)
              << "\"; the rules are: ";
    for (policy::RuleId known : policy::kAllRules) {
      std::cerr << (known == policy::kAllRules.front() ? "" : ", ") << policy::rule_name(known);
    }
    std::cerr << '\n';
    return kExitUsage;
  }
  constexpr std::size_t kTerminalWidth = 100;
  std::cout << wrapped(policy::rule_help(*rule, policy::HelpFormat::kText), kTerminalWidth)
            << std::flush;
  return kExitOk;
}

}  // namespace

void add_explain_command(CLI::App& app, int& exit_code) {
  auto rule = std::make_shared<std::string>();
  CLI::App* command = app.add_subcommand(
      "explain", "Explain a rule: why it matters (with measured figures), what fires it, the fix");
  command->add_option("rule", *rule, "Rule id, e.g. missing-pcie-alignment")
      ->required()
      ->type_name("RULE");
  command->callback([rule, &exit_code] { exit_code = run_explain_command(*rule); });
}

}  // namespace topoguard::cli
