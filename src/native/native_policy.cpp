#include "topoguard/native/native_policy.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <optional>
#include <set>

#include "cel_cost.h"
#include "claim_cel.h"
#include "topoguard/k8s/kinds.h"
#include "topoguard/policy/policy_json.h"

namespace topoguard::native {

namespace {

using policy::Action;
using policy::RuleId;

constexpr std::string_view kVapGroupVersion = "admissionregistration.k8s.io/v1";

// Kubernetes 1.37.2 cannot run a MutatingAdmissionPolicy on a claim sent as v1beta1/v1beta2
// (matchPolicy Equivalent: the patched v1 object does not convert back, and failurePolicy Ignore
// skips the policy), so the fix runs only on claims sent as v1. `request.requestKind` is the
// version the client sent; `request.kind` the matched v1 (apiserver admission/plugin/cel
// CreateAdmissionRequest).
constexpr std::string_view kSentAsV1 = "request.requestKind.version == 'v1'";
// Whether the MutatingAdmissionPolicy adds constraints to this claim (the webhook's /mutate).
constexpr std::string_view kAddsConstraints = "addsConstraints";
// A claim sent in a beta version that the fix would change: the validating policies see it
// unpatched, as the webhook never would, so they leave it to the webhook.
constexpr std::string_view kFixSkipped = "fixSkippedForBetaVersion";

// The rules a claim's own spec decides, which CEL over the object can decide too.
constexpr std::array<RuleId, 4> kCompiledRules{
    RuleId::kMissingPcieAlignment, RuleId::kNumaOnlyAlignment, RuleId::kMultiDeviceAlignment,
    RuleId::kOverriddenAlignmentAttribute};

// Maximum sizes of a resource.k8s.io/v1 claim (resource/v1/types.go and validation), as the
// cost bound assumes them.
ShapePtr choice_shape(bool subrequest) {
  std::map<std::string, ShapePtr> fields{
      {"deviceClassName", Shape::string(253)},
      {"selectors",
       Shape::list(32, Shape::object(
                           {{"cel", Shape::object({{"expression", Shape::string(10 * 1024)}})}}))},
      {"allocationMode", Shape::string(16)},
      {"count", Shape::scalar()},
      {"derivedAttributes",
       Shape::list(32, Shape::object({{"name", Shape::string(96)},
                                      {"expression", Shape::string(10 * 1024)}}))}};
  if (subrequest) {
    fields["name"] = Shape::string(63);
  }
  return Shape::object(std::move(fields));
}

ShapePtr devices_shape() {
  const ShapePtr request = Shape::object({{"name", Shape::string(63)},
                                          {"exactly", choice_shape(false)},
                                          {"firstAvailable", Shape::list(8, choice_shape(true))}});
  const ShapePtr constraint = Shape::object({{"requests", Shape::list(32, Shape::string(127))},
                                             {"matchAttribute", Shape::string(96)},
                                             {"distinctAttribute", Shape::string(96)}});
  return Shape::object(
      {{"requests", Shape::list(32, request)}, {"constraints", Shape::list(32, constraint)}});
}

std::map<std::string, ShapePtr> cost_roots() {
  const ShapePtr labels = Shape::map_of(Shape::string(63));
  const ShapePtr metadata = Shape::object(
      {{"name", Shape::string(253)}, {"namespace", Shape::string(63)}, {"labels", labels}});
  const ShapePtr devices = devices_shape();
  return {
      {"object",
       Shape::object({{"kind", Shape::string(64)},
                      {"metadata", metadata},
                      {"spec", Shape::object({{"devices", devices},
                                              {"spec", Shape::object({{"devices", devices}})}})}})},
      {"request",
       Shape::object({{"namespace", Shape::string(63)},
                      {"name", Shape::string(253)},
                      {"requestKind", Shape::object({{"group", Shape::string(253)},
                                                     {"version", Shape::string(63)},
                                                     {"kind", Shape::string(63)}})}})},
      {"namespaceObject", Shape::object({{"metadata", metadata}})},
  };
}

std::string_view action_text(Action action) { return policy::action_name(action); }

std::string join(const std::vector<std::string>& parts, std::string_view separator) {
  std::string text;
  for (const std::string& part : parts) {
    text += (text.empty() ? "" : std::string(separator)) + part;
  }
  return text;
}

std::string cel_strings(const std::vector<std::string>& items) {
  std::vector<std::string> quoted;
  for (const std::string& item : items) {
    quoted.push_back(cel_quote(item));
  }
  return "[" + join(quoted, ", ") + "]";
}

// A list of RE2 full-match patterns as a CEL test of `subject`.
std::string patterns_test(const std::string& subject, const policy::PatternList& patterns) {
  std::vector<std::string> literals;
  std::vector<std::string> regexes;
  for (const policy::Pattern& pattern : patterns.patterns()) {
    if (pattern.literal()) {
      literals.push_back(*pattern.literal());
    } else {
      regexes.push_back("(?:" + pattern.text() + ")");
    }
  }
  std::vector<std::string> parts;
  if (!literals.empty()) {
    parts.push_back(subject + " in " + cel_strings(literals));
  }
  if (!regexes.empty()) {
    parts.push_back(subject + ".matches(" + cel_quote("^(?:" + join(regexes, "|") + ")$") + ")");
  }
  return parts.size() == 1 ? parts[0] : "(" + join(parts, " || ") + ")";
}

std::string labels_test(const std::string& labels, const policy::LabelSelector& selector) {
  std::vector<std::string> parts;
  for (const auto& [key, value] : selector.match_labels) {
    parts.push_back("(" + cel_quote(key) + " in " + labels + " && " + labels + "[" +
                    cel_quote(key) + "] == " + cel_quote(value) + ")");
  }
  for (const policy::LabelRequirement& requirement : selector.match_expressions) {
    const std::string key = cel_quote(requirement.key);
    const std::string has = key + " in " + labels;
    const std::string value = labels + "[" + key + "]";
    switch (requirement.op) {
      case policy::LabelRequirement::Operator::kIn:
        parts.push_back("(" + has + " && " + value + " in " + cel_strings(requirement.values) +
                        ")");
        break;
      case policy::LabelRequirement::Operator::kNotIn:
        parts.push_back("(!(" + has + ") || !(" + value + " in " + cel_strings(requirement.values) +
                        "))");
        break;
      case policy::LabelRequirement::Operator::kExists:
        parts.push_back("(" + has + ")");
        break;
      case policy::LabelRequirement::Operator::kDoesNotExist:
        parts.push_back("!(" + has + ")");
        break;
    }
  }
  return parts.empty() ? "true" : join(parts, " && ");
}

constexpr std::string_view kObjectLabels =
    "(has(object.metadata.labels) ? object.metadata.labels : {})";
constexpr std::string_view kNamespaceLabels =
    "(has(namespaceObject.metadata.labels) ? namespaceObject.metadata.labels : {})";

// Whether a policy Match selects the object, in CEL; `with_namespace_labels` false leaves out
// the namespaceSelector (the caller puts it on matchConstraints).
std::string match_test(const policy::Match& match, bool with_namespace_labels) {
  std::vector<std::string> parts;
  if (!match.include_namespaces.empty()) {
    parts.push_back(patterns_test("request.namespace", match.include_namespaces));
  }
  if (!match.exclude_namespaces.empty()) {
    parts.push_back("!(" + patterns_test("request.namespace", match.exclude_namespaces) + ")");
  }
  if (!match.names.empty()) {
    parts.push_back("(has(object.metadata.name) && " +
                    patterns_test("object.metadata.name", match.names) + ")");
  }
  if (!match.kinds.empty()) {
    parts.push_back("object.kind in " + cel_strings(match.kinds));
  }
  if (match.selector) {
    parts.push_back("(" + labels_test(std::string(kObjectLabels), *match.selector) + ")");
  }
  if (with_namespace_labels && match.namespace_selector) {
    parts.push_back("(" + labels_test(std::string(kNamespaceLabels), *match.namespace_selector) +
                    ")");
  }
  return parts.empty() ? "true" : join(parts, " && ");
}

bool covers(const std::vector<RuleId>& rules, RuleId rule) {
  return rules.empty() || std::find(rules.begin(), rules.end(), rule) != rules.end();
}

// What a compiled rule does on an object: the first covering override that selects it, else the
// rule's own action (engine: Policy::action_for). A CEL string expression, or a constant.
struct RuleAction {
  std::string expression;     // evaluates to 'deny' | 'warn' | 'audit' | 'off'
  std::set<Action> possible;  // the actions it can take
};

RuleAction rule_action(const policy::Policy& policy, RuleId rule) {
  const policy::RuleSettings& settings = policy.rule(rule);
  // whenAlignmentImpossible depends on the cluster's slices, which CEL cannot see: the weaker
  // of the two actions (a larger Action is weaker), so the compiled policy never denies where
  // the engine would only warn.
  const Action own = settings.when_alignment_impossible
                         ? std::max(settings.action, *settings.when_alignment_impossible)
                         : settings.action;
  RuleAction result;
  std::string expression;
  std::string closing;
  for (const policy::ActionOverride& entry : policy.action_overrides) {
    const bool applies = entry.rules.empty() ? own != Action::kOff : covers(entry.rules, rule);
    if (!applies) {
      continue;
    }
    expression += "(" + match_test(entry.match, true) + ") ? " +
                  cel_quote(action_text(entry.action)) + " : (";
    closing += ")";
    result.possible.insert(entry.action);
  }
  result.possible.insert(own);
  result.expression = expression + cel_quote(action_text(own)) + closing;
  return result;
}

// Whether an exception waives `rule` on the object (any exception that selects it), in CEL.
std::string exempt_test(const policy::Policy& policy, RuleId rule) {
  std::vector<std::string> parts;
  for (const policy::PolicyException& exception : policy.exceptions) {
    if (covers(exception.rules, rule)) {
      parts.push_back("(" + match_test(exception.match, true) + ")");
    }
  }
  return parts.empty() ? "false" : join(parts, " || ");
}

std::string rule_variable(RuleId rule, std::string_view what) {
  std::string name(what);
  bool upper = true;
  for (const char c : policy::rule_name(rule)) {
    if (c == '-') {
      upper = true;
      continue;
    }
    name += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    upper = false;
  }
  return name;
}

Json metadata(const std::string& name, const std::string& policy_name) {
  return {{"name", name},
          {"labels",
           {{"app.kubernetes.io/managed-by", "topoguard"}, {"topoguard.dev/policy", policy_name}}}};
}

class PolicyCompiler {
 public:
  PolicyCompiler(const policy::Policy& policy, const CompileOptions& options, CompiledPolicies& out)
      : policy_(policy), options_(options), out_(out) {}

