// The JSON reader of the webhook: simdjson (DOM) checks the whole body (RFC 8259, UTF-8,
// nesting) in one pass, and only the parts the caller asks for become Json trees. Accepts what
// nlohmann's Json::parse accepts (a leading UTF-8 BOM is skipped) except integers beyond
// -2^63..2^64-1, which simdjson refuses and the API server never sends; builds the same trees
// (key order, types, a repeated key keeping its first position and its last value). Pure, safe to
// call concurrently.
#pragma once

#include <memory>
#include <string_view>

#include "topoguard/common/json.h"
#include "topoguard/common/result.h"

namespace topoguard::admission {

// Errors: kTooDeep when arrays/objects nest deeper than `max_depth`, kInvalidJson otherwise.
[[nodiscard]] Result<Json> read_json(std::string_view text, int max_depth);

}  // namespace topoguard::admission
