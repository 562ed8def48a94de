#include "topoguard/policytest/policy_test.h"

#include <algorithm>
#include <dtl/dtl.hpp>
#include <filesystem>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "topoguard/audit/audit_runner.h"
#include "topoguard/audit/namespace_labels.h"
#include "topoguard/common/sorted_json.h"
#include "topoguard/common/text_file.h"
#include "topoguard/common/yaml_document.h"
#include "topoguard/engine/json_patch.h"
#include "topoguard/k8s/object.h"
#include "topoguard/policy/policy_loader.h"

namespace topoguard::policytest {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kApiVersion = "topoguard.dev/v1alpha1";

struct OutcomeName {
  Outcome outcome;
  std::string_view name;
};
constexpr OutcomeName kOutcomes[] = {{Outcome::kDeny, "deny"},
                                     {Outcome::kWarn, "warn"},
                                     {Outcome::kAudit, "audit"},
                                     {Outcome::kExempted, "exempted"},
                                     {Outcome::kPass, "pass"}};

// Reads one test document; errors go to `errors`, each at its field.
class TestReader {
 public:
  TestReader(const std::string& file, const YamlDocument& document, const std::string& directory,
             const PathRoot& root, std::vector<Error>& errors)
      : file_(file), document_(document), directory_(directory), root_(root), errors_(errors) {}

  std::optional<PolicyTest> read() {
    const Json& value = document_.value;
    PolicyTest test;
    test.file = file_;
    test.line = document_.first_line;
    allow(value, "",
          {"apiVersion", "kind", "metadata", "policies", "resources", "clusterState",
           "namespaces", "strict", "results"});
    if (string_member_view(value, "apiVersion") != kApiVersion) {
      fail(ErrorCode::kInvalidValue, "/apiVersion", "must be " + std::string(kApiVersion));
    }
    const Json* metadata = present(value, "metadata");
    test.name =
        metadata != nullptr && metadata->is_object() ? text(*metadata, "name", "/metadata") : "";
    if (test.name.empty()) {
      fail(ErrorCode::kMissingField, "/metadata/name", "a test needs a name");
    }
    test.policies = paths("policies", false);
    test.resources = paths("resources", true);
    test.cluster_state = paths("clusterState", false);
    read_namespaces(test);
    if (const Json* strict = present(value, "strict"); strict != nullptr) {
      if (strict->is_boolean()) {
        test.strict = strict->get<bool>();
      } else {
        fail(ErrorCode::kWrongType, "/strict", "must be true or false");
      }
    }
    const Json* results = present(value, "results");
    test.results_line = document_.lines.line_of("/results");
    if (results == nullptr || !results->is_array() || results->empty()) {
      fail(results == nullptr    ? ErrorCode::kMissingField
           : results->is_array() ? ErrorCode::kInvalidValue
                                 : ErrorCode::kWrongType,
           "/results", "must list at least one expected result");
    } else {
      for (std::size_t i = 0; i < results->size(); ++i) {
        if (auto result = read_result((*results)[i], "/results/" + std::to_string(i))) {
          test.results.push_back(std::move(*result));
        }
      }
    }
    if (failed_) {
      return std::nullopt;
    }
    return test;
  }

 private:
  void fail(ErrorCode code, const std::string& pointer, const std::string& message) {
    failed_ = true;
    errors_.push_back(
        Error{code, message, SourceLocation{file_, document_.lines.line_of(pointer), pointer}});
  }

  void allow(const Json& object, const std::string& pointer,
             std::initializer_list<std::string_view> keys) {
    if (!object.is_object()) {
      fail(ErrorCode::kWrongType, pointer, "must be a mapping");
      return;
    }
    for (const auto& [key, unused] : object.items()) {
      if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
        fail(ErrorCode::kUnknownField, pointer + "/" + key, "unknown field \"" + key + "\"");
      }
    }
  }

  // A member that is there and not null (`key:` with no value is the same as absent).
  static const Json* present(const Json& object, std::string_view key) {
    const Json* value = member(object, key);
    return value == nullptr || value->is_null() ? nullptr : value;
  }

  // A string member of the mapping at `pointer`: "" when absent; an error when not a string.
  std::string text(const Json& object, std::string_view key, const std::string& pointer) {
    const Json* value = present(object, key);
    if (value == nullptr) {
      return "";
    }
    if (!value->is_string()) {
      fail(ErrorCode::kWrongType, pointer + "/" + std::string(key),
           std::string("must be a string, not ") + json_type_name(*value));
      return "";
    }
    return value->get<std::string>();
  }

