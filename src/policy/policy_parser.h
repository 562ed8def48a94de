// Strict parser of one AlignmentPolicy document (topoguard.dev/v1alpha1) into the immutable
// Policy model: every field is type-checked, every RE2 pattern compiled (quietly) and every
// error collected with file, line and field, so `topoguard policy lint` can report them all at
// once. Pure: no I/O (policy_loader.h reads files). Thread-compatible, no shared state.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "topoguard/common/json.h"
#include "topoguard/common/result.h"
#include "topoguard/common/yaml_document.h"
#include "topoguard/policy/policy.h"

namespace topoguard::policy {

inline constexpr std::string_view kPolicyApiVersion = "topoguard.dev/v1alpha1";
inline constexpr std::string_view kPolicyKind = "AlignmentPolicy";

// The settings a rule has when a policy does not mention it: missing-pcie-alignment and
// numa-only-alignment deny+mutate, device-plugin-pairing warn, split-claims deny,
// multi-device-alignment warn, unresolved-claim audit, unsatisfiable-alignment and
// attribute-not-published warn, overridden-alignment-attribute deny. Fixable rules default to
// mutate: true.
[[nodiscard]] RuleSettings default_rule_settings(RuleId rule);

// Either a policy (errors empty) or every error found (policy empty). Never both.
struct PolicyParseOutcome {
  std::optional<Policy> policy;
  std::vector<Error> errors;
};

// Parses one document. `lines` maps the document's JSON pointers to lines (from
// parse_yaml_stream); `file_name` goes into every error and into Policy::origin. What the
// document omits of `devices` (gpu, nic), `alignment` (attribute, acceptedAttributes,
// numaAttributes) and `rules` (per rule) is taken from `inherited` (the built-in policy) and
// listed in Policy::inherited; `match` and `exceptions` are never inherited. With `inherited`
// null (the built-in policy itself) omitted fields take the defaults. Errors use the
// codes kUnknownField, kWrongType, kMissingField, kInvalidValue, kInvalidPattern and
// kUnknownRule, with location.field set to the JSON pointer of the offending field.
[[nodiscard]] PolicyParseOutcome parse_policy(const Json& document, const LineIndex& lines,
                                              const std::string& file_name,
                                              const Policy* inherited);

// Whether `name` is a qualified attribute name "<dns-subdomain>/<C identifier>" as DRA
// requires for matchAttribute (domain at most 63 characters, identifier at most 32).
[[nodiscard]] bool is_qualified_attribute_name(std::string_view name);

}  // namespace topoguard::policy
