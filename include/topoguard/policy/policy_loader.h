// Loads AlignmentPolicy files into a validated PolicySet: the policy module's only file I/O.
// `topoguard serve` and `audit` call load_policies() once at startup (and on reload);
// `topoguard policy lint` calls lint_policy_files() to list every error of every file.
// Functions are reentrant; the returned sets are immutable values.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "topoguard/common/result.h"
#include "topoguard/policy/policy.h"
#include "topoguard/policy/policy_set.h"

namespace topoguard::policy {

// File name that errors and Policy::origin use for the compiled-in default policy.
inline constexpr std::string_view kBuiltinPolicyFile = "builtin:policies/default.yaml";

// The kind of `topoguard policy test` files. Policy files skip its documents, so tests can sit
// beside the policies they test in a folder given to --policies.
inline constexpr std::string_view kPolicyTestKind = "AlignmentPolicyTest";

// A document of a policy file that is no policy, skipped: an AlignmentPolicyTest, or an object
// with an apiVersion outside topoguard.dev and a kind other than AlignmentPolicy (a manifest
// a test reads, an expected output). Anything else is read as a policy, so a policy with a typo
// in its apiVersion, its kind or both stays an error.
struct SkippedDocument {
  SourceLocation where;  // file and line of the document
  std::string kind;
};

// "skipped N documents that are not policies in F files (KIND N, ...)"; "" for none.
[[nodiscard]] std::string skipped_documents_text(const std::vector<SkippedDocument>& skipped);

// Every policy and every error of one multi-document YAML/JSON text. Pure (no I/O). Omitted
// sections are inherited from builtin_policy() (see parse_policy()).
struct PolicyStreamOutcome {
  std::vector<Policy> policies;           // valid documents, in stream order
  std::vector<Error> errors;              // YAML errors and policy errors, in stream order
  std::vector<SkippedDocument> skipped;   // documents that are not policies
};
[[nodiscard]] PolicyStreamOutcome parse_policy_stream(std::string_view text,
                                                      const std::string& file_name);

// The exact text of policies/default.yaml as compiled into the binary.
[[nodiscard]] std::string_view builtin_policy_text();

// Parses the compiled-in default policy.
[[nodiscard]] Result<PolicySet> load_builtin_policies();

// The compiled-in default policy, parsed once: what other policies inherit from.
[[nodiscard]] const Policy& builtin_policy();

// Loads files, directories (recursively: *.yaml, *.yml, *.json; entries whose name starts
// with '.' are skipped, so Kubernetes ConfigMap volumes (..data, ..2024_...) load once) and "-"
// (standard input). Files are read in sorted path order, documents in stream order; documents
// that are not policies are skipped (SkippedDocument) and, with `skipped`, listed there. Policy
// names must be unique across the set. On any error the result is the first error, its message
// ending in "(and N more errors ...)" when there are more; lint_policy_files() lists them all.
[[nodiscard]] Result<PolicySet> load_policy_files(const std::vector<std::string>& paths,
                                                  std::vector<SkippedDocument>* skipped = nullptr);

// load_builtin_policies() when `paths` is empty, else load_policy_files(paths): `--policies`
// replaces the built-in policy.
[[nodiscard]] Result<PolicySet> load_policies(const std::vector<std::string>& paths,
                                              std::vector<SkippedDocument>* skipped = nullptr);

struct PolicyLintReport {
  std::vector<Error> errors;       // every error of every file, files in sorted order
  std::vector<Error> warnings;     // policy_warnings() of every valid policy, in load order
  std::size_t files = 0;           // files read
  std::size_t valid_policies = 0;  // documents that parsed into a policy
  std::vector<SkippedDocument> skipped;  // documents that are not policies

  // True when some path could not be read (exit code 2 in `topoguard policy lint`).
  [[nodiscard]] bool has_io_error() const;
};

// Reads the same inputs as load_policy_files() and reports every error instead of failing.
[[nodiscard]] PolicyLintReport lint_policy_files(const std::vector<std::string>& paths);

}  // namespace topoguard::policy