  // A list of paths relative to the test file's folder, each inside the root.
  std::vector<std::string> paths(const char* key, bool required) {
    std::vector<std::string> found;
    const std::string pointer = std::string("/") + key;
    const Json* list = present(document_.value, key);
    if (list == nullptr) {
      if (required) {
        fail(ErrorCode::kMissingField, pointer, std::string(key) + " must list files or folders");
      }
      return found;
    }
    if (!list->is_array()) {
      fail(ErrorCode::kWrongType, pointer, "must be a list of paths");
      return found;
    }
    for (std::size_t i = 0; i < list->size(); ++i) {
      const Json& entry = (*list)[i];
      if (!entry.is_string() || entry.get_ref<const std::string&>().empty()) {
        fail(ErrorCode::kWrongType, pointer + "/" + std::to_string(i), "must be a path");
        continue;
      }
      std::string path = resolve(entry.get<std::string>());
      if (const std::optional<std::string> escape = root_.escape(path)) {
        fail(ErrorCode::kInvalidValue, pointer + "/" + std::to_string(i), *escape);
        continue;
      }
      found.push_back(std::move(path));
    }
    if (required && list->empty()) {  // a bad entry is reported at its index
      fail(ErrorCode::kMissingField, pointer, std::string(key) + " must list files or folders");
    }
    return found;
  }

  // `namespaces`: name: {label: value} in the test, or a list of files.
  void read_namespaces(PolicyTest& test) {
    const Json* namespaces = present(document_.value, "namespaces");
    if (namespaces == nullptr || namespaces->is_array()) {
      test.namespace_files = paths("namespaces", false);
      return;
    }
    if (!namespaces->is_object()) {
      fail(ErrorCode::kWrongType, "/namespaces",
           "must map namespace names to labels, or list files of them");
      return;
    }
    audit::NamespaceLabels labels =
        audit::namespaces_from_map(*namespaces, "/namespaces", document_.lines, file_);
    failed_ = failed_ || !labels.errors.empty();
    std::move(labels.errors.begin(), labels.errors.end(), std::back_inserter(errors_));
    test.namespaces = std::move(labels.namespaces);
  }

  std::string resolve(const std::string& path) const {
    const fs::path given(path);
    return given.is_absolute() ? path : (fs::path(directory_) / given).lexically_normal().string();
  }

  std::optional<ExpectedResult> read_result(const Json& entry, const std::string& pointer) {
    allow(entry, pointer, {"resource", "rule", "action", "patched"});
    if (!entry.is_object()) {
      return std::nullopt;
    }
    ExpectedResult result;
    result.location = SourceLocation{file_, document_.lines.line_of(pointer), pointer};
    const Json* resource = present(entry, "resource");
    if (resource == nullptr) {
      fail(ErrorCode::kMissingField, pointer + "/resource", "a result names its resource");
      return std::nullopt;
    }
    allow(*resource, pointer + "/resource", {"kind", "namespace", "name"});
    if (!resource->is_object()) {
      return std::nullopt;
    }
    result.resource = {text(*resource, "kind", pointer + "/resource"),
                       text(*resource, "namespace", pointer + "/resource"),
                       text(*resource, "name", pointer + "/resource")};
    if (result.resource.kind.empty() || result.resource.name.empty()) {
      fail(ErrorCode::kMissingField, pointer + "/resource", "a resource needs its kind and name");
    }
    const std::string rule = text(entry, "rule", pointer);
    const std::string action = text(entry, "action", pointer);
    if (!rule.empty()) {
      result.rule = policy::parse_rule_name(rule);
      if (!result.rule) {
        fail(ErrorCode::kUnknownRule, pointer + "/rule", "unknown rule \"" + rule + "\"");
      }
    }
    if (!action.empty()) {
      result.outcome = parse_outcome_name(action);
      if (!result.outcome) {
        fail(ErrorCode::kInvalidValue, pointer + "/action",
             "action must be deny, warn, audit, exempted or pass");
      }
    }
    const bool has_rule = present(entry, "rule") != nullptr;
    const bool has_action = present(entry, "action") != nullptr;
    if (has_rule != has_action) {
      fail(ErrorCode::kMissingField, pointer + (has_rule ? "/action" : "/rule"),
           "rule and action go together");
    }
    if (const Json* patched = present(entry, "patched"); patched != nullptr) {
      if (!patched->is_string() || patched->get_ref<const std::string&>().empty()) {
        fail(ErrorCode::kWrongType, pointer + "/patched", "must be a file");
      } else {
        result.patched = resolve(patched->get<std::string>());
        if (const std::optional<std::string> escape = root_.escape(result.patched)) {
          fail(ErrorCode::kInvalidValue, pointer + "/patched", *escape);
        }
      }
    }
    if (!has_rule && !has_action && present(entry, "patched") == nullptr) {
      fail(ErrorCode::kMissingField, pointer, "a result needs rule and action, or patched");
    }
    return result;
  }