  Result<Ok> run() {
    std::vector<std::string> resources;
    const auto kind_selected = [&](std::string_view kind) {
      return policy_.match.kinds.empty() ||
             std::find(policy_.match.kinds.begin(), policy_.match.kinds.end(), kind) !=
                 policy_.match.kinds.end();
    };
    if (kind_selected(k8s::kResourceClaimKind)) {
      resources.emplace_back(k8s::kResourceClaims);
    }
    if (kind_selected(k8s::kResourceClaimTemplateKind)) {
      resources.emplace_back(k8s::kResourceClaimTemplates);
    }
    if (resources.empty()) {
      out_.not_compiled.push_back("policy \"" + policy_.name +
                                  "\": matches no ResourceClaim or ResourceClaimTemplate kind; "
                                  "nothing to compile");
      return Ok{};
    }
    const auto classes = options_.device_classes.find(policy_.name);
    cel_ = claim_cel(policy_, classes == options_.device_classes.end()
                                  ? std::vector<DeviceClassRoles>{}
                                  : classes->second);
    for (const std::string& note : cel_.notes) {
      out_.not_compiled.push_back("policy \"" + policy_.name + "\": " + note);
    }
    match_constraints_ = {{"resourceRules", Json::array({{{"apiGroups", {k8s::kResourceGroup}},
                                                          {"apiVersions", {"v1"}},
                                                          {"operations", {"CREATE"}},
                                                          {"resources", resources}}})},
                          {"matchPolicy", "Equivalent"}};
    if (policy_.match.namespace_selector) {
      match_constraints_["namespaceSelector"] =
          policy::selector_to_json(*policy_.match.namespace_selector);
    }
    if (policy_.match.selector) {
      match_constraints_["objectSelector"] = policy::selector_to_json(*policy_.match.selector);
    }
    const std::string scope = match_test(policy::Match{policy_.match.include_namespaces,
                                                       policy_.match.exclude_namespaces,
                                                       std::nullopt,
                                                       {},
                                                       policy_.match.names,
                                                       std::nullopt},
                                         false);
    if (scope != "true") {
      match_conditions_.push_back({{"name", "policy-match"}, {"expression", scope}});
    }
    // Exceptions for every rule that do not read Namespace labels skip the policy at once. Named
    // by index: a matchCondition's name must be a qualified name, an exception's need not be.
    for (std::size_t i = 0; i < policy_.exceptions.size(); ++i) {
      const policy::PolicyException& exception = policy_.exceptions[i];
      if (exception.rules.empty() && !exception.match.namespace_selector) {
        match_conditions_.push_back(
            {{"name", "exception-" + std::to_string(i)},
             {"expression", "!(" + match_test(exception.match, false) + ")"}});
      }
    }
    adds_constraints_ = adds_constraints();
    if (Result<Ok> done = add_validating(); !done) {
      return done;
    }
    return add_mutating();
  }

