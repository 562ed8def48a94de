// Applying RFC 6902 patches the way the API server does for webhook patches (an `add` needs its
// parent, `-` appends), so a patch is checked before anyone relies on it.
#pragma once

#include "topoguard/common/json.h"
#include "topoguard/common/result.h"

namespace topoguard::engine {

// The patched copy of `document`, or an error naming the failing operation.
[[nodiscard]] Result<Json> apply_patch(const Json& document, const Json& patch);

// apply_patch() on `document` itself, without the copy, for callers that own a document they no
// longer need as it was. After an error `document` is partly patched: only fit to be dropped.
[[nodiscard]] Status apply_patch_in_place(Json& document, const Json& patch);

}  // namespace topoguard::engine