  const std::string& file_;
  const YamlDocument& document_;
  const std::string& directory_;
  const PathRoot& root_;
  std::vector<Error>& errors_;
  bool failed_ = false;
};

bool is_yaml_file(const fs::path& path) {
  const std::string extension = path.extension().string();
  return extension == ".yaml" || extension == ".yml";
}

std::optional<Outcome> outcome_of(policy::Action action) {
  switch (action) {
    case policy::Action::kDeny:
      return Outcome::kDeny;
    case policy::Action::kWarn:
      return Outcome::kWarn;
    case policy::Action::kAudit:
      return Outcome::kAudit;
    case policy::Action::kOff:
      return std::nullopt;
  }
  return std::nullopt;
}

// YAML of a document with its keys sorted, line by line, for a readable diff.
std::vector<std::string> yaml_lines(const Json& document) {
  const std::string text = to_yaml(Json(SortedJson(document)));
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    lines.push_back(line);
  }
  return lines;
}

std::string unified_diff(const Json& expected, const Json& actual) {
  dtl::Diff<std::string> diff(yaml_lines(expected), yaml_lines(actual));
  diff.compose();
  diff.composeUnifiedHunks();
  std::ostringstream out;
  out << "--- expected\n+++ patched\n";
  diff.printUnifiedFormat(out);
  return out.str();
}

}  // namespace

std::string_view outcome_name(Outcome outcome) {
  for (const OutcomeName& entry : kOutcomes) {
    if (entry.outcome == outcome) {
      return entry.name;
    }
  }
  return "?";
}

std::optional<Outcome> parse_outcome_name(std::string_view name) {
  for (const OutcomeName& entry : kOutcomes) {
    if (entry.name == name) {
      return entry.outcome;
    }
  }
  return std::nullopt;
}

std::string ResourceName::to_string() const {
  return kind + " " + (namespace_name.empty() ? name : namespace_name + "/" + name);
}

ParsedTests parse_policy_tests(const std::string& file, const std::string& text,
                               const std::string& directory, const PathRoot& root) {
  ParsedTests parsed;
  const YamlStream stream = parse_yaml_stream(text, file);
  parsed.errors = stream.errors;
  for (const YamlDocument& document : stream.documents) {
    if (string_member_view(document.value, "kind") != policy::kPolicyTestKind) {
      continue;
    }
    if (auto test = TestReader(file, document, directory, root, parsed.errors).read()) {
      parsed.tests.push_back(std::move(*test));
    }
  }
  return parsed;
}

