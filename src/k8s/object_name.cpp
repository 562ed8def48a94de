#include "topoguard/k8s/object_name.h"

#include <string_view>

#include "topoguard/k8s/object.h"
#include "topoguard/k8s/pod_template.h"

namespace topoguard::k8s {

namespace {

enum class NameRule { kUnchecked, kDns1123Label, kDns1123Subdomain };

constexpr std::size_t kLabelMaxLength = 63;
constexpr std::size_t kSubdomainMaxLength = 253;

// apimachinery's util/validation messages (RegexError), word for word.
constexpr std::string_view kLabelMessage =
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
constexpr std::string_view kSubdomainMessage =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

NameRule name_rule(const ObjectRef& ref) {
  const std::string_view group = api_group(ref.api_version);
  if (group.empty() && ref.kind == "Namespace") {
    return NameRule::kDns1123Label;
  }
  if (is_workload_kind(group, ref.kind) || group == "resource.k8s.io" ||
      (group.empty() && ref.kind == "Node")) {
    return NameRule::kDns1123Subdomain;
  }
  return NameRule::kUnchecked;
}

bool is_alphanumeric(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// [a-z0-9]([-a-z0-9]*[a-z0-9])?, without the length limit.
bool is_label_format(std::string_view text) {
  if (text.empty() || !is_alphanumeric(text.front()) || !is_alphanumeric(text.back())) {
    return false;
  }
  for (const char c : text) {
    if (!is_alphanumeric(c) && c != '-') {
      return false;
    }
  }
  return true;
}

bool is_subdomain_format(std::string_view text) {
  for (std::size_t start = 0;;) {
    const std::size_t dot = text.find('.', start);
    if (!is_label_format(text.substr(start, dot == std::string_view::npos ? dot : dot - start))) {
      return false;
    }
    if (dot == std::string_view::npos) {
      return true;
    }
    start = dot + 1;
  }
}

// What the API server says of `name` under `rule`, each message one refusal. A generateName is
// a prefix: its trailing '-' is masked the way apimachinery's maskTrailingDash does (the last
// two characters become "a", a quirk kept so that the same prefixes pass).
std::vector<std::string> refusals(std::string name, NameRule rule, bool prefix) {
  if (prefix && name.size() > 1 && name.back() == '-') {
    name = name.substr(0, name.size() - 2) + "a";
  }
  const bool label = rule == NameRule::kDns1123Label;
  std::vector<std::string> messages;
  const std::size_t max_length = label ? kLabelMaxLength : kSubdomainMaxLength;
  if (name.size() > max_length) {
    messages.push_back("must be no more than " + std::to_string(max_length) + " characters");
  }
  if (!(label ? is_label_format(name) : is_subdomain_format(name))) {
    messages.emplace_back(label ? kLabelMessage : kSubdomainMessage);
  }
  return messages;
}

void check(const Json& metadata, const char* field, NameRule rule, bool prefix,
           std::vector<NameProblem>& problems) {
  const std::string value = string_member(metadata, field);
  if (value.empty()) {
    return;
  }
  for (const std::string& message : refusals(value, rule, prefix)) {
    problems.push_back(NameProblem{std::string("/metadata/") + field,
                                   "Invalid value: \"" + value + "\": " + message});
  }
}

}  // namespace

std::vector<NameProblem> invalid_metadata_names(const Json& object) {
  std::vector<NameProblem> problems;
  const Json* metadata = member(object, "metadata");
  if (metadata == nullptr) {
    return problems;
  }
  const ObjectRef ref = object_ref(object);
  const NameRule rule = name_rule(ref);
  if (rule == NameRule::kUnchecked) {
    return problems;
  }
  check(*metadata, "name", rule, false, problems);
  check(*metadata, "generateName", rule, true, problems);
  if (!is_cluster_scoped(ref)) {
    check(*metadata, "namespace", NameRule::kDns1123Label, false, problems);
  }
  return problems;
}

}  // namespace topoguard::k8s
