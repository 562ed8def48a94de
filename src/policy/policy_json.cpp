#include "topoguard/policy/policy_json.h"

#include "policy_parser.h"

namespace topoguard::policy {

namespace {

constexpr std::array<std::string_view, 4> kOperatorNames{"In", "NotIn", "Exists",
                                                         "DoesNotExist"};

Json pattern_texts(const PatternList& list) {
  Json texts = Json::array();
  for (const Pattern& pattern : list.patterns()) {
    texts.push_back(pattern.text());
  }
  return texts;
}

Json rule_names(const std::vector<RuleId>& rules) {
  Json names = Json::array();
  for (RuleId rule : rules) {
    names.push_back(rule_name(rule));
  }
  return names;
}

Json recognizer_to_json(const DeviceRecognizer& recognizer) {
  Json json = Json::object();
  json["deviceClassNames"] = pattern_texts(recognizer.device_class_names);
  json["drivers"] = pattern_texts(recognizer.drivers);
  json["extendedResources"] = pattern_texts(recognizer.extended_resources);
  return json;
}

}  // namespace

Json selector_to_json(const LabelSelector& selector) {
  Json json = Json::object();
  if (!selector.match_labels.empty()) {
    json["matchLabels"] = Json::object();
    for (const auto& [key, value] : selector.match_labels) {
      json["matchLabels"][key] = value;
    }
  }
  if (!selector.match_expressions.empty()) {
    json["matchExpressions"] = Json::array();
    for (const LabelRequirement& requirement : selector.match_expressions) {
      Json entry = Json::object();
      entry["key"] = requirement.key;
      entry["operator"] = kOperatorNames[static_cast<std::size_t>(requirement.op)];
      if (!requirement.values.empty()) {
        entry["values"] = requirement.values;
      }
      json["matchExpressions"].push_back(std::move(entry));
    }
  }
  return json;
}

Json match_to_json(const Match& match) {
  Json json = Json::object();
  if (!match.include_namespaces.empty() || !match.exclude_namespaces.empty()) {
    json["namespaces"] = Json::object();
    if (!match.include_namespaces.empty()) {
      json["namespaces"]["include"] = pattern_texts(match.include_namespaces);
    }
    if (!match.exclude_namespaces.empty()) {
      json["namespaces"]["exclude"] = pattern_texts(match.exclude_namespaces);
    }
  }
  if (match.namespace_selector) {
    json["namespaceSelector"] = selector_to_json(*match.namespace_selector);
  }
  if (match.selector) {
    json["selector"] = selector_to_json(*match.selector);
  }
  if (!match.kinds.empty()) {
    json["kinds"] = match.kinds;
  }
  if (!match.names.empty()) {
    json["names"] = pattern_texts(match.names);
  }
  return json;
}

Json policy_to_json(const Policy& policy) {
  Json spec = Json::object();
  spec["match"] = match_to_json(policy.match);
  spec["devices"] = Json::object();
  spec["devices"]["gpu"] = recognizer_to_json(policy.gpu);
  spec["devices"]["nic"] = recognizer_to_json(policy.nic);
  spec["alignment"] = Json::object();
  spec["alignment"]["attribute"] = policy.alignment_attribute;
  spec["alignment"]["acceptedAttributes"] = policy.accepted_attributes;
  spec["alignment"]["numaAttributes"] = pattern_texts(policy.numa_attributes);
  spec["rules"] = Json::object();
  for (RuleId rule : kAllRules) {
    const RuleSettings& settings = policy.rule(rule);
    Json entry = Json::object();
    entry["action"] = action_name(settings.action);
    if (rule_is_fixable(rule)) {
      entry["mutate"] = settings.mutate;
    }
    if (settings.when_alignment_impossible) {
      entry["whenAlignmentImpossible"] = action_name(*settings.when_alignment_impossible);
    }
    spec["rules"][std::string(rule_name(rule))] = std::move(entry);
  }
  spec["actionOverrides"] = Json::array();
  for (const ActionOverride& entry : policy.action_overrides) {
    Json json = Json::object();
    if (!entry.match.include_namespaces.empty()) {
      json["namespaces"] = pattern_texts(entry.match.include_namespaces);
    }
    if (entry.match.namespace_selector) {
      json["namespaceSelector"] = selector_to_json(*entry.match.namespace_selector);
    }
    if (entry.match.selector) {
      json["selector"] = selector_to_json(*entry.match.selector);
    }
    if (!entry.rules.empty()) {
      json["rules"] = rule_names(entry.rules);
    }
    json["action"] = action_name(entry.action);
    spec["actionOverrides"].push_back(std::move(json));
  }
  spec["exceptions"] = Json::array();
  for (const PolicyException& exception : policy.exceptions) {
    Json entry = Json::object();
    entry["name"] = exception.name;
    entry["reason"] = exception.reason;
    if (!exception.rules.empty()) {
      entry["rules"] = rule_names(exception.rules);
    }
    entry["match"] = match_to_json(exception.match);
    spec["exceptions"].push_back(std::move(entry));
  }
  Json document = Json::object();
  document["apiVersion"] = kPolicyApiVersion;
  document["kind"] = kPolicyKind;
  document["metadata"] = Json::object();
  document["metadata"]["name"] = policy.name;
  document["spec"] = std::move(spec);
  return document;
}

}  // namespace topoguard::policy