 private:
  // The rule's CEL: whether the engine reports it, and its message.
  const RuleCel& rule_cel(RuleId rule) const {
    switch (rule) {
      case RuleId::kMissingPcieAlignment:
        return cel_.missing;
      case RuleId::kNumaOnlyAlignment:
        return cel_.numa_only;
      case RuleId::kMultiDeviceAlignment:
        return cel_.multi_device;
      default:
        return cel_.overridden;
    }
  }

  // The variables of a policy: the claim's, then each compiled rule's action and exemption.
  Json variables() const {
    Json list = Json::array();
    for (const auto& [name, expression] : cel_.variables) {
      list.push_back({{"name", name}, {"expression", expression}});
    }
    for (const RuleId rule : kCompiledRules) {
      const RuleAction action = rule_action(policy_, rule);
      if (action.possible.size() > 1) {
        list.push_back(
            {{"name", rule_variable(rule, "action")}, {"expression", action.expression}});
      }
      const std::string exempt = exempt_test(policy_, rule);
      if (exempt != "false") {
        list.push_back({{"name", rule_variable(rule, "exempt")}, {"expression", exempt}});
      }
    }
    if (adds_constraints_) {
      list.push_back({{"name", kAddsConstraints}, {"expression", *adds_constraints_}});
    }
    return list;
  }

