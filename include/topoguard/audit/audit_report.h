// The result of an audit: findings with their source file and line, counts, input errors, and
// the exit-code rule (0 clean, 1 a finding reached --fail-on, 2 invalid or unreadable input).
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "topoguard/audit/input_classifier.h"
#include "topoguard/common/result.h"
#include "topoguard/engine/finding.h"

namespace topoguard::audit {

// Whole lines first_line..last_line of a file replaced by `text` (no final line break): a
// document as `topoguard fix` rewrites it.
struct SourceEdit {
  int first_line = 0;
  int last_line = 0;
  std::string text;
};

struct ReportedFinding {
  engine::Finding finding;
  std::string file;
  int line = 0;
  std::size_t resource = 0;  // index into AuditReport::resources
  // For an enabled fix, when attach_fix_edits() ran: the edit of its document (shared by the
  // findings of one document).
  std::shared_ptr<const SourceEdit> fix_edit;
};

// An object the engine evaluated, where it is, and which rules it was checked against.
struct AuditedResource {
  k8s::ObjectRef ref;
  std::string file;
  int line = 0;  // of the object's first line
  std::vector<engine::CheckedRule> checked;
  // engine::Evaluation::unknown: what needed the labels of the object's namespace
  std::vector<std::string> unknown;
};

struct AuditSummary {
  std::size_t resources = 0;  // objects the engine or its inventory used
  std::size_t skipped = 0;    // objects of kinds that do not matter here
  std::size_t deny = 0;
  std::size_t warn = 0;
  std::size_t audit = 0;
  std::size_t exempted = 0;  // findings waived by an exception (not in deny/warn/audit)
};

struct AuditReport {
  AuditSummary summary;
  std::vector<AuditedResource> resources;  // evaluated objects, in input order
  std::vector<ReportedFinding> findings;   // sorted by file, line, rule, policy
  std::vector<ReportedFinding> exempted;   // waived by an exception, sorted the same way
  std::vector<Error> errors;              // invalid or unreadable input
  std::vector<SkippedInput> skipped_inputs;  // input that is not Kubernetes objects, not audited
};

// --fail-on: the least severe action that fails the run; nullopt = never.
using FailOn = std::optional<policy::Action>;
[[nodiscard]] Result<FailOn> parse_fail_on(const std::string& text);

inline constexpr int kExitClean = 0;
inline constexpr int kExitFindings = 1;
inline constexpr int kExitInvalidInput = 2;

// `fail_on_unknown` (--fail-on-unknown): a verdict reached without the labels of a namespace
// (AuditedResource::unknown) fails the run as a finding reaching --fail-on does (exit 1).
[[nodiscard]] int exit_code(const AuditReport& report, FailOn fail_on,
                            bool fail_on_unknown = false);

// Whether some resource was judged without the labels of its namespace.
[[nodiscard]] bool has_unknown_namespace_labels(const AuditReport& report);

// What it means that an object was judged without the labels of its namespace, as the notes
// on stderr say it (after "judged without the labels of ...").
inline constexpr std::string_view kUnknownLabelsMeaning =
    "so a namespaceSelector could not be evaluated: the verdict may be weaker than with the "
    "labels, never stronger";

// What stderr says when resources were judged without the labels of their namespace: which,
// per namespace (at most `max_listed` resources named in all), and how to give the labels; ""
// when none was. `how` names the ways the command takes them.
[[nodiscard]] std::string unknown_labels_note(const AuditReport& report, std::string_view how,
                                              std::size_t max_listed = 20);

}  // namespace topoguard::audit
