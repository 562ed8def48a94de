// Private: the text of policies/default.yaml, defined in a source file generated at build time
// by embed_policy.cmake (byte-exact, as \x escapes).
#pragma once

#include <string_view>

namespace topoguard::policy::detail {

[[nodiscard]] std::string_view builtin_policy_source();

}  // namespace topoguard::policy::detail
