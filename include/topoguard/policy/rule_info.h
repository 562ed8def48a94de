// What each rule is, in one table: its id, title, description, default action and severity,
// whether it has a fix, and its anchor in the README's rules table. Every report format, the
// policy parser's defaults and the docs read it from here.
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
};

[[nodiscard]] const RuleInfo& rule_info(RuleId rule);

// "rule-missing-pcie-alignment": the id of the rule's row in the README's rules table.
[[nodiscard]] std::string help_anchor(RuleId rule);

}  // namespace topoguard::policy
