// Warnings about valid policies that probably do not do what their author meant: one that can
// match nothing, one that changes nothing relative to the built-in policy. Lint reports them
// without failing. Pure.
#pragma once

#include <vector>

#include "topoguard/common/result.h"
#include "topoguard/policy/policy.h"

namespace topoguard::policy {

// Each warning names the policy and carries its file, line and the field concerned.
[[nodiscard]] std::vector<Error> policy_warnings(const Policy& policy, const Policy& builtin);

}  // namespace topoguard::policy
