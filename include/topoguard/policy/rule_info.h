// What each rule is, in one table: its id, title, description, default action and severity,
// whether it has a fix, its full explanation (why it matters, with the measured figures, what
// fires it and how to fix it) and its anchor in the README's rules table. Every report format,
// `topoguard explain`, the policy parser's defaults and the docs read it from here, so findings
// can stay short: the reason is told once, here.
#pragma once

#include <array>
#include <string>
#include <string_view>

#include "topoguard/policy/policy.h"

namespace topoguard::policy {

// How much a finding of the rule matters to the workload, independent of the action a policy
// gives it (the action decides admission; the severity ranks findings in dashboards).
enum class Severity { kHigh, kMedium, kLow };
[[nodiscard]] std::string_view severity_name(Severity severity);  // "high", "medium", "low"

struct RuleInfo {
  RuleId id;
  std::string_view name;         // the public rule id: "missing-pcie-alignment"
  std::string_view title;        // one line, sentence case, no final period
  std::string_view description;  // what it checks and why, one or two sentences
  Action default_action;         // in the built-in policy and when a policy omits the rule
  bool fixable;                  // can produce a JSONPatch fix (and may be `mutate: true`)
  Severity severity;
  std::string_view why;    // why it matters, with the measured figures where there are some
  std::string_view fires;  // exactly what makes the rule fire
  std::string_view fix;    // what to write instead, and whether `topoguard fix` does it
};

[[nodiscard]] const RuleInfo& rule_info(RuleId rule);

// The rule's whole explanation as plain text (`topoguard explain`, SARIF help.text) or Markdown
// (SARIF help.markdown): title, default action and severity, then why, what fires it and the fix.
enum class HelpFormat { kText, kMarkdown };
[[nodiscard]] std::string rule_help(RuleId rule, HelpFormat format);

// "rule-missing-pcie-alignment": the id of the rule's row in the README's rules table.
[[nodiscard]] std::string help_anchor(RuleId rule);

}  // namespace topoguard::policy
