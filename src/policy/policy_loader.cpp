#include "topoguard/policy/policy_loader.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <map>
#include <set>
#include <system_error>
#include <utility>

#include "builtin_policy.h"
#include "policy_lint.h"
#include "policy_parser.h"
#include "topoguard/common/printable_text.h"
#include "topoguard/common/text_file.h"
#include "topoguard/common/yaml_document.h"

namespace topoguard::policy {

namespace {

namespace fs = std::filesystem;

// Policies are written by hand; anything this big is a wrong path, not a policy.
constexpr std::size_t kMaxPolicyFileBytes = std::size_t{16} << 20;

bool is_policy_file_name(const fs::path& path) {
  const std::string extension = path.extension().string();
  return extension == ".yaml" || extension == ".yml" || extension == ".json";
}

bool is_hidden(const fs::path& path) {
  const std::string name = path.filename().string();
  return !name.empty() && name.front() == '.';
}

Error io_error(const std::string& path, std::string message) {
  return Error{ErrorCode::kIo, std::move(message), SourceLocation{path, 0, ""}};
}

// Expands the user's paths into files: explicit files as given, directories walked.
std::vector<std::string> expand_paths(const std::vector<std::string>& paths,
                                      std::vector<Error>& errors) {
  std::vector<std::string> files;
  for (const std::string& path : paths) {
    if (path == "-") {
      files.push_back(path);
      continue;
    }
    std::error_code error;
    const fs::file_status status = fs::status(path, error);
    if (error || !fs::exists(status)) {
      errors.push_back(io_error(
          path, "cannot read: " + (error ? error.message() : std::string("no such file"))));
      continue;
    }
    if (!fs::is_directory(status)) {
      files.push_back(path);
      continue;
    }
    std::vector<std::string> found;
    fs::recursive_directory_iterator it(path, error);
    for (; !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
      if (is_hidden(it->path())) {
        if (it->is_directory(error)) {
          it.disable_recursion_pending();
        }
        continue;
      }
      // Not only regular files: a FIFO or a device named like a policy is an error when read,
      // never a policy skipped in silence.
      if (is_policy_file_name(it->path()) && !it->is_directory(error)) {
        found.push_back(it->path().string());
      }
    }
    if (error) {
      errors.push_back(io_error(path, "cannot list directory: " + error.message()));
      continue;
    }
    if (found.empty()) {
      errors.push_back(io_error(path, "no .yaml, .yml or .json files in directory"));
      continue;
    }
    std::sort(found.begin(), found.end());
    files.insert(files.end(), found.begin(), found.end());
  }
  return files;
}

// See SkippedDocument: what is read as a policy.
bool is_policy_candidate(const Json& document) {
  const std::string_view kind = string_member_view(document, "kind");
  if (kind == kPolicyTestKind) {
    return false;
  }
  const std::string_view api_version = string_member_view(document, "apiVersion");
  return kind.empty() || api_version.empty() || kind == "AlignmentPolicy" ||
         api_version.starts_with("topoguard.dev/");
}

struct Collected {
  std::vector<Policy> policies;
  std::vector<Error> errors;
  std::vector<SkippedDocument> skipped;
  std::size_t files = 0;
};

// Names are what findings, metrics and exceptions refer to, so two policies may not share one.
void reject_duplicate_names(Collected& collected) {
  std::map<std::string, const Policy*, std::less<>> first;
  for (Policy& policy : collected.policies) {
    auto [it, inserted] = first.emplace(policy.name, &policy);
    if (inserted) {
      continue;
    }
    const SourceLocation& other = it->second->origin;
    collected.errors.push_back(
        Error{ErrorCode::kInvalidValue,
              "duplicate policy name \"" + policy.name + "\" (also defined at " + other.file + ":" +
                  std::to_string(other.line) + ")",
              SourceLocation{policy.origin.file, policy.origin.line, "/metadata/name"}});
  }
}

Collected collect(const std::vector<std::string>& paths) {
  Collected collected;
  for (const std::string& file : expand_paths(paths, collected.errors)) {
    Result<std::string> text = file == "-"
                                   ? read_text_stream(std::cin, file, kMaxPolicyFileBytes)
                                   : read_text_file(file, kMaxPolicyFileBytes);
    if (!text) {
      collected.errors.push_back(text.error());
      continue;
    }
    ++collected.files;
    PolicyStreamOutcome outcome = parse_policy_stream(*text, file);
    std::move(outcome.policies.begin(), outcome.policies.end(),
              std::back_inserter(collected.policies));
    std::move(outcome.errors.begin(), outcome.errors.end(), std::back_inserter(collected.errors));
    std::move(outcome.skipped.begin(), outcome.skipped.end(),
              std::back_inserter(collected.skipped));
  }
  reject_duplicate_names(collected);
  if (collected.errors.empty() && collected.policies.empty()) {
    collected.errors.push_back(Error{ErrorCode::kInvalidValue, "no AlignmentPolicy documents found",
                                     SourceLocation{paths.empty() ? "" : paths.front(), 0, ""}});
  }
  return collected;
}

Result<PolicySet> to_set(Collected&& collected) {
  if (collected.errors.empty()) {
    return PolicySet(std::move(collected.policies));
  }
  Error first = std::move(collected.errors.front());
  if (collected.errors.size() > 1) {
    const std::size_t more = collected.errors.size() - 1;
    first.message += " (and " + std::to_string(more) + " more error" + (more == 1 ? "" : "s") +
                     "; `topoguard policy lint` lists them all)";
  }
  return first;
}

// `inherited`: the policy that fills in omitted sections; null for the built-in policy itself.
PolicyStreamOutcome parse_stream(std::string_view text, const std::string& file_name,
                                 const Policy* inherited) {
  PolicyStreamOutcome outcome;
  YamlStream stream = parse_yaml_stream(text, file_name);
  // Keep errors in document order: YAML errors carry lines, so merge by line.
  std::vector<Error> errors = std::move(stream.errors);
  for (const YamlDocument& document : stream.documents) {
    if (!is_policy_candidate(document.value)) {
      outcome.skipped.push_back(SkippedDocument{
          SourceLocation{file_name, document.first_line, ""},
          string_member(document.value, "kind")});
      continue;
    }
    PolicyParseOutcome parsed = parse_policy(document.value, document.lines, file_name, inherited);
    if (parsed.policy) {
      outcome.policies.push_back(std::move(*parsed.policy));
    }
    std::move(parsed.errors.begin(), parsed.errors.end(), std::back_inserter(errors));
  }
  std::stable_sort(errors.begin(), errors.end(), [](const Error& a, const Error& b) {
    return a.location.line < b.location.line;
  });
  outcome.errors = std::move(errors);
  return outcome;
}

}  // namespace

PolicyStreamOutcome parse_policy_stream(std::string_view text, const std::string& file_name) {
  return parse_stream(text, file_name, &builtin_policy());
}

std::string_view builtin_policy_text() { return detail::builtin_policy_source(); }

const Policy& builtin_policy() {
  // The built-in text is tested to parse; an empty policy would only stand in for a broken build.
  static const Policy policy = [] {
    PolicyStreamOutcome outcome =
        parse_stream(builtin_policy_text(), std::string(kBuiltinPolicyFile), nullptr);
    return outcome.policies.empty() ? Policy{} : std::move(outcome.policies.front());
  }();
  return policy;
}

Result<PolicySet> load_builtin_policies() {
  Collected collected;
  PolicyStreamOutcome outcome =
      parse_stream(builtin_policy_text(), std::string(kBuiltinPolicyFile), nullptr);
  collected.policies = std::move(outcome.policies);
  collected.errors = std::move(outcome.errors);
  reject_duplicate_names(collected);
  return to_set(std::move(collected));
}

Result<PolicySet> load_policy_files(const std::vector<std::string>& paths,
                                    std::vector<SkippedDocument>* skipped) {
  Collected collected = collect(paths);
  if (skipped != nullptr) {
    *skipped = collected.skipped;
  }
  return to_set(std::move(collected));
}

Result<PolicySet> load_policies(const std::vector<std::string>& paths,
                                std::vector<SkippedDocument>* skipped) {
  return paths.empty() ? load_builtin_policies() : load_policy_files(paths, skipped);
}

std::string skipped_documents_text(const std::vector<SkippedDocument>& skipped) {
  if (skipped.empty()) {
    return "";
  }
  std::set<std::string_view> files;
  std::map<std::string_view, std::size_t> kinds;
  for (const SkippedDocument& document : skipped) {
    files.insert(document.where.file);
    ++kinds[document.kind];
  }
  std::string text = "skipped " + std::to_string(skipped.size()) +
                     (skipped.size() == 1 ? " document that is not a policy" :
                                            " documents that are not policies") +
                     " in " + std::to_string(files.size()) +
                     (files.size() == 1 ? " file (" : " files (");
  for (auto it = kinds.begin(); it != kinds.end(); ++it) {
    text += (it == kinds.begin() ? "" : ", ") + printable(it->first) + " " +
            std::to_string(it->second);
  }
  return text + ")";
}

bool PolicyLintReport::has_io_error() const {
  return std::any_of(errors.begin(), errors.end(),
                     [](const Error& error) { return error.code == ErrorCode::kIo; });
}

PolicyLintReport lint_policy_files(const std::vector<std::string>& paths) {
  Collected collected = collect(paths);
  PolicyLintReport report;
  report.files = collected.files;
  report.valid_policies = collected.policies.size();
  report.errors = std::move(collected.errors);
  report.skipped = std::move(collected.skipped);
  for (const Policy& policy : collected.policies) {
    std::vector<Error> warnings = policy_warnings(policy, builtin_policy());
    std::move(warnings.begin(), warnings.end(), std::back_inserter(report.warnings));
  }
  return report;
}

}  // namespace topoguard::policy
