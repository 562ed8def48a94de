#include "policy_parser.h"

#include <algorithm>
#include <initializer_list>
#include <map>
#include <utility>

#include "topoguard/k8s/kinds.h"
#include "topoguard/k8s/pod_template.h"
#include "topoguard/policy/rule_info.h"

namespace topoguard::policy {

namespace {

bool is_lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// RFC 1123 subdomain: dot-separated labels of [a-z0-9-], each starting and ending alphanumeric.
bool is_dns_subdomain(std::string_view text, std::size_t max_length) {
  if (text.empty() || text.size() > max_length) {
    return false;
  }
  std::size_t label_start = 0;
  while (label_start <= text.size()) {
    std::size_t label_end = text.find('.', label_start);
    if (label_end == std::string_view::npos) {
      label_end = text.size();
    }
    const std::string_view label = text.substr(label_start, label_end - label_start);
    if (label.empty() || label.size() > 63 || !is_lower_alnum(label.front()) ||
        !is_lower_alnum(label.back())) {
      return false;
    }
    for (char c : label) {
      if (!is_lower_alnum(c) && c != '-') {
        return false;
      }
    }
    label_start = label_end + 1;
  }
  return true;
}

bool is_c_identifier(std::string_view text, std::size_t max_length) {
  if (text.empty() || text.size() > max_length) {
    return false;
  }
  auto is_alpha = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  };
  if (!is_alpha(text.front())) {
    return false;
  }
  return std::all_of(text.begin(), text.end(),
                     [&is_alpha](char c) { return is_alpha(c) || (c >= '0' && c <= '9'); });
}

std::string in_quotes(std::string_view text) { return "\"" + std::string(text) + "\""; }

std::string joined(std::initializer_list<std::string_view> names) {
  std::string text;
  for (std::string_view name : names) {
    text += text.empty() ? "" : ", ";
    text += name;
  }
  return text;
}

std::string known_rule_names() {
  std::string text;
  for (RuleId rule : kAllRules) {
    text += text.empty() ? "" : ", ";
    text += rule_name(rule);
  }
  return text;
}

// Walks one document, collecting every error instead of stopping at the first. Optional fields
// that are null count as absent (YAML `key:` with nothing after it).
class DocumentParser {
 public:
  DocumentParser(const LineIndex& lines, const std::string& file, const Policy* inherited)
      : lines_(lines), file_(file), inherited_(inherited) {}

  PolicyParseOutcome parse(const Json& document) {
    Policy policy;
    policy.origin = location("");
    policy.origin.field.clear();
    if (inherited_ != nullptr) {
      policy.gpu = inherited_->gpu;
      policy.nic = inherited_->nic;
      policy.alignment_attribute = inherited_->alignment_attribute;
      policy.accepted_attributes = inherited_->accepted_attributes;
      policy.numa_attributes = inherited_->numa_attributes;
      policy.rules = inherited_->rules;
    } else {
      for (RuleId rule : kAllRules) {
        policy.rules[static_cast<std::size_t>(rule)] = default_rule_settings(rule);
      }
    }
    if (!document.is_object()) {
      wrong_type("", "an object (an AlignmentPolicy document)", document);
      return finish(std::move(policy));
    }
    reject_unknown(document, "", {"apiVersion", "kind", "metadata", "spec"});
    // A document of another kind is reported once, without a cascade of unknown-field errors.
    const bool api_version_ok = exact_string(document, "", "apiVersion", kPolicyApiVersion);
    const bool kind_ok = exact_string(document, "", "kind", kPolicyKind);
    if (!api_version_ok || !kind_ok) {
      return finish(std::move(policy));
    }
    if (const Json* metadata = required_object(document, "", "metadata")) {
      reject_unknown(*metadata, "/metadata", {"name"});
      if (auto name = required_string(*metadata, "/metadata", "name")) {
        if (check_name(*name, "/metadata/name", "policy")) {
          policy.name = std::move(*name);
        }
      }
    }
    if (const Json* spec = required_object(document, "", "spec")) {
      parse_spec(*spec, policy);
    }
    return finish(std::move(policy));
  }

