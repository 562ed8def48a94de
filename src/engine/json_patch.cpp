#include "topoguard/engine/json_patch.h"

#include <exception>

namespace topoguard::engine {

Result<Json> apply_patch(const Json& document, const Json& patch) {
  if (!patch.is_array()) {
    return Error{ErrorCode::kInvalidValue, "a JSON patch must be an array of operations", {}};
  }
  try {
    return document.patch(patch);
  } catch (const std::exception& exception) {
    return Error{ErrorCode::kInvalidValue, std::string("patch does not apply: ") + exception.what(),
                 {}};
  }
}

}  // namespace topoguard::engine
