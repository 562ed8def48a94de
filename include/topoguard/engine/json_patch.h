// The JSON patches of fixes, typed, and applying them the way the API server applies webhook
// patches (an `add` needs its parent, `-` appends), so a patch is checked before anyone relies
// on it.
#pragma once

#include <string>
#include <vector>

#include "topoguard/common/json.h"
#include "topoguard/common/result.h"

namespace topoguard::engine {

// RFC 6902 operations topoguard writes: its fixes only ever add (a member, or an element with
// the index `-`).
enum class PatchOp { kAdd };

struct PatchOperation {
  PatchOp op = PatchOp::kAdd;
  std::string path;  // JSON pointer
  Json value;

  friend bool operator==(const PatchOperation&, const PatchOperation&) = default;
};

using JsonPatch = std::vector<PatchOperation>;

// [{"op": "add", "path": ..., "value": ...}, ...], as webhooks, reports and SARIF write it.
[[nodiscard]] Json patch_to_json(const JsonPatch& patch);

// The patched copy of `document`, or an error naming the failing operation.
[[nodiscard]] Result<Json> apply_patch(const Json& document, const JsonPatch& patch);

// apply_patch() on `document` itself, without the copy, for callers that own a document they no
// longer need as it was. After an error `document` is partly patched: only fit to be dropped.
[[nodiscard]] Status apply_patch_in_place(Json& document, const JsonPatch& patch);

}  // namespace topoguard::engine