 private:
  PolicyParseOutcome finish(Policy&& policy) {
    PolicyParseOutcome outcome;
    if (errors_.empty()) {
      outcome.policy = std::move(policy);
    }
    outcome.errors = std::move(errors_);
    return outcome;
  }

  SourceLocation location(const std::string& pointer) const {
    return SourceLocation{file_, lines_.line_of(pointer), pointer};
  }

  void fail(ErrorCode code, const std::string& pointer, std::string message) {
    errors_.push_back(Error{code, std::move(message), location(pointer)});
  }

  void wrong_type(const std::string& pointer, std::string_view expected, const Json& value) {
    fail(ErrorCode::kWrongType, pointer,
         "expected " + std::string(expected) + ", got " + json_type_name(value));
  }

  void reject_unknown(const Json& object, const std::string& pointer,
                      std::initializer_list<std::string_view> known) {
    for (const auto& [key, value] : object.items()) {
      if (std::find(known.begin(), known.end(), key) == known.end()) {
        fail(ErrorCode::kUnknownField, append_pointer(pointer, key),
             "unknown field " + in_quotes(key) + "; expected one of: " + joined(known));
      }
    }
  }

  // The member, or nullptr when absent or null.
  static const Json* present(const Json& object, std::string_view key) {
    const Json* value = member(object, key);
    return value != nullptr && !value->is_null() ? value : nullptr;
  }

  const Json* required(const Json& object, const std::string& pointer, std::string_view key) {
    const Json* value = present(object, key);
    if (value == nullptr) {
      fail(ErrorCode::kMissingField, append_pointer(pointer, key),
           "required field " + in_quotes(key) + " is missing");
    }
    return value;
  }

  const Json* as_object(const Json* value, const std::string& pointer) {
    if (value == nullptr) {
      return nullptr;
    }
    if (!value->is_object()) {
      wrong_type(pointer, "an object", *value);
      return nullptr;
    }
    return value;
  }

  const Json* optional_object(const Json& object, const std::string& pointer,
                              std::string_view key) {
    return as_object(present(object, key), append_pointer(pointer, key));
  }

  const Json* required_object(const Json& object, const std::string& pointer,
                              std::string_view key) {
    return as_object(required(object, pointer, key), append_pointer(pointer, key));
  }

  std::optional<std::string> as_string(const Json& value, const std::string& pointer) {
    if (!value.is_string()) {
      wrong_type(pointer, "a string", value);
      return std::nullopt;
    }
    return value.get<std::string>();
  }

  std::optional<std::string> required_string(const Json& object, const std::string& pointer,
                                             std::string_view key) {
    const Json* value = required(object, pointer, key);
    return value != nullptr ? as_string(*value, append_pointer(pointer, key)) : std::nullopt;
  }

  bool exact_string(const Json& object, const std::string& pointer, std::string_view key,
                    std::string_view expected) {
    auto value = required_string(object, pointer, key);
    if (!value) {
      return false;
    }
    if (*value != expected) {
      fail(ErrorCode::kInvalidValue, append_pointer(pointer, key),
           "must be " + in_quotes(expected) + ", got " + in_quotes(*value));
      return false;
    }
    return true;
  }

  // Policy and exception names appear in findings, metrics and annotations, so they are kept to
  // Kubernetes object-name syntax.
  bool check_name(const std::string& name, const std::string& pointer, std::string_view what) {
    if (!is_dns_subdomain(name, 253)) {
      fail(ErrorCode::kInvalidValue, pointer,
           std::string(what) + " name " + in_quotes(name) +
               " must be a DNS subdomain (lowercase letters, digits, '-' and '.')");
      return false;
    }
    return true;
  }

