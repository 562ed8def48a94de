// Applying RFC 6902 patches the way the API server does for webhook patches (an `add` needs its
// parent, `-` appends), so a patch is checked before anyone relies on it.
#pragma once

#include "topoguard/common/json.h"
#include "topoguard/common/result.h"

namespace topoguard::engine {

// The patched copy of `document`, or an error naming the failing operation.
[[nodiscard]] Result<Json> apply_patch(const Json& document, const Json& patch);

}  // namespace topoguard::engine