ParsedTests read_policy_tests(const std::vector<std::string>& paths, const PathRoot& root) {
  ParsedTests all;
  // A file named on the command line must be a readable test file; one found in a folder is
  // read only when it mentions the kind, so manifests and expected objects beside the tests
  // (broken ones included, on purpose or not) are not parsed.
  const auto read_one = [&all, &root](const fs::path& path, bool named) {
    Result<std::string> text = read_text_file(path.string(), kMaxTestFileBytes);
    if (!text) {
      if (named || text.error().code != ErrorCode::kTooLarge) {
        all.errors.push_back(text.error());
      }
      return;
    }
    if (!named && text->find(policy::kPolicyTestKind) == std::string::npos) {
      return;
    }
    ParsedTests parsed =
        parse_policy_tests(path.string(), *text, path.parent_path().string(), root);
    std::move(parsed.tests.begin(), parsed.tests.end(), std::back_inserter(all.tests));
    std::move(parsed.errors.begin(), parsed.errors.end(), std::back_inserter(all.errors));
  };
  for (const std::string& given : paths) {
    std::error_code error;
    if (!fs::is_directory(given, error)) {
      read_one(given, true);
      continue;
    }
    std::vector<fs::path> files;
    // Hidden entries are skipped, as policy folders skip them (ConfigMap volumes' ..data).
    for (fs::recursive_directory_iterator it(given, error), end; !error && it != end;
         it.increment(error)) {
      if (it->path().filename().string().starts_with('.')) {
        it.disable_recursion_pending();
      } else if (is_yaml_file(it->path()) && !it->is_directory(error)) {
        // Not only regular files: a FIFO or a device named like a test is an error when read.
        files.push_back(it->path());
      }
    }
    if (error) {
      all.errors.push_back(Error{ErrorCode::kIo, "cannot read " + given + ": " + error.message(),
                                 SourceLocation{given, 0, ""}});
    }
    std::sort(files.begin(), files.end());
    for (const fs::path& file : files) {
      read_one(file, false);
    }
  }
  if (all.tests.empty() && all.errors.empty()) {
    all.errors.push_back(Error{ErrorCode::kMissingField,
                               "no " + std::string(policy::kPolicyTestKind) + " documents found",
                               SourceLocation{paths.empty() ? "" : paths.front(), 0, ""}});
  }
  return all;
}

bool TestResult::passed() const {
  return errors.empty() &&
         std::all_of(cases.begin(), cases.end(), [](const CaseResult& c) { return c.passed; });
}

namespace {

Result<Json> read_patched_file(const std::string& path) {
  Result<std::string> text = read_text_file(path, kMaxTestFileBytes);
  if (!text) {
    return text.error();
  }
  YamlStream stream = parse_yaml_stream(*text, path);
  if (!stream.errors.empty()) {
    return stream.errors.front();
  }
  if (stream.documents.size() != 1) {
    return Error{ErrorCode::kInvalidValue, "a patched file holds exactly one object",
                 SourceLocation{path, 0, ""}};
  }
  return std::move(stream.documents.front().value);
}

}  // namespace

Result<TestInputs> read_test_inputs(const PolicyTest& test, const std::vector<Json>& given) {
  TestInputs inputs;
  auto policies = policy::load_policies(test.policies);
  if (!policies) {
    return policies.error();
  }
  inputs.policies = std::move(*policies);
  inputs.namespaces = given;
  for (const std::string& file : test.namespace_files) {
    audit::NamespaceLabels labels = audit::read_namespace_labels(file);
    if (!labels.errors.empty()) {
      return labels.errors.front();
    }
    std::move(labels.namespaces.begin(), labels.namespaces.end(),
              std::back_inserter(inputs.namespaces));
  }
  inputs.namespaces.insert(inputs.namespaces.end(), test.namespaces.begin(),
                           test.namespaces.end());
  std::vector<std::string> paths = test.cluster_state;
  paths.insert(paths.end(), test.resources.begin(), test.resources.end());
  std::istringstream no_input;
  inputs.manifests = audit::read_manifests(paths, no_input);
  for (const ExpectedResult& result : test.results) {
    if (result.patched.empty() || inputs.patched.contains(result.patched)) {
      continue;
    }
    inputs.patched.emplace(result.patched, read_patched_file(result.patched));
  }
  return inputs;
}

namespace {

// The findings of one rule on one resource, and what a result would call them.
struct Observation {
  Outcome outcome = Outcome::kPass;
  std::string words;
};

// The report's findings and exempted findings, per resource.
struct FindingsByResource {
  std::vector<std::vector<const audit::ReportedFinding*>> findings;
  std::vector<std::vector<const audit::ReportedFinding*>> exempted;