  // Calls `each(element, pointer)` for every element of an optional array of strings.
  template <typename Each>
  void for_each_string(const Json& object, const std::string& pointer, std::string_view key,
                       Each&& each) {
    const Json* value = present(object, key);
    if (value == nullptr) {
      return;
    }
    const std::string list_pointer = append_pointer(pointer, key);
    if (!value->is_array()) {
      wrong_type(list_pointer, "a list of strings", *value);
      return;
    }
    for (std::size_t i = 0; i < value->size(); ++i) {
      const std::string element_pointer = append_pointer(list_pointer, i);
      if (auto text = as_string((*value)[i], element_pointer)) {
        each(std::move(*text), element_pointer);
      }
    }
  }

  PatternList pattern_list(const Json& object, const std::string& pointer, std::string_view key) {
    std::vector<Pattern> patterns;
    for_each_string(object, pointer, key,
                    [this, &patterns](std::string text, const std::string& element_pointer) {
                      if (text.empty()) {
                        fail(ErrorCode::kInvalidValue, element_pointer,
                             "empty pattern (it would only match an empty name)");
                        return;
                      }
                      auto pattern = Pattern::compile(text, location(element_pointer));
                      if (!pattern) {
                        errors_.push_back(pattern.error());
                        return;
                      }
                      patterns.push_back(std::move(*pattern));
                    });
    return PatternList(std::move(patterns));
  }

  // Records `path` as inherited when `value` is absent and there is a policy to inherit from.
  void note_inherited(const Json* value, std::string path, Policy& policy) const {
    if (value == nullptr && inherited_ != nullptr) {
      policy.inherited.push_back(std::move(path));
    }
  }

  void parse_spec(const Json& spec, Policy& policy) {
    reject_unknown(spec, "/spec",
                   {"match", "devices", "alignment", "rules", "actionOverrides", "exceptions"});
    if (const Json* match = optional_object(spec, "/spec", "match")) {
      policy.match = parse_match(*match, "/spec/match");
    }
    const Json* devices = optional_object(spec, "/spec", "devices");
    const Json* gpu = nullptr;
    const Json* nic = nullptr;
    if (devices != nullptr) {
      reject_unknown(*devices, "/spec/devices", {"gpu", "nic"});
      gpu = optional_object(*devices, "/spec/devices", "gpu");
      nic = optional_object(*devices, "/spec/devices", "nic");
    }
    // A recognizer that is written replaces the inherited one whole.
    if (gpu != nullptr) {
      policy.gpu = parse_recognizer(*gpu, "/spec/devices/gpu");
    }
    if (nic != nullptr) {
      policy.nic = parse_recognizer(*nic, "/spec/devices/nic");
    }
    note_inherited(gpu, "devices.gpu", policy);
    note_inherited(nic, "devices.nic", policy);
    const Json* alignment = optional_object(spec, "/spec", "alignment");
    parse_alignment(alignment != nullptr ? *alignment : Json::object(), "/spec/alignment", policy);
    const Json* rules = optional_object(spec, "/spec", "rules");
    parse_rules(rules != nullptr ? *rules : Json::object(), "/spec/rules", policy);
    if (const Json* overrides = present(spec, "actionOverrides")) {
      parse_overrides(*overrides, "/spec/actionOverrides", policy);
    }
    if (const Json* exceptions = present(spec, "exceptions")) {
      parse_exceptions(*exceptions, "/spec/exceptions", policy);
    }
  }

