#include "claim_cel.h"

#include <algorithm>
#include <array>
#include <optional>
#include <string_view>

namespace topoguard::native {

namespace {

// Which strings a list of policy patterns accepts: literal ones compared, the others matched
// with one anchored RE2 alternation (CEL's `matches` is RE2 and unanchored).
struct NameTest {
  std::vector<std::string> literals;
  std::vector<std::string> regexes;

  [[nodiscard]] bool empty() const { return literals.empty() && regexes.empty(); }
};

// A literal that another pattern of the list matches is left out: the expressions stay short.
NameTest name_test(const policy::PatternList& patterns) {
  NameTest test;
  for (const policy::Pattern& pattern : patterns.patterns()) {
    if (!pattern.literal()) {
      test.regexes.push_back(pattern.text());
      continue;
    }
    const bool subsumed = std::any_of(
        patterns.patterns().begin(), patterns.patterns().end(), [&](const policy::Pattern& other) {
          return !other.literal() && other.full_match(*pattern.literal());
        });
    if (!subsumed) {
      test.literals.push_back(*pattern.literal());
    }
  }
  return test;
}

std::string cel_list(const std::vector<std::string>& items) {
  std::string text = "[";
  for (const std::string& item : items) {
    text += (text.size() > 1 ? ", " : "") + cel_quote(item);
  }
  return text + "]";
}

std::string anchored(const std::vector<std::string>& regexes) {
  std::string text = "^(?:";
  for (std::size_t i = 0; i < regexes.size(); ++i) {
    text += (i > 0 ? "|(?:" : "(?:") + regexes[i] + ")";
  }
  return text + ")$";
}

// `subject` (a string-valued CEL expression) is accepted by `test`.
std::string accepts(const std::string& subject, const NameTest& test) {
  std::vector<std::string> parts;
  if (!test.literals.empty()) {
    parts.push_back(subject + " in " + cel_list(test.literals));
  }
  if (!test.regexes.empty()) {
    parts.push_back(subject + ".matches(" + cel_quote(anchored(test.regexes)) + ")");
  }
  if (parts.empty()) {
    return "false";
  }
  return parts.size() == 1 ? parts[0] : "(" + parts[0] + " || " + parts[1] + ")";
}

// A NUMA attribute pattern split at its one top-level '/' into domain and name patterns; none
// when the pattern has an alternation or no such '/' (then nothing is known of the name).
std::optional<std::pair<std::string, std::string>> split_qualified(const std::string& pattern) {
  int depth = 0;
  bool in_class = false;
  std::optional<std::size_t> slash;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\') {
      ++i;
      continue;
    }
    if (in_class) {
      in_class = c != ']';
      continue;
    }
    if (c == '[') {
      in_class = true;
    } else if (c == '(') {
      ++depth;
    } else if (c == ')') {
      --depth;
    } else if (depth == 0 && c == '|') {
      return std::nullopt;
    } else if (depth == 0 && c == '/') {
      if (slash) {
        return std::nullopt;
      }
      slash = i;
    }
  }
  if (!slash) {
    return std::nullopt;
  }
  return std::pair(pattern.substr(0, *slash), pattern.substr(*slash + 1));
}

bool is_word(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// Text every read of an attribute whose name matches `name_pattern` must contain: its leading
// literal characters (without one a quantifier makes optional). Empty when there are none.
std::string witness(const std::string& name_pattern) {
  std::size_t end = 0;
  while (end < name_pattern.size() && is_word(name_pattern[end])) {
    ++end;
  }
  if (end < name_pattern.size() && end > 0 &&
      (name_pattern[end] == '?' || name_pattern[end] == '*' || name_pattern[end] == '{')) {
    --end;
  }
  return name_pattern.substr(0, end);
}

// `pattern` with every unescaped '.' outside a class narrowed to `any`; none when the pattern
// has a negated class or a class escape, whose characters could take in quotes.
std::optional<std::string> narrowed(const std::string& pattern, const std::string& any) {
  std::string text;
  bool in_class = false;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      const char next = pattern[i + 1];
      if (std::string_view("WSDpPCsdw").find(next) != std::string_view::npos) {
        return std::nullopt;
      }
      text += pattern.substr(i, 2);
      ++i;
      continue;
    }
    if (!in_class && c == '[') {
      if (i + 1 < pattern.size() && pattern[i + 1] == '^') {
        return std::nullopt;
      }
      in_class = true;
    } else if (in_class && c == ']') {
      in_class = false;
    }
    text += (!in_class && c == '.') ? any : std::string(1, c);
  }
  return text;
}