  // The rule has `action` here and is not waived, as a CEL condition ("true" when constant).
  std::string acts(RuleId rule, Action action) const {
    const RuleAction rule_action_here = rule_action(policy_, rule);
    std::vector<std::string> parts;
    if (rule_action_here.possible.size() > 1) {
      parts.push_back("variables." + rule_variable(rule, "action") +
                      " == " + cel_quote(action_text(action)));
    }
    if (exempt_test(policy_, rule) != "false") {
      parts.push_back("!variables." + rule_variable(rule, "exempt"));
    }
    return parts.empty() ? "true" : join(parts, " && ");
  }

  Json spec_base() const {
    Json spec = {{"failurePolicy", "Ignore"}, {"matchConstraints", match_constraints_}};
    if (!match_conditions_.empty()) {
      spec["matchConditions"] = match_conditions_;
    }
    spec["variables"] = variables();
    return spec;
  }

  Result<Ok> add_validating() {
    for (const Action action : {Action::kDeny, Action::kWarn, Action::kAudit}) {
      Json validations = Json::array();
      for (const RuleId rule : kCompiledRules) {
        if (!rule_action(policy_, rule).possible.contains(action)) {
          continue;
        }
        const std::string when = acts(rule, action);
        const std::string& reported = rule_cel(rule).reported;
        std::string failing = when == "true" ? reported : when + " && " + reported;
        if (adds_constraints_) {
          failing = "!variables." + std::string(kFixSkipped) + " && " + failing;
        }
        validations.push_back({{"expression", "!(" + failing + ")"},
                               {"messageExpression", "'" + std::string(policy::rule_name(rule)) +
                                                         ": ' + (" + rule_cel(rule).message + ")"},
                               {"message", std::string(policy::rule_name(rule)) +
                                               ": the claim is not aligned as policy \"" +
                                               policy_.name + "\" requires"},
                               {"reason", "Forbidden"}});
      }
      if (validations.empty()) {
        continue;
      }
      const std::string name = "topoguard-" + policy_.name + "-" + std::string(action_text(action));
      Json spec = spec_base();
      if (adds_constraints_) {
        spec["variables"].push_back(
            {{"name", kFixSkipped},
             {"expression", "!(" + std::string(kSentAsV1) + ") && variables." +
                                std::string(kAddsConstraints)}});
      }
      spec["validations"] = std::move(validations);
      Json object = {{"apiVersion", kVapGroupVersion},
                     {"kind", "ValidatingAdmissionPolicy"},
                     {"metadata", metadata(name, policy_.name)},
                     {"spec", std::move(spec)}};
      if (Result<Ok> costed = add_costs(object); !costed) {
        return costed;
      }
      out_.objects.push_back(std::move(object));
      static constexpr std::array<const char*, 3> kBindingActions{"Deny", "Warn", "Audit"};
      out_.objects.push_back(
          {{"apiVersion", kVapGroupVersion},
           {"kind", "ValidatingAdmissionPolicyBinding"},
           {"metadata", metadata(name, policy_.name)},
           {"spec",
            {{"policyName", name},
             {"validationActions", {kBindingActions[static_cast<std::size_t>(action)]}}}}});
    }
    return Ok{};
  }