  Match parse_match(const Json& object, const std::string& pointer) {
    Match match;
    reject_unknown(object, pointer, {"namespaces", "namespaceSelector", "selector", "kinds", "names"});
    if (const Json* namespaces = optional_object(object, pointer, "namespaces")) {
      const std::string namespaces_pointer = append_pointer(pointer, "namespaces");
      reject_unknown(*namespaces, namespaces_pointer, {"include", "exclude"});
      match.include_namespaces = pattern_list(*namespaces, namespaces_pointer, "include");
      match.exclude_namespaces = pattern_list(*namespaces, namespaces_pointer, "exclude");
    }
    if (const Json* selector = optional_object(object, pointer, "selector")) {
      match.selector = parse_selector(*selector, append_pointer(pointer, "selector"));
    }
    if (const Json* selector = optional_object(object, pointer, "namespaceSelector")) {
      match.namespace_selector =
          parse_selector(*selector, append_pointer(pointer, "namespaceSelector"));
    }
    for_each_string(object, pointer, "kinds",
                    [this, &match](std::string kind, const std::string& element_pointer) {
                      if (!k8s::is_workload_kind_name(kind) && !k8s::is_claim_kind_name(kind)) {
                        fail(ErrorCode::kInvalidValue, element_pointer,
                             "kind " + in_quotes(kind) +
                                 " is not a workload or claim kind that topoguard evaluates");
                        return;
                      }
                      match.kinds.push_back(std::move(kind));
                    });
    match.names = pattern_list(object, pointer, "names");
    return match;
  }

  LabelSelector parse_selector(const Json& object, const std::string& pointer) {
    LabelSelector selector;
    reject_unknown(object, pointer, {"matchLabels", "matchExpressions"});
    if (const Json* labels = optional_object(object, pointer, "matchLabels")) {
      const std::string labels_pointer = append_pointer(pointer, "matchLabels");
      for (const auto& [key, value] : labels->items()) {
        if (auto text = as_string(value, append_pointer(labels_pointer, key))) {
          selector.match_labels.emplace(key, std::move(*text));
        }
      }
    }
    const Json* expressions = present(object, "matchExpressions");
    if (expressions == nullptr) {
      return selector;
    }
    const std::string expressions_pointer = append_pointer(pointer, "matchExpressions");
    if (!expressions->is_array()) {
      wrong_type(expressions_pointer, "a list of label selector requirements", *expressions);
      return selector;
    }
    for (std::size_t i = 0; i < expressions->size(); ++i) {
      const std::string element_pointer = append_pointer(expressions_pointer, i);
      if (const Json* requirement = as_object(&(*expressions)[i], element_pointer)) {
        if (auto parsed = parse_requirement(*requirement, element_pointer)) {
          selector.match_expressions.push_back(std::move(*parsed));
        }
      }
    }
    return selector;
  }

  std::optional<LabelRequirement> parse_requirement(const Json& object,
                                                    const std::string& pointer) {
    using Operator = LabelRequirement::Operator;
    static const std::map<std::string, Operator, std::less<>> kOperators{
        {"In", Operator::kIn},
        {"NotIn", Operator::kNotIn},
        {"Exists", Operator::kExists},
        {"DoesNotExist", Operator::kDoesNotExist}};
    const std::size_t errors_before = errors_.size();
    LabelRequirement requirement;
    reject_unknown(object, pointer, {"key", "operator", "values"});
    if (auto key = required_string(object, pointer, "key")) {
      if (key->empty()) {
        fail(ErrorCode::kInvalidValue, append_pointer(pointer, "key"), "label key is empty");
      }
      requirement.key = std::move(*key);
    }
    std::optional<Operator> op;
    if (auto name = required_string(object, pointer, "operator")) {
      auto it = kOperators.find(*name);
      if (it == kOperators.end()) {
        fail(ErrorCode::kInvalidValue, append_pointer(pointer, "operator"),
             "unknown operator " + in_quotes(*name) +
                 "; expected In, NotIn, Exists or DoesNotExist");
      } else {
        op = it->second;
      }
    }
    for_each_string(object, pointer, "values",
                    [&requirement](std::string value, const std::string&) {
                      requirement.values.push_back(std::move(value));
                    });
    if (op) {
      requirement.op = *op;
      const bool needs_values = *op == Operator::kIn || *op == Operator::kNotIn;
      const Json* values = present(object, "values");
      const bool has_values = values != nullptr && values->is_array() && !values->empty();
      if (needs_values && !has_values && (values == nullptr || values->is_array())) {
        fail(ErrorCode::kInvalidValue, append_pointer(pointer, "values"),
             "operator " + std::string(object.at("operator").get<std::string>()) +
                 " needs a non-empty list of values");
      } else if (!needs_values && has_values) {
        fail(ErrorCode::kInvalidValue, append_pointer(pointer, "values"),
             "operator " + std::string(object.at("operator").get<std::string>()) +
                 " takes no values");
      }
    }
    if (errors_.size() != errors_before) {
      return std::nullopt;
    }
    return requirement;
  }

