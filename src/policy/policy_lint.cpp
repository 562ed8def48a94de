#include "policy_lint.h"

#include <algorithm>
#include <optional>

#include "topoguard/policy/policy_json.h"

namespace topoguard::policy {

namespace {

bool recognizes_nothing(const DeviceRecognizer& recognizer) {
  return recognizer.device_class_names.empty() && recognizer.drivers.empty() &&
         recognizer.extended_resources.empty();
}

// The name a pattern matches when it matches exactly one name (letters, digits, '-', '_' and
// escaped dots only), e.g. 'kube-system' or 'team\.a'; nullopt for any other pattern.
std::optional<std::string> literal_name(const std::string& pattern) {
  std::string name;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size() && pattern[i + 1] == '.') {
      name += '.';
      ++i;
    } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '-' || c == '_') {
      name += c;
    } else {
      return std::nullopt;
    }
  }
  return name;
}

// Whether no namespace can pass `match.namespaces`: every include pattern names one namespace
// and the exclude patterns reject each of them.
bool excludes_every_included_namespace(const Match& match) {
  if (match.include_namespaces.empty() || match.exclude_namespaces.empty()) {
    return false;
  }
  return std::all_of(match.include_namespaces.patterns().begin(),
                     match.include_namespaces.patterns().end(), [&](const Pattern& pattern) {
                       const std::optional<std::string> name = literal_name(pattern.text());
                       return name && match.exclude_namespaces.matches_any(*name);
                     });
}

// A requirement no label set can meet together with the rest of the selector.
std::optional<std::string> contradiction(const LabelSelector& selector) {
  using Operator = LabelRequirement::Operator;
  for (const LabelRequirement& requirement : selector.match_expressions) {
    const auto label = selector.match_labels.find(requirement.key);
    const bool listed = label != selector.match_labels.end() &&
                        std::find(requirement.values.begin(), requirement.values.end(),
                                  label->second) != requirement.values.end();
    if (label != selector.match_labels.end() &&
        (requirement.op == Operator::kDoesNotExist ||
         (requirement.op == Operator::kNotIn && listed) ||
         (requirement.op == Operator::kIn && !listed))) {
      return "matchLabels sets \"" + requirement.key + "\" and a matchExpression excludes it";
    }
    for (const LabelRequirement& other : selector.match_expressions) {
      const bool needs = requirement.op == Operator::kExists || requirement.op == Operator::kIn;
      if (&other != &requirement && other.key == requirement.key && needs &&
          other.op == Operator::kDoesNotExist) {
        return "matchExpressions both require and forbid the label \"" + requirement.key + "\"";
      }
    }
  }
  return std::nullopt;
}

bool matches_everything(const Match& match) {
  return match.include_namespaces.empty() && match.exclude_namespaces.empty() &&
         !match.selector && match.kinds.empty() && match.names.empty();
}

// Why `match` can select no object, if it cannot.
std::optional<std::string> empty_match_reason(const Match& match) {
  if (excludes_every_included_namespace(match)) {
    return "every namespace its match.namespaces.include names is also excluded";
  }
  if (match.selector) {
    if (auto reason = contradiction(*match.selector)) {
      return "its match.selector can match no labels: " + *reason;
    }
  }
  return std::nullopt;
}

}  // namespace

std::vector<Error> policy_warnings(const Policy& policy, const Policy& builtin) {
  std::vector<Error> warnings;
  auto warn = [&](const std::string& field, const std::string& message) {
    warnings.push_back(Error{ErrorCode::kInvalidValue, "policy \"" + policy.name + "\" " + message,
                             SourceLocation{policy.origin.file, policy.origin.line, field}});
  };
  for (const auto& [recognizer, role] : {std::pair{&policy.gpu, "gpu"}, std::pair{&policy.nic, "nic"}}) {
    if (recognizes_nothing(*recognizer)) {
      warn(std::string("/spec/devices/") + role,
           std::string("can match nothing: devices.") + role +
               " recognises no device, and every rule needs a GPU and a NIC");
    }
  }
  if (std::all_of(policy.rules.begin(), policy.rules.end(),
                  [](const RuleSettings& settings) { return settings.action == Action::kOff; })) {
    warn("/spec/rules", "can match nothing: every rule is off");
  }
  const RuleSettings& numa_only = policy.rule(RuleId::kNumaOnlyAlignment);
  if (numa_only.when_alignment_impossible) {
    const std::string field = "/spec/rules/numa-only-alignment/whenAlignmentImpossible";
    if (numa_only.action == Action::kOff) {
      warn(field, "sets whenAlignmentImpossible on numa-only-alignment, which is off: the rule "
                  "reports nothing, so its impossible case never applies");
    } else if (*numa_only.when_alignment_impossible == numa_only.action) {
      warn(field, "sets whenAlignmentImpossible to the rule's own action, which changes nothing");
    }
  }
  if (auto reason = empty_match_reason(policy.match)) {
    warn("/spec/match", "can match nothing: " + *reason);
  }
  for (const PolicyException& exception : policy.exceptions) {
    if (exception.rules.empty() && matches_everything(exception.match)) {
      warn("/spec/exceptions",
           "can match nothing: exception \"" + exception.name +
               "\" waives every rule for every object the policy matches");
    }
  }
  Json spec = policy_to_json(policy)["spec"];
  if (spec == policy_to_json(builtin)["spec"]) {
    warn("", "changes nothing relative to the built-in policy: it judges exactly as \"" +
                 builtin.name + "\" does (fine when meant to keep the built-in policy next to "
                 "others, since --policies replaces it)");
  }
  return warnings;
}

}  // namespace topoguard::policy
