// simdjson's DOM as the admission module reads it: a parse that returns Result, the conversion
// of a subtree to Json, and type names for diagnostics. Internal to src/admission.
#pragma once

#include <string_view>

#include <simdjson.h>

#include "topoguard/common/json.h"
#include "topoguard/common/result.h"

namespace topoguard::admission {

// Parses `text` with `parser` (which owns the returned element's storage). Errors: kTooDeep past
// `max_depth` levels of arrays/objects, kInternal when memory runs out, kInvalidJson otherwise.
[[nodiscard]] Result<simdjson::dom::element> parse_json_document(simdjson::dom::parser& parser,
                                                                 std::string_view text,
                                                                 int max_depth);

// The subtree as a Json value, as Json::parse builds it. Linear in the subtree's size, also
// with many (or repeated) keys. Throws only std::bad_alloc.
[[nodiscard]] Json to_json(simdjson::dom::element value);

// "object", "array", "string", "integer", "number", "boolean" or "null", as json_type_name().
[[nodiscard]] const char* element_type_name(simdjson::dom::element value);

}  // namespace topoguard::admission