  // A rule's fix is applied here: it mutates, acts, and is not waived (engine: emit()).
  std::string fix_applies(RuleId rule) const {
    const RuleAction action = rule_action(policy_, rule);
    if (!policy_.rule(rule).mutate ||
        (action.possible.size() == 1 && action.possible.contains(Action::kOff))) {
      return "false";
    }
    std::vector<std::string> parts;
    if (action.possible.size() > 1) {
      parts.push_back("variables." + rule_variable(rule, "action") + " != 'off'");
    }
    if (exempt_test(policy_, rule) != "false") {
      parts.push_back("!variables." + rule_variable(rule, "exempt"));
    }
    return parts.empty() ? "true" : "(" + join(parts, " && ") + ")";
  }

  // Whether the MutatingAdmissionPolicy adds constraints to the object, in CEL; none when no
  // MutatingAdmissionPolicy is compiled (noted when the version is what prevents it).
  std::optional<std::string> adds_constraints() {
    const std::string missing = fix_applies(RuleId::kMissingPcieAlignment);
    const std::string numa_only = fix_applies(RuleId::kNumaOnlyAlignment);
    if (missing == "false" && numa_only == "false") {
      return std::nullopt;
    }
    if (options_.version.minor < 34) {
      out_.not_compiled.push_back(
          "policy \"" + policy_.name +
          "\": no MutatingAdmissionPolicy before Kubernetes 1.34 (v1beta1); the webhook's "
          "/mutate adds the constraints");
      return std::nullopt;
    }
    // The engine reports numa-only-alignment when the untied requests are all NUMA-related,
    // else missing-pcie-alignment; when the pins leave that open, both must fix.
    const std::string which = "((" + cel_.only_numa_sure + " && " + numa_only + ") || (!" +
                              cel_.only_numa_maybe + " && " + missing + ") || (" +
                              cel_.only_numa_maybe + " && " + missing + " && " + numa_only + "))";
    return cel_.fixable + " && " + which;
  }

