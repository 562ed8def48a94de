// Whether an object holds CEL device selectors, read without evaluating anything: the webhook
// server asks it to keep reviews whose cost it cannot bound by their size off its event loops.
#pragma once

#include "topoguard/common/json.h"

namespace topoguard::k8s {

// True when `object` is a ResourceClaim or ResourceClaimTemplate (any resource.k8s.io version;
// a template's claim spec under spec.spec) with a `cel` selector anywhere one can be written:
// requests[].selectors (v1beta1), requests[].exactly.selectors and
// requests[].firstAvailable[].selectors (v1beta2, v1). Conservative: a part of the claim's
// request tree with an unexpected type counts as holding CEL. False for other kinds and for
// anything that is not an object (a DELETE's absent object).
[[nodiscard]] bool has_cel_selector(const Json& object);

}  // namespace topoguard::k8s