constexpr const char* kStringLiteral = R"re([rR]?(?:"""[^"]*"""|'''[^']*'''|"[^"]*"|'[^']*'))re";

}  // namespace

std::string cel_quote(std::string_view text) {
  std::string quoted = "'";
  for (const char c : text) {
    if (c == '\\' || c == '\'') {
      quoted += '\\';
    }
    if (c == '\n') {
      quoted += "\\n";
      continue;
    }
    quoted += c;
  }
  return quoted + "'";
}

ClaimCel claim_cel(const policy::Policy& policy,
                   const std::vector<DeviceClassRoles>& device_classes) {
  ClaimCel out;
  NameTest gpu_classes = name_test(policy.gpu.device_class_names);
  NameTest nic_classes = name_test(policy.nic.device_class_names);
  for (const DeviceClassRoles& device_class : device_classes) {
    if (device_class.gpu) {
      gpu_classes.literals.push_back(device_class.name);
    }
    if (device_class.nic) {
      nic_classes.literals.push_back(device_class.name);
    }
  }
  std::vector<std::string> alignment{policy.alignment_attribute};
  alignment.insert(alignment.end(), policy.accepted_attributes.begin(),
                   policy.accepted_attributes.end());
  const NameTest numa = name_test(policy.numa_attributes);

  // Pins: selectors that surely read a NUMA attribute (one comparison of it with a number), and
  // selectors that may (they hold the text every such read holds).
  std::vector<std::string> sure_pins;
  std::vector<std::string> witnesses;
  bool every_selector_may_pin = false;
  for (const policy::Pattern& pattern : policy.numa_attributes.patterns()) {
    if (pattern.literal() && std::find(numa.literals.begin(), numa.literals.end(),
                                       *pattern.literal()) == numa.literals.end()) {
      continue;  // another pattern matches it
    }
    const auto parts = split_qualified(pattern.text());
    if (!parts) {
      every_selector_may_pin = true;
      out.notes.push_back("NUMA attribute pattern '" + pattern.text() +
                          "' has no domain/name form: any selector may pin a NUMA node");
      continue;
    }
    const std::string found = witness(parts->second);
    if (found.empty()) {
      every_selector_may_pin = true;
    } else {
      witnesses.push_back(found);
    }
    const auto domain = narrowed(parts->first, R"([^"\\])");
    const auto field = narrowed(parts->second, "[A-Za-z0-9_]");
    const auto key = narrowed(parts->second, R"([^"\\])");
    if (domain && field && key) {
      sure_pins.push_back(R"re(device\.attributes\["(?:)re" + *domain + R"re()"\](?:\.(?:)re" +
                          *field + R"re()|\["(?:)re" + *key + R"re()"\]))re");
    }
  }
  std::sort(witnesses.begin(), witnesses.end());
  witnesses.erase(std::unique(witnesses.begin(), witnesses.end()), witnesses.end());

  const std::string choices =
      "(has(r.firstAvailable) ? r.firstAvailable : (has(r.exactly) ? [r.exactly] : []))";
  const auto role_of = [](const NameTest& classes, const std::string& choice) {
    return "(has(" + choice + ".deviceClassName) && " +
           accepts(choice + ".deviceClassName", classes) + ")";
  };
  const std::string is_gpu = role_of(gpu_classes, "c");
  const std::string is_nic = role_of(nic_classes, "c");
  const std::string empty_list = "(!has(k.requests) || size(k.requests) == 0)";
  const std::string multi =
      "((has(c.allocationMode) && c.allocationMode == 'All') || (has(c.count) && c.count > 1))";
  std::string indexes = "[";
  for (int i = 0; i < 32; ++i) {
    indexes += (i > 0 ? ", " : "") + std::to_string(i);
  }
  indexes += "]";

  auto& vars = out.variables;
  vars.emplace_back("devices",
                    "object.kind == 'ResourceClaimTemplate' ? (has(object.spec.spec) && "
                    "has(object.spec.spec.devices) ? object.spec.spec.devices : {}) : "
                    "(has(object.spec.devices) ? object.spec.devices : {})");
  vars.emplace_back("requests",
                    "has(variables.devices.requests) ? variables.devices.requests : []");
  vars.emplace_back("constraints",
                    "has(variables.devices.constraints) ? variables.devices.constraints : []");
  // Per constraint (by index): its matchAttribute ('' for none) and its entries.
  vars.emplace_back("attributes",
                    "variables.constraints.map(k, has(k.matchAttribute) ? "
                    "string(k.matchAttribute) : '')");
  vars.emplace_back("entries", "variables.constraints.map(k, has(k.requests) ? k.requests : [])");
  // The requests of a role, and (by the same index) their subrequests of that role as
  // constraint entries name them.
  const auto role_requests = [&](const std::string& is_role) {
    return "variables.requests.filter(r, " + choices + ".exists(c, " + is_role + "))";
  };
  vars.emplace_back("gpuRequests", role_requests(is_gpu));
  vars.emplace_back("nicRequests", role_requests(is_nic));
  const auto subs = [&](const std::string& role, const std::string& is_role) {
    return "variables." + role +
           "Requests.map(r, has(r.firstAvailable) ? r.firstAvailable.filter(c, " + is_role +
           ").map(c, string(r.name) + '/' + string(c.name)) : [])";
  };
  vars.emplace_back("gpuNames", "variables.gpuRequests.map(r, string(r.name))");
  vars.emplace_back("nicNames", "variables.nicRequests.map(r, string(r.name))");
  vars.emplace_back("gpuSubs", subs("gpu", is_gpu));
  vars.emplace_back("nicSubs", subs("nic", is_nic));
  // The indexes of those lists and of the constraints, so that loops by index run over what
  // is there.
  vars.emplace_back("gpuIndexes", indexes + ".filter(i, i < size(variables.gpuNames))");
  vars.emplace_back("nicIndexes", indexes + ".filter(i, i < size(variables.nicNames))");
  vars.emplace_back("constraintIndexes", indexes + ".filter(j, j < size(variables.constraints))");
  // Roles may also come from selectors that read the driver (as the engine evaluates them):
  // then the compiled policy decides nothing about ties.
  const std::string max_selectors = std::to_string(kMaxSelectorsExamined);
  const std::string max_selector = std::to_string(kMaxSelectorLength);
  vars.emplace_back(
      "rolesFromSelectors",
      "variables.requests.exists(r, " + choices +
          ".exists(c, has(c.selectors) && (size(c.selectors) > " + max_selectors +
          " || c.selectors.exists(s, !has(s.cel) || size(s.cel.expression) > " + max_selector +
          " || s.cel.expression.contains('driver') || s.cel.expression.contains('\\\\') || "
          "s.cel.expression.matches('device\\\\s*($|[^\\\\s.])')))))");
  vars.emplace_back("derives", "variables.requests.exists(r, " + choices +
                                   ".exists(c, has(c.derivedAttributes) && "
                                   "size(c.derivedAttributes) > 0))");

  // NUMA pins: the requests of a role with a choice of that role whose selectors read a NUMA
  // attribute, surely or maybe.
  std::string sure_pin = "false";
  if (!sure_pins.empty()) {
    std::string alternatives;
    for (const std::string& pin : sure_pins) {
      alternatives += (alternatives.empty() ? "" : "|") + pin;
    }
    sure_pin = "(has(c.selectors) && size(c.selectors) <= " + max_selectors +
               " && c.selectors.exists(s, size(s.cel.expression) <= " +
               std::to_string(kMaxPinSelectorLength) + " && s.cel.expression.matches(" +
               cel_quote(R"re(^\s*(?:)re" + alternatives +
                         R"re()\s*(?:==|!=|<=|>=|<|>)\s*-?[0-9]+\s*$)re") +
               ")))";
  }
  std::string may_pin_text = "true";
  if (!every_selector_may_pin) {
    may_pin_text = "s.cel.expression.contains('\\\\')";
    for (const std::string& text : witnesses) {
      may_pin_text += " || s.cel.expression.contains(" + cel_quote(text) + ")";
    }
  }
  const std::string maybe_pin = "(has(c.selectors) && (size(c.selectors) > " + max_selectors +
                                " || c.selectors.exists(s, size(s.cel.expression) > " +
                                max_selector + " || " + may_pin_text + ")))";
  const auto pinned = [&](const std::string& is_role, const std::string& pin) {
    return "variables.requests.filter(r, " + choices + ".exists(c, " + is_role + " && " + pin +
           ")).map(r, string(r.name))";
  };
  vars.emplace_back("gpuPinSure", pinned(is_gpu, sure_pin));
  vars.emplace_back("nicPinSure", pinned(is_nic, sure_pin));
  vars.emplace_back("gpuPinMaybe", pinned(is_gpu, maybe_pin));
  vars.emplace_back("nicPinMaybe", pinned(is_nic, maybe_pin));

  // Derived attributes (KEP-6080), classified once each: what the engine's classify() reads of
  // them. [name, sure/maybe a read of its own name, sure/maybe a read of an alignment attribute,
  // sure/maybe a read of an alignment or NUMA attribute, a topology name] as 'y'/'n'. "Sure"
  // only for the canonical texts, "maybe" for any text the engine could read as such a read.
  const std::string max_deriving = std::to_string(kMaxDerivingRequests);
  const std::string max_derived = std::to_string(kMaxDerivedExamined);
  const std::string max_derived_length = std::to_string(kMaxDerivedExpressionLength);
  std::vector<std::string> literal_names = alignment;
  for (const policy::Pattern& pattern : policy.numa_attributes.patterns()) {
    if (pattern.literal()) {
      literal_names.push_back(*pattern.literal());
    }
  }
  const auto canonical = [](const std::string& name) {
    const std::size_t slash = name.rfind('/');
    const std::string domain = slash == std::string::npos ? "" : name.substr(0, slash);
    const std::string field = slash == std::string::npos ? name : name.substr(slash + 1);
    return std::vector<std::string>{"device.attributes[\"" + domain + "\"]." + field,
                                    "device.attributes[\"" + domain + "\"][\"" + field + "\"]"};
  };
  const auto text_of = [](const std::string& name) {
    const std::size_t slash = name.rfind('/');
    const std::string domain = slash == std::string::npos ? "" : name.substr(0, slash);
    const std::string field = slash == std::string::npos ? name : name.substr(slash + 1);
    return "(d.expression.contains(" + cel_quote(domain) + ") && d.expression.contains(" +
           cel_quote(field) + "))";
  };
  std::vector<std::string> alignment_reads;
  std::string alignment_text = "false";
  for (const std::string& name : alignment) {
    for (std::string& text : canonical(name)) {
      alignment_reads.push_back(std::move(text));
    }
    alignment_text += " || " + text_of(name);
  }
  std::string self_sure = "false";
  std::string self_text = "!(d.name in " + cel_list(literal_names) + ")";
  for (const std::string& name : literal_names) {
    self_sure += " || (d.name == " + cel_quote(name) + " && d.expression in " +
                 cel_list(canonical(name)) + ")";
    self_text += " || (d.name == " + cel_quote(name) + " && " + text_of(name) + ")";
  }
  std::string numa_text = every_selector_may_pin ? "true" : "false";
  for (const std::string& text : witnesses) {
    numa_text += " || d.expression.contains(" + cel_quote(text) + ")";
  }
  std::string sure_numa_read = "false";
  if (!sure_pins.empty()) {
    std::string alternatives;
    for (const std::string& pin : sure_pins) {
      alternatives += (alternatives.empty() ? "" : "|") + pin;
    }
    sure_numa_read = "d.expression.matches(" + cel_quote("^(?:" + alternatives + ")$") + ")";
  }
  const std::string generic_read = std::string(R"re(^[\s(]*device\s*\.\s*attributes\s*\[\s*)re") +
                                   kStringLiteral +
                                   R"re(\s*\]\s*(?:\.\s*[A-Za-z_][A-Za-z0-9_]*|\[\s*)re" +
                                   kStringLiteral + R"re(\s*\])[\s)]*$)re";
  // Texts the engine may read as an attribute read: the generic form, or any it cannot be told
  // from here (escapes, comments, too long to look at).
  const std::string opaque = "(size(d.expression) > " + max_derived_length +
                             " || d.expression.contains('\\\\') || d.expression.contains('//'))";
  const std::string read_form = "(size(d.expression) <= " + max_derived_length +
                                " && d.expression.matches(" + cel_quote(generic_read) + "))";
  const std::string topology_name =
      "(d.name in " + cel_list(literal_names) +
      (numa.regexes.empty() ? std::string()
                            : " || d.name.matches(" + cel_quote(anchored(numa.regexes)) + ")") +
      ")";
  const auto flag = [](const std::string& condition) { return "(" + condition + " ? 'y' : 'n')"; };
  const std::string sure_alignment = "d.expression in " + cel_list(alignment_reads);
  const std::string classes =
      "[string(d.name), " + flag(self_sure) + ", " +
      flag(opaque + " || (" + read_form + " && (" + self_text + "))") + ", " +
      flag(sure_alignment) + ", " +
      flag(opaque + " || (" + read_form + " && (" + alignment_text + "))") + ", " +
      flag(sure_alignment + " || (size(d.expression) <= " + max_derived_length + " && " +
           sure_numa_read + ")") +
      ", " +
      flag(opaque + " || (" + read_form + " && (" + alignment_text + " || " + numa_text + "))") +
      ", " + flag(topology_name) + "]";
  vars.emplace_back("derivingRequests", "variables.requests.filter(r, " + choices +
                                            ".exists(c, has(c.derivedAttributes) && "
                                            "size(c.derivedAttributes) > 0))");
  vars.emplace_back(
      "derivedChoiceLists",
      "size(variables.derivingRequests) <= " + max_deriving +
          " ? variables.derivingRequests.map(r, " + choices +
          ".filter(c, has(c.derivedAttributes)).map(c, {'key': dyn(has(r.firstAvailable) ? "
          "string(r.name) + '/' + string(c.name) : string(r.name)), 'request': "
          "dyn(string(r.name)), 'classes': dyn(size(c.derivedAttributes) <= " +
          max_derived + " ? c.derivedAttributes.map(d, " + classes + ") : [])})) : []");
  const auto flatten = [](const std::string& lists, int count) {
    std::string text;
    for (int i = 0; i < count; ++i) {
      text += (i > 0 ? " + " : "") + std::string("(size(") + lists + ") > " + std::to_string(i) +
              " ? " + lists + "[" + std::to_string(i) + "] : [])";
    }
    return text;
  };
  vars.emplace_back("derivedChoices",
                    flatten("variables.derivedChoiceLists", kMaxDerivingRequests));
  // Claims with derived attributes are read exactly when small: within the limits above, at
  // most kMaxDerivingClaimRequests requests and as many constraints.
  const std::string small = std::to_string(kMaxDerivingClaimRequests);
  vars.emplace_back(
      "derivedExact",
      "size(variables.requests) <= " + small + " && size(variables.constraints) <= " + small +
          " && size(variables.derivingRequests) <= " + max_deriving +
          " && variables.derivingRequests.all(r, " + choices +
          ".all(c, !has(c.derivedAttributes) || size(c.derivedAttributes) <= " + max_derived +
          "))");
  vars.emplace_back(
      "exact", "!variables.rolesFromSelectors && (!variables.derives || variables.derivedExact)");
  // Every choice as [key, request] (for the first kMaxDerivingClaimRequests requests: only read
  // when the claim is that small).
  vars.emplace_back("choiceKeyLists",
                    "variables.requests.map(r, " + choices +
                        ".map(c, has(r.firstAvailable) ? [string(r.name) + '/' + string(c.name), "
                        "string(r.name)] : [string(r.name), string(r.name)]))");
  vars.emplace_back("choiceKeys", flatten("variables.choiceKeyLists", kMaxDerivingClaimRequests));

  // Per constraint: what it ties by, as [may be alignment, is alignment, may be NUMA, is NUMA]
  // (engine: ClaimAnalyzer::classify). A constraint on an alignment (NUMA) attribute ties by it
  // unless a choice it binds derives that attribute as anything but a read of it; one on another
  // name only when every choice it binds derives the name as a read of an alignment (NUMA)
  // attribute.
  const std::string binds_choice =
      "(" + empty_list + " || dc.request in k.requests || dc.key in k.requests)";
  vars.emplace_back("namedDerived",
                    "variables.constraints.map(k, has(k.matchAttribute) ? "
                    "variables.derivedChoices.filter(dc, " +
                        binds_choice +
                        ").map(dc, dc.classes.filter(x, x[0] == k.matchAttribute))"
                        ".filter(l, size(l) > 0).map(l, l[0]) : [])");
  vars.emplace_back("boundChoices",
                    "variables.constraints.map(k, size(variables.choiceKeys.filter(q, " +
                        empty_list + " || q[1] in k.requests || q[0] in k.requests)))");
  const std::string bound_attribute = "variables.attributes[j]";
  const std::string is_alignment_name = "(" + bound_attribute + " in " + cel_list(alignment) + ")";
  const std::string is_numa_name = "(" + bound_attribute + " != '' && !(" + bound_attribute +
                                   " in " + cel_list(alignment) + ") && " +
                                   accepts(bound_attribute, numa) + ")";
  const std::string named = "variables.namedDerived[j]";
  const std::string every_derives =
      "(" + bound_attribute + " != '' && !" + is_alignment_name + " && !" + is_numa_name +
      " && variables.boundChoices[j] > 0 && size(" + named + ") == variables.boundChoices[j])";
  const auto all_say = [&](int column) {
    return named + ".all(x, x[" + std::to_string(column) + "] == 'y')";
  };
  const auto none_forged = [&](int column) {
    return "!" + named + ".exists(x, x[" + std::to_string(column) + "] == 'n')";
  };
  const std::string may_alignment = "(" + is_alignment_name + " ? " + none_forged(2) + " : " +
                                    every_derives + " && " + all_say(4) + ")";
  const std::string is_alignment = "(" + is_alignment_name + " ? " + none_forged(1) + " : " +
                                   every_derives + " && " + all_say(3) + ")";
  const std::string may_numa = "(" + is_numa_name + " ? " + none_forged(2) + " : " + every_derives +
                               " && " + all_say(6) + " && !" + all_say(3) + ")";
  const std::string is_numa = "(" + is_numa_name + " ? " + none_forged(1) + " : " + every_derives +
                              " && " + all_say(5) + " && !" + all_say(4) + ")";
  vars.emplace_back("ties", "variables.constraintIndexes.map(j, [" + flag(may_alignment) + ", " +
                                flag(is_alignment) + ", " + flag(may_numa) + ", " + flag(is_numa) +
                                "])");

  // Per constraint, the indexes of the GPU (NIC) requests it binds by that role: all for an
  // empty list, a request named whole, or one whose subrequests of the role are all named.
  const auto cover = [&](const std::string& role) {
    const std::string names = "variables." + role + "Names";
    const std::string role_subs = "variables." + role + "Subs";
    return "variables.constraints.map(k, variables." + role + "Indexes.filter(i, " + empty_list +
           " || " + names + "[i] in k.requests || (size(" + role_subs + "[i]) > 0 && " + role_subs +
           "[i].all(x, x in k.requests))))";
  };
  vars.emplace_back("gpuBound", cover("gpu"));
  vars.emplace_back("nicBound", cover("nic"));
  // The constraints that tie a GPU to a NIC by a kind (ties column: 0 may be alignment, 1 is
  // alignment, 2 may be NUMA, 3 is NUMA): they bind requests of both roles.
  const std::array<const char*, 4> tie_sets{"mayAlign", "isAlign", "mayNuma", "isNuma"};
  for (std::size_t column = 0; column < tie_sets.size(); ++column) {
    vars.emplace_back(tie_sets[column], "variables.constraintIndexes.filter(j, variables.ties[j][" +
                                            std::to_string(column) +
                                            "] == 'y' && size(variables.gpuBound[j]) > 0 && "
                                            "size(variables.nicBound[j]) > 0)");
  }
  const auto tied = [&](const std::string& mine, int column) {
    return "variables." + std::string(tie_sets[static_cast<std::size_t>(column)]) +
           ".exists(j, i in variables." + mine + "[j])";
  };
  const auto untied = [&](const std::string& role, int column) {
    return "variables." + role + "Indexes.filter(i, !" + tied(role + "Bound", column) + ")";
  };
  // Fewest untied (by every constraint that may tie) and most (by those that surely do).
  vars.emplace_back("untiedGpusFewest", untied("gpu", 0));
  vars.emplace_back("untiedNicsFewest", untied("nic", 0));
  vars.emplace_back("untiedGpusMost", untied("gpu", 1));
  vars.emplace_back("untiedNicsMost", untied("nic", 1));
  vars.emplace_back("untiedGpus", "variables.untiedGpusFewest.map(i, variables.gpuNames[i])");
  vars.emplace_back("untiedNics", "variables.untiedNicsFewest.map(i, variables.nicNames[i])");
  vars.emplace_back("misaligned",
                    "size(variables.gpuNames) > 0 && size(variables.nicNames) > 0 && "
                    "size(variables.untiedGpusFewest) + size(variables.untiedNicsFewest) > 0");
  // Whether every untied request is related to the other role by NUMA only (engine:
  // check_alignment): surely (fewest relations, most untied) or maybe (the reverse).
  const auto only_numa = [&](const std::string& how, const std::string& untied_set, int column) {
    return "variables.untiedGpus" + untied_set + ".all(i, size(variables.nicPin" + how +
           ") > 0 || variables.gpuNames[i] in variables.gpuPin" + how + " || " +
           tied("gpuBound", column) + ") && variables.untiedNics" + untied_set +
           ".all(i, size(variables.gpuPin" + how +
           ") > 0 || variables.nicNames[i] in "
           "variables.nicPin" +
           how + " || " + tied("nicBound", column) + ")";
  };
  vars.emplace_back("onlyNumaSure", only_numa("Sure", "Most", 3));
  vars.emplace_back("onlyNumaMaybe", only_numa("Maybe", "Fewest", 2));
  out.only_numa_sure = "variables.onlyNumaSure";
  out.only_numa_maybe = "variables.onlyNumaMaybe";
  out.missing.reported = "variables.exact && variables.misaligned && !variables.onlyNumaMaybe";
  out.numa_only.reported = "variables.exact && variables.misaligned && variables.onlyNumaSure";

  // Multi-device choices a constraint that surely ties by alignment binds: [name, name/sub, ...]
  // of the requests with such a choice (the request itself when it has no subrequests).
  vars.emplace_back("multiKeys",
                    "variables.requests.filter(r, " + choices + ".exists(c, " + multi +
                        ")).map(r, has(r.firstAvailable) ? [string(r.name)] + "
                        "r.firstAvailable.filter(c, " +
                        multi +
                        ").map(c, string(r.name) + '/' + string(c.name)) : [string(r.name)])");
  vars.emplace_back("multiBound",
                    "variables.constraintIndexes.filter(j, variables.ties[j][1] == 'y' "
                    "&& variables.multiKeys.exists(q, size(variables.entries[j]) == 0 || "
                    "q.exists(x, x in variables.entries[j]))).map(j, "
                    "variables.attributes[j])");
  out.multi_device.reported =
      "(!variables.derives || variables.derivedExact) && size(variables.multiBound) > 0";

  // Derived attributes named like an alignment or NUMA attribute on a choice some constraint
  // binds, surely not a read of that attribute (engine: check_derived_attributes).
  vars.emplace_back("overriddenAttributes",
                    "variables.derivedChoices.filter(dc, dc.classes.exists(x, x[7] == 'y' && "
                    "x[2] == 'n') && variables.constraints.exists(k, " +
                        binds_choice + ")).map(dc, string(dc.key))");
  out.overridden.reported = "size(variables.overriddenAttributes) > 0";

  // The fix's pairs exist as the engine makes them (claim_alignment.cpp fix_pairs), and the
  // constraints they add keep the claim within the API's 32.
  vars.emplace_back("multiNames", "variables.multiKeys.map(q, q[0])");
  out.fixable =
      "variables.exact && variables.misaligned && size(variables.gpuNames) == "
      "size(variables.nicNames) && size(variables.untiedGpus) == size(variables.untiedNics) && "
      "!variables.untiedGpus.exists(n, n in variables.multiNames) && "
      "!variables.untiedNics.exists(n, n in variables.multiNames) && "
      "!variables.gpuNames.exists(n, n in variables.nicNames) && "
      "size(variables.constraints) + size(variables.untiedGpus) <= 32 && "
      "variables.untiedGpusFewest == variables.untiedGpusMost && "
      "variables.untiedNicsFewest == variables.untiedNicsMost && "
      "!variables.derivedChoices.exists(dc, dc.classes.exists(x, x[0] == " +
      cel_quote(policy.alignment_attribute) + " && x[1] == 'n'))";
  const std::string attribute = cel_quote(policy.alignment_attribute);
  const std::string pair_value =
      "{'requests': dyn([variables.untiedGpus[i], "
      "variables.untiedNics[i]]), 'matchAttribute': dyn(" +
      attribute + ")}";
  const std::string path =
      "(object.kind == 'ResourceClaimTemplate' ? '/spec/spec/devices/constraints' : "
      "'/spec/devices/constraints')";
  const std::string pairs = indexes + ".filter(i, i < size(variables.untiedGpus))";
  out.fix_patch = "has(variables.devices.constraints) ? " + pairs +
                  ".map(i, JSONPatch{op: 'add', path: " + path + " + '/-', value: " + pair_value +
                  "}) : [JSONPatch{op: 'add', path: " + path + ", value: " + pairs + ".map(i, " +
                  pair_value + ")}]";

  // Messages: the engine's for one unambiguous pair, a shorter one otherwise (CEL in the API
  // server has no list join that every CEL runs).
  const auto pair_message = [&](const std::string& state, const std::string& advice) {
    return "size(variables.untiedGpus) == 1 && size(variables.untiedNics) == 1 && "
           "size(variables.gpuNames) == 1 && size(variables.nicNames) == 1 && "
           "size(variables.multiNames) == 0 && variables.untiedGpus[0] != variables.untiedNics[0] "
           "? 'GPU request \"' + variables.untiedGpus[0] + '\" with NIC request \"' + "
           "variables.untiedNics[0] + '\": " +
           state + "; " + advice +
           "constraint {requests: [' + variables.untiedGpus[0] + ', ' + "
           "variables.untiedNics[0] + '], matchAttribute: " +
           policy.alignment_attribute +
           "}' : string(size(variables.untiedGpus)) + ' GPU and ' + "
           "string(size(variables.untiedNics)) + ' NIC requests are " +
           state + "; add one constraint on " + policy.alignment_attribute +
           " per GPU/NIC pair, each naming one GPU and one NIC request'";
  };
  out.missing.message = pair_message("not tied to one PCIe root", "add ");
  out.numa_only.message = pair_message("aligned only by NUMA node, not to one PCIe root",
                                       "keep the NUMA constraint or selectors and add ");
  out.multi_device.message =
      "'constraint on ' + variables.multiBound[0] + ' covers a request for several devices: all "
      "their devices must share one PCIe root, so on typical servers the claim stays Pending; "
      "use count-1 requests and one constraint per GPU/NIC pair'";
  out.overridden.message =
      "'request ' + variables.overriddenAttributes[0] + ' derives its own alignment or NUMA "
      "attribute: a constraint on it then compares that value instead of the attribute the "
      "driver publishes, so it no longer keeps devices on one PCIe root or NUMA node. Remove the "
      "derived attribute, or give it a name of its own'";
  return out;
}

}  // namespace topoguard::native