  Result<Ok> add_mutating() {
    if (!adds_constraints_) {
      return Ok{};
    }
    out_.limits.push_back(
        "policy \"" + policy_.name +
        "\": claims sent as resource.k8s.io/v1beta1 or v1beta2: the MutatingAdmissionPolicy "
        "patches only claims sent as v1 (Kubernetes 1.37.2 cannot convert its patch back to a "
        "beta version), and the validating policies allow a beta-version claim it would patch");
    const KubernetesVersion& version = options_.version;
    const std::string expression =
        "variables." + std::string(kAddsConstraints) + " ? (" + cel_.fix_patch + ") : []";
    const bool beta = version.minor < 36;
    const std::string group_version =
        beta ? "admissionregistration.k8s.io/v1beta1" : std::string(kVapGroupVersion);
    const std::string name = "topoguard-" + policy_.name + "-fix";
    Json spec = spec_base();
    spec["matchConditions"].push_back({{"name", "sent-as-v1"}, {"expression", kSentAsV1}});
    spec["reinvocationPolicy"] = "IfNeeded";
    spec["mutations"] =
        Json::array({{{"patchType", "JSONPatch"}, {"jsonPatch", {{"expression", expression}}}}});
    Json object = {{"apiVersion", group_version},
                   {"kind", "MutatingAdmissionPolicy"},
                   {"metadata", metadata(name, policy_.name)},
                   {"spec", std::move(spec)}};
    if (beta) {
      object["metadata"]["annotations"] = {
          {"topoguard.dev/feature-gate",
           "MutatingAdmissionPolicy (beta, off by default in 1.34/1.35): enable the gate and "
           "--runtime-config=admissionregistration.k8s.io/v1beta1=true"}};
    }
    if (Result<Ok> costed = add_costs(object); !costed) {
      return costed;
    }
    out_.objects.push_back(std::move(object));
    out_.objects.push_back({{"apiVersion", group_version},
                            {"kind", "MutatingAdmissionPolicyBinding"},
                            {"metadata", metadata(name, policy_.name)},
                            {"spec", {{"policyName", name}}}});
    return Ok{};
  }

  // Estimates every expression of `object` (variables first: later ones use their shapes).
  Result<Ok> add_costs(const Json& object) {
    std::map<std::string, ShapePtr> roots = cost_roots();
    std::map<std::string, ShapePtr> variable_shapes;
    const std::string name = object["metadata"]["name"].get<std::string>();
    std::uint64_t total = 0;
    const auto estimate = [&](const std::string& field, const std::string& expression,
                              ShapePtr* shape) -> Result<Ok> {
      roots["variables"] = Shape::object(variable_shapes);
      Result<CostEstimate> cost = estimate_cost(expression, roots);
      if (!cost) {
        return Error{cost.error().code, name + " " + field + ": " + cost.error().message, {}};
      }
      out_.costs.push_back({name, field, cost->cost});
      total += cost->cost;
      if (shape != nullptr) {
        *shape = cost->shape;
      }
      return Ok{};
    };
    const Json& spec = object["spec"];
    if (spec.contains("matchConditions")) {
      for (const Json& condition : spec["matchConditions"]) {
        if (Result<Ok> done =
                estimate("matchConditions[" + condition["name"].get<std::string>() + "]",
                         condition["expression"].get<std::string>(), nullptr);
            !done) {
          return done;
        }
      }
    }
    for (const Json& variable : spec["variables"]) {
      const std::string variable_name = variable["name"].get<std::string>();
      ShapePtr shape;
      if (Result<Ok> done = estimate("variables[" + variable_name + "]",
                                     variable["expression"].get<std::string>(), &shape);
          !done) {
        return done;
      }
      variable_shapes[variable_name] = shape;
    }
    if (spec.contains("validations")) {
      for (std::size_t i = 0; i < spec["validations"].size(); ++i) {
        const Json& validation = spec["validations"][i];
        for (const char* field : {"expression", "messageExpression"}) {
          if (Result<Ok> done = estimate("validations[" + std::to_string(i) + "]." + field,
                                         validation[field].get<std::string>(), nullptr);
              !done) {
            return done;
          }
        }
      }
    }
    if (spec.contains("mutations")) {
      if (Result<Ok> done =
              estimate("mutations[0].jsonPatch.expression",
                       spec["mutations"][0]["jsonPatch"]["expression"].get<std::string>(), nullptr);
          !done) {
        return done;
      }
    }
    out_.largest_policy_cost = std::max(out_.largest_policy_cost, total);
    return Ok{};
  }