  explicit FindingsByResource(const audit::AuditReport& report)
      : findings(report.resources.size()), exempted(report.resources.size()) {
    for (const audit::ReportedFinding& found : report.findings) {
      findings[found.resource].push_back(&found);
    }
    for (const audit::ReportedFinding& found : report.exempted) {
      exempted[found.resource].push_back(&found);
    }
  }
};

Observation observe(const audit::AuditReport& report, const FindingsByResource& by_resource,
                    std::size_t index, policy::RuleId rule) {
  const audit::ReportedFinding* severest = nullptr;
  for (const audit::ReportedFinding* found : by_resource.findings[index]) {
    if (found->finding.rule == rule &&
        (severest == nullptr || found->finding.action < severest->finding.action)) {
      severest = found;
    }
  }
  if (severest != nullptr) {
    const engine::Finding& finding = severest->finding;
    return {outcome_of(finding.action).value_or(Outcome::kPass),
            std::string(policy::action_name(finding.action)) + ": " + finding.message};
  }
  for (const audit::ReportedFinding* found : by_resource.exempted[index]) {
    if (found->finding.rule == rule) {
      return {Outcome::kExempted,
              "exempted by " + found->finding.exception + ": " + found->finding.message};
    }
  }
  const audit::AuditedResource& resource = report.resources[index];
  const bool checked =
      std::any_of(resource.checked.begin(), resource.checked.end(),
                  [&](const engine::CheckedRule& entry) { return entry.rule == rule; });
  std::string words = checked ? "no finding" : "no finding (no policy checks it with this rule)";
  for (const std::string& unknown : resource.unknown) {
    words += "; undecided: " + unknown;
  }
  return {Outcome::kPass, std::move(words)};
}

ResourceName resource_name(const k8s::ObjectRef& ref) {
  return {ref.kind, k8s::is_cluster_scoped(ref) ? std::string() : k8s::effective_namespace(ref),
          ref.name};
}

// The evaluated resources by the names a result gives them.
class ResourceIndex {
 public:
  explicit ResourceIndex(const audit::AuditReport& report) {
    for (std::size_t i = 0; i < report.resources.size(); ++i) {
      const ResourceName name = resource_name(report.resources[i].ref);
      exact_.try_emplace({name.kind, name.namespace_name, name.name}, i);
      alike_[{name.kind, name.name}].push_back(i);
    }
  }

  // The first resource a result names: an empty namespace is the object's "default" or none.
  [[nodiscard]] std::optional<std::size_t> find(const ResourceName& wanted) const {
    for (const std::string& namespace_name :
         wanted.namespace_name.empty() ? std::vector<std::string>{"", "default"}
                                       : std::vector<std::string>{wanted.namespace_name}) {
      if (const auto it = exact_.find({wanted.kind, namespace_name, wanted.name});
          it != exact_.end()) {
        return it->second;
      }
    }
    return std::nullopt;
  }

  // The resources of the same kind and name, in any namespace.
  [[nodiscard]] const std::vector<std::size_t>& alike(const ResourceName& wanted) const {
    static const std::vector<std::size_t> none;
    const auto it = alike_.find({wanted.kind, wanted.name});
    return it == alike_.end() ? none : it->second;
  }

 private:
  std::map<std::tuple<std::string, std::string, std::string>, std::size_t> exact_;
  std::map<std::pair<std::string, std::string>, std::vector<std::size_t>> alike_;
};

// Why a failed result may have failed: its resource was judged without the labels of its
// namespace, so a namespaceSelector could not be evaluated. "" otherwise, and where the labels
// cannot be the reason: they only ever add or strengthen findings, so neither an unexpected
// finding nor an action stronger than expected comes of their absence.
std::string unknown_labels_reason(const CaseResult& result,
                                  const audit::AuditedResource& resource) {
  if (result.passed || resource.unknown.empty() || result.expected == nullptr) {
    return "";
  }
  const std::optional<Outcome>& expected = result.expected->outcome;
  const std::optional<Outcome>& observed = result.observed_outcome;
  if (expected && observed && *expected != Outcome::kExempted &&
      *observed != Outcome::kExempted && *observed < *expected) {
    return "";
  }
  return "the labels of namespace \"" + k8s::effective_namespace(resource.ref) +
         "\" are not known (no Namespace object among the resources), so a namespaceSelector "
         "could not be evaluated and the action may be weaker than with them; give them with "
         "`namespaces:` in the test (name: {label: value}, or files of Namespace objects) or "
         "--namespace-labels FILE";
}

// Checks `expected.patched` against the patch /mutate would return for the evaluation.
void check_patched(const ExpectedResult& expected, const audit::ManifestEvaluation& evaluation,
                   const TestInputs& inputs, CaseResult& result) {
  const auto file = inputs.patched.find(expected.patched);
  Result<Json> patched =
      engine::apply_patch(*evaluation.manifest->object, evaluation.evaluation.patch);
  std::string problem;
  if (file == inputs.patched.end() || !file->second) {
    problem = "the patched file cannot be read: " + expected.patched;
  } else if (!patched) {
    problem = "the patch does not apply: " + patched.error().to_string();
  } else if (SortedJson(*patched) != SortedJson(*file->second)) {
    problem = evaluation.evaluation.patch.empty() ? "the object is not patched, and differs"
                                                  : "the patched object differs";
    result.diff = unified_diff(*file->second, *patched);
    result.patched_object = std::move(*patched);
  }
  if (problem.empty()) {
    if (!expected.rule) {
      result.passed = true;
      result.observed = "patched as expected";
    }
    return;
  }
  result.passed = false;
  result.observed = result.observed.empty() ? problem : result.observed + "; " + problem;
}

}  // namespace