  DeviceRecognizer parse_recognizer(const Json& object, const std::string& pointer) {
    DeviceRecognizer recognizer;
    reject_unknown(object, pointer, {"deviceClassNames", "drivers", "extendedResources"});
    recognizer.device_class_names = pattern_list(object, pointer, "deviceClassNames");
    recognizer.drivers = pattern_list(object, pointer, "drivers");
    recognizer.extended_resources = pattern_list(object, pointer, "extendedResources");
    return recognizer;
  }

  void parse_alignment(const Json& object, const std::string& pointer, Policy& policy) {
    reject_unknown(object, pointer, {"attribute", "acceptedAttributes", "numaAttributes"});
    auto check_attribute = [this](const std::string& name, const std::string& field_pointer) {
      if (!is_qualified_attribute_name(name)) {
        fail(ErrorCode::kInvalidValue, field_pointer,
             "attribute " + in_quotes(name) +
                 " is not a qualified name <dns-subdomain>/<C identifier>, e.g. "
                 "resource.kubernetes.io/pcieRoot");
        return false;
      }
      return true;
    };
    note_inherited(present(object, "attribute"), "alignment.attribute", policy);
    note_inherited(present(object, "acceptedAttributes"), "alignment.acceptedAttributes", policy);
    const Json* numa = present(object, "numaAttributes");
    note_inherited(numa, "alignment.numaAttributes", policy);
    if (const Json* attribute = present(object, "attribute")) {
      const std::string attribute_pointer = append_pointer(pointer, "attribute");
      if (auto name = as_string(*attribute, attribute_pointer)) {
        if (check_attribute(*name, attribute_pointer)) {
          policy.alignment_attribute = std::move(*name);
        }
      }
    }
    if (present(object, "acceptedAttributes") != nullptr) {
      policy.accepted_attributes.clear();
    }
    for_each_string(object, pointer, "acceptedAttributes",
                    [&](std::string name, const std::string& element_pointer) {
                      if (check_attribute(name, element_pointer)) {
                        policy.accepted_attributes.push_back(std::move(name));
                      }
                    });
    if (numa != nullptr) {
      policy.numa_attributes = pattern_list(object, pointer, "numaAttributes");
    }
    // An attribute cannot both align devices and count as "NUMA only".
    const std::string numa_pointer = append_pointer(pointer, "numaAttributes");
    std::vector<std::string> aligned{policy.alignment_attribute};
    aligned.insert(aligned.end(), policy.accepted_attributes.begin(),
                   policy.accepted_attributes.end());
    for (const std::string& name : aligned) {
      if (policy.numa_attributes.matches_any(name)) {
        fail(ErrorCode::kInvalidValue, numa_pointer,
             "a NUMA attribute pattern matches the alignment attribute " + in_quotes(name) +
                 (numa == nullptr ? " (numaAttributes are inherited from the built-in policy: "
                                    "set them explicitly)"
                                  : ""));
      }
    }
  }