  const policy::Policy& policy_;
  const CompileOptions& options_;
  CompiledPolicies& out_;
  ClaimCel cel_;
  std::optional<std::string> adds_constraints_;
  Json match_constraints_;
  Json match_conditions_ = Json::array();
};

}  // namespace

Result<KubernetesVersion> parse_kubernetes_version(std::string_view text) {
  std::string_view rest = text;
  if (rest.starts_with('v')) {
    rest.remove_prefix(1);
  }
  KubernetesVersion version;
  const auto [after_major, major_error] =
      std::from_chars(rest.data(), rest.data() + rest.size(), version.major);
  const char* end = rest.data() + rest.size();
  if (major_error != std::errc() || after_major == end || *after_major != '.') {
    return Error{ErrorCode::kUsage,
                 "--kubernetes-version: '" + std::string(text) + "' is not a version like 1.36",
                 {}};
  }
  const auto [after_minor, minor_error] = std::from_chars(after_major + 1, end, version.minor);
  if (minor_error != std::errc() || (after_minor != end && *after_minor != '.')) {
    return Error{ErrorCode::kUsage,
                 "--kubernetes-version: '" + std::string(text) + "' is not a version like 1.36",
                 {}};
  }
  if (version.major != 1 || version.minor < 34) {
    return Error{ErrorCode::kUsage,
                 "--kubernetes-version: " + std::string(text) +
                     " is not supported: native policies need resource.k8s.io/v1 (Kubernetes "
                     "1.34 or later) and ValidatingAdmissionPolicy v1",
                 {}};
  }
  return version;
}

Result<CompiledPolicies> compile_policies(const policy::PolicySet& policies,
                                          const CompileOptions& options) {
  CompiledPolicies out;
  for (const policy::Policy& policy : policies.policies()) {
    if (Result<Ok> done = PolicyCompiler(policy, options, out).run(); !done) {
      return done.error();
    }
    const auto note = [&](const std::string& text) {
      out.not_compiled.push_back("policy \"" + policy.name + "\": " + text);
    };
    const auto webhook_only = [&](const std::string& text) {
      out.webhook_only.push_back("policy \"" + policy.name + "\": " + text);
    };
    const auto limit = [&](const std::string& text) {
      out.limits.push_back("policy \"" + policy.name + "\": " + text);
    };
    for (const RuleId rule :
         {RuleId::kDevicePluginPairing, RuleId::kSplitClaims, RuleId::kUnresolvedClaim}) {
      if (policy.rule(rule).action != Action::kOff) {
        webhook_only(std::string(policy::rule_name(rule)) +
                     ": judges Pods and workloads through the claims they reference");
      }
    }
    for (const RuleId rule : {RuleId::kUnsatisfiableAlignment, RuleId::kAttributeNotPublished}) {
      if (policy.rule(rule).action != Action::kOff) {
        webhook_only(std::string(policy::rule_name(rule)) +
                     ": needs the cluster's ResourceSlices (feasibility)");
      }
    }
    if (policy.rule(RuleId::kNumaOnlyAlignment).when_alignment_impossible) {
      note(
          "numa-only-alignment whenAlignmentImpossible: needs the cluster's ResourceSlices; "
          "compiled with the weaker of its two actions");
    }
    if (!policy.gpu.drivers.empty() || !policy.nic.drivers.empty()) {
      if (options.cluster_state) {
        limit(
            "roles by driver: baked in from the DeviceClasses of --cluster-state (compile "
            "again when classes change)");
      } else {
        webhook_only(
            "roles by driver: no DeviceClass list (--cluster-state), so only class names give "
            "roles");
      }
    }
    webhook_only("roles from request selectors that read the driver: claims with such selectors");
    limit("claims with derived attributes (KEP-6080): read when at most " +
          std::to_string(kMaxDerivingRequests) + " requests derive attributes, at most " +
          std::to_string(kMaxDerivedExamined) +
          " each, and (for every rule but "
          "overridden-alignment-attribute) the claim has at most " +
          std::to_string(kMaxDerivingClaimRequests) + " requests and " +
          std::to_string(kMaxDerivingClaimRequests) +
          " constraints; an expression is read as an attribute read only in its canonical form "
          "device.attributes[\"<domain>\"].<name>, and one of more than " +
          std::to_string(kMaxDerivedExpressionLength) + " characters not at all");
    limit("selectors: a request's are read when it has at most " +
          std::to_string(kMaxSelectorsExamined) + " of at most " +
          std::to_string(kMaxSelectorLength) +
          " characters (else the webhook decides); a NUMA pin is recognised in a selector of "
          "at most " +
          std::to_string(kMaxPinSelectorLength) +
          " characters comparing one NUMA attribute with a number (a longer selector that may "
          "pin leaves missing-pcie- vs numa-only-alignment to the webhook)");
  }
  return out;
}

}  // namespace topoguard::native