TestResult run_policy_test(const PolicyTest& test, const TestInputs& inputs) {
  TestResult outcome;
  outcome.test = &test;
  outcome.errors = inputs.manifests.errors;
  const audit::AuditRun run =
      audit::run_audit(inputs.manifests, inputs.policies,
                       audit::RunOptions{.cluster_state = !test.cluster_state.empty(),
                                         .namespaces = &inputs.namespaces});
  const audit::AuditReport& report = run.report;
  for (const Error& error : report.errors) {
    const bool known =
        std::any_of(outcome.errors.begin(), outcome.errors.end(),
                    [&](const Error& seen) { return seen.to_string() == error.to_string(); });
    if (!known) {
      outcome.errors.push_back(error);
    }
  }

  for (const auto& [file, patched] : inputs.patched) {
    if (!patched) {
      outcome.errors.push_back(patched.error());
    }
  }
  const ResourceIndex resources(report);
  const FindingsByResource by_resource(report);
  std::set<std::pair<std::size_t, policy::RuleId>> listed;  // (resource, rule) some result names
  std::set<std::size_t> listed_resources;
  for (const ExpectedResult& expected : test.results) {
    CaseResult result;
    result.expected = &expected;
    result.resource = expected.resource;
    result.rule = expected.rule;
    const std::optional<std::size_t> index = resources.find(expected.resource);
    if (!index) {
      result.observed =
          "no such resource among the " + std::to_string(report.resources.size()) + " evaluated";
      std::string alike;
      for (const std::size_t other : resources.alike(expected.resource)) {
        alike +=
            (alike.empty() ? "" : ", ") + resource_name(report.resources[other].ref).to_string();
      }
      if (!alike.empty()) {
        result.observed += " (with that kind and name: " + alike + ")";
      }
      outcome.cases.push_back(std::move(result));
      continue;
    }
    listed_resources.insert(*index);
    result.resource_found = true;
    if (expected.rule) {
      listed.emplace(*index, *expected.rule);
      Observation observation = observe(report, by_resource, *index, *expected.rule);
      result.observed_outcome = observation.outcome;
      result.passed = observation.outcome == expected.outcome;
      result.observed = std::move(observation.words);
    }
    if (!expected.patched.empty()) {
      check_patched(expected, run.evaluations[*index], inputs, result);
    }
    result.why = unknown_labels_reason(result, report.resources[*index]);
    outcome.cases.push_back(std::move(result));
  }

  if (test.strict) {
    for (const audit::ReportedFinding& found : report.findings) {
      if (!listed_resources.contains(found.resource) ||
          !listed.emplace(found.resource, found.finding.rule).second) {
        continue;
      }
      CaseResult extra;
      extra.resource_found = true;
      extra.resource = resource_name(report.resources[found.resource].ref);
      extra.rule = found.finding.rule;
      Observation observation = observe(report, by_resource, found.resource, found.finding.rule);
      extra.observed_outcome = observation.outcome;
      extra.observed = std::move(observation.words);
      extra.why = unknown_labels_reason(extra, report.resources[found.resource]);
      outcome.cases.push_back(std::move(extra));
    }
  }
  return outcome;
}

TestResult run_or_fail(const PolicyTest& test, const std::vector<Json>& namespaces) {
  Result<TestInputs> inputs = read_test_inputs(test, namespaces);
  if (!inputs) {
    TestResult failed;
    failed.test = &test;
    failed.errors.push_back(inputs.error());
    return failed;
  }
  return run_policy_test(test, *inputs);
}

}  // namespace topoguard::policytest
