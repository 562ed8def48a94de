#include "topoguard/policy/policy.h"

#include <algorithm>

#include "topoguard/policy/rule_info.h"

namespace topoguard::policy {

namespace {

constexpr std::array<std::string_view, 4> kActionNames{"deny", "warn", "audit", "off"};

}  // namespace

std::string_view rule_name(RuleId rule) { return rule_info(rule).name; }

std::optional<RuleId> parse_rule_name(std::string_view name) {
  for (RuleId rule : kAllRules) {
    if (rule_name(rule) == name) {
      return rule;
    }
  }
  return std::nullopt;
}

bool rule_is_fixable(RuleId rule) { return rule_info(rule).fixable; }

std::string_view action_name(Action action) {
  return kActionNames[static_cast<std::size_t>(action)];
}

std::optional<Action> parse_action_name(std::string_view name) {
  for (std::size_t i = 0; i < kActionNames.size(); ++i) {
    if (kActionNames[i] == name) {
      return static_cast<Action>(i);
    }
  }
  return std::nullopt;
}

bool LabelSelector::reads_only(std::string_view key) const {
  return std::all_of(match_labels.begin(), match_labels.end(),
                     [key](const auto& entry) { return entry.first == key; }) &&
         std::all_of(match_expressions.begin(), match_expressions.end(),
                     [key](const LabelRequirement& requirement) { return requirement.key == key; });
}

bool LabelSelector::matches(const Json& labels) const {
  auto label_value = [&labels](const std::string& key) -> const Json* {
    const Json* value = member(labels, key);
    return value != nullptr && value->is_string() ? value : nullptr;
  };
  for (const auto& [key, expected] : match_labels) {
    const Json* value = label_value(key);
    if (value == nullptr || value->get_ref<const std::string&>() != expected) {
      return false;
    }
  }
  for (const LabelRequirement& requirement : match_expressions) {
    const Json* value = label_value(requirement.key);
    const bool in_values =
        value != nullptr && std::find(requirement.values.begin(), requirement.values.end(),
                                      value->get_ref<const std::string&>()) !=
                                requirement.values.end();
    switch (requirement.op) {
      case LabelRequirement::Operator::kIn:
        if (!in_values) {
          return false;
        }
        break;
      case LabelRequirement::Operator::kNotIn:
        if (in_values) {
          return false;
        }
        break;
      case LabelRequirement::Operator::kExists:
        if (value == nullptr) {
          return false;
        }
        break;
      case LabelRequirement::Operator::kDoesNotExist:
        if (value != nullptr) {
          return false;
        }
        break;
    }
  }
  return true;
}

bool Policy::is_alignment_attribute(std::string_view attribute) const {
  return attribute == alignment_attribute ||
         std::find(accepted_attributes.begin(), accepted_attributes.end(), attribute) !=
             accepted_attributes.end();
}

}  // namespace topoguard::policy
