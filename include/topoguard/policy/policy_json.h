// A Policy written back as an AlignmentPolicy document (topoguard.dev/v1alpha1) with every
// section spelled out, inherited ones included: what `topoguard policy show --effective` prints
// and what `topoguard policy lint` compares with the built-in policy. Parsing the document gives
// the same policy. Pure.
#pragma once

#include "topoguard/common/json.h"
#include "topoguard/policy/policy.h"

namespace topoguard::policy {

[[nodiscard]] Json match_to_json(const Match& match);
// A label selector as Kubernetes writes it (matchLabels, matchExpressions).
[[nodiscard]] Json selector_to_json(const LabelSelector& selector);
[[nodiscard]] Json policy_to_json(const Policy& policy);

}  // namespace topoguard::policy