  void parse_rules(const Json& object, const std::string& pointer, Policy& policy) {
    for (RuleId rule : kAllRules) {
      note_inherited(present(object, rule_name(rule)), "rules." + std::string(rule_name(rule)),
                     policy);
    }
    for (const auto& [key, value] : object.items()) {
      const std::string rule_pointer = append_pointer(pointer, key);
      const std::optional<RuleId> rule = parse_rule_name(key);
      if (!rule) {
        fail(ErrorCode::kUnknownRule, rule_pointer,
             "unknown rule " + in_quotes(key) + "; known rules: " + known_rule_names());
        continue;
      }
      const Json* settings = as_object(value.is_null() ? nullptr : &value, rule_pointer);
      if (settings == nullptr) {
        continue;
      }
      RuleSettings& target = policy.rules[static_cast<std::size_t>(*rule)];
      reject_unknown(*settings, rule_pointer, {"action", "mutate", "whenAlignmentImpossible"});
      const auto read_action = [&](const Json& action, const std::string& action_pointer) {
        std::optional<Action> parsed;
        if (auto name = as_string(action, action_pointer)) {
          parsed = parse_action_name(*name);
          if (!parsed) {
            fail(ErrorCode::kInvalidValue, action_pointer,
                 "unknown action " + in_quotes(*name) + "; expected deny, warn, audit or off");
          }
        }
        return parsed;
      };
      if (const Json* action = present(*settings, "action")) {
        if (auto parsed = read_action(*action, append_pointer(rule_pointer, "action"))) {
          target.action = *parsed;
        }
      }
      if (const Json* action = present(*settings, "whenAlignmentImpossible")) {
        const std::string action_pointer = append_pointer(rule_pointer, "whenAlignmentImpossible");
        if (*rule != RuleId::kNumaOnlyAlignment) {
          fail(ErrorCode::kUnknownField, action_pointer,
               "only numa-only-alignment takes whenAlignmentImpossible");
        } else if (auto parsed = read_action(*action, action_pointer)) {
          target.when_alignment_impossible = *parsed;
        }
      }
      if (const Json* mutate = present(*settings, "mutate")) {
        const std::string mutate_pointer = append_pointer(rule_pointer, "mutate");
        if (!mutate->is_boolean()) {
          wrong_type(mutate_pointer, "a boolean", *mutate);
        } else if (mutate->get<bool>() && !rule_is_fixable(*rule)) {
          fail(ErrorCode::kInvalidValue, mutate_pointer,
               "rule " + in_quotes(key) + " has no fix, so mutate cannot be true");
        } else {
          target.mutate = mutate->get<bool>();
        }
      }
    }
  }

  // A list of rule ids, each once, into `rules`.
  void rule_list(const Json& object, const std::string& pointer, std::vector<RuleId>& rules) {
    for_each_string(object, pointer, "rules", [&](std::string name, const std::string& rule_pointer) {
      const std::optional<RuleId> rule = parse_rule_name(name);
      if (!rule) {
        fail(ErrorCode::kUnknownRule, rule_pointer,
             "unknown rule " + in_quotes(name) + "; known rules: " + known_rule_names());
      } else if (std::find(rules.begin(), rules.end(), *rule) == rules.end()) {
        rules.push_back(*rule);
      }
    });
  }

  void parse_overrides(const Json& value, const std::string& pointer, Policy& policy) {
    if (!value.is_array()) {
      wrong_type(pointer, "a list of action overrides", value);
      return;
    }
    for (std::size_t i = 0; i < value.size(); ++i) {
      const std::string element_pointer = append_pointer(pointer, i);
      const Json* object = as_object(&value[i], element_pointer);
      if (object == nullptr) {
        continue;
      }
      ActionOverride entry;
      entry.origin = location(element_pointer);
      reject_unknown(*object, element_pointer,
                     {"namespaces", "namespaceSelector", "selector", "rules", "action"});
      if (auto name = required_string(*object, element_pointer, "action")) {
        if (auto action = parse_action_name(*name)) {
          entry.action = *action;
        } else {
          fail(ErrorCode::kInvalidValue, append_pointer(element_pointer, "action"),
               "unknown action " + in_quotes(*name) + "; expected deny, warn, audit or off");
        }
      }
      rule_list(*object, element_pointer, entry.rules);
      entry.match.include_namespaces = pattern_list(*object, element_pointer, "namespaces");
      if (const Json* selector = optional_object(*object, element_pointer, "selector")) {
        entry.match.selector = parse_selector(*selector, append_pointer(element_pointer, "selector"));
      }
      if (const Json* selector = optional_object(*object, element_pointer, "namespaceSelector")) {
        entry.match.namespace_selector =
            parse_selector(*selector, append_pointer(element_pointer, "namespaceSelector"));
      }
      if (present(*object, "namespaces") == nullptr && present(*object, "selector") == nullptr &&
          present(*object, "namespaceSelector") == nullptr) {
        fail(ErrorCode::kMissingField, element_pointer,
             "an action override needs \"namespaces\", a \"namespaceSelector\" or a "
             "\"selector\" (else it would just be the rules' own action)");
      }
      policy.action_overrides.push_back(std::move(entry));
    }
  }

  void parse_exceptions(const Json& value, const std::string& pointer, Policy& policy) {
    if (!value.is_array()) {
      wrong_type(pointer, "a list of exceptions", value);
      return;
    }
    std::map<std::string, int, std::less<>> first_lines;
    for (std::size_t i = 0; i < value.size(); ++i) {
      const std::string element_pointer = append_pointer(pointer, i);
      const Json* object = as_object(&value[i], element_pointer);
      if (object == nullptr) {
        continue;
      }
      PolicyException exception;
      exception.origin = location(element_pointer);
      reject_unknown(*object, element_pointer, {"name", "reason", "rules", "match"});
      if (auto name = required_string(*object, element_pointer, "name")) {
        const std::string name_pointer = append_pointer(element_pointer, "name");
        if (check_name(*name, name_pointer, "exception")) {
          const int line = lines_.line_of(name_pointer);
          auto [it, inserted] = first_lines.emplace(*name, line);
          if (!inserted) {
            fail(ErrorCode::kInvalidValue, name_pointer,
                 "duplicate exception name " + in_quotes(*name) + " (first used at line " +
                     std::to_string(it->second) + ")");
          }
          exception.name = std::move(*name);
        }
      }
      if (auto reason = required_string(*object, element_pointer, "reason")) {
        if (reason->find_first_not_of(" \t\r\n") == std::string::npos) {
          fail(ErrorCode::kInvalidValue, append_pointer(element_pointer, "reason"),
               "an exception needs a non-empty reason saying why it is accepted");
        }
        exception.reason = std::move(*reason);
      }
      rule_list(*object, element_pointer, exception.rules);
      if (const Json* match = required_object(*object, element_pointer, "match")) {
        exception.match = parse_match(*match, append_pointer(element_pointer, "match"));
      }
      policy.exceptions.push_back(std::move(exception));
    }
  }

  const LineIndex& lines_;
  const std::string& file_;
  const Policy* inherited_;
  std::vector<Error> errors_;
};

}  // namespace

RuleSettings default_rule_settings(RuleId rule) {
  const RuleInfo& info = rule_info(rule);
  return RuleSettings{info.default_action, info.fixable, std::nullopt};
}

bool is_qualified_attribute_name(std::string_view name) {
  const std::size_t slash = name.find('/');
  if (slash == std::string_view::npos) {
    return false;
  }
  return is_dns_subdomain(name.substr(0, slash), 63) && is_c_identifier(name.substr(slash + 1), 32);
}

PolicyParseOutcome parse_policy(const Json& document, const LineIndex& lines,
                                const std::string& file_name, const Policy* inherited) {
  return DocumentParser(lines, file_name, inherited).parse(document);
}

}  // namespace topoguard::policy
