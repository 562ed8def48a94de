// simdjson's DOM for readers that take only parts of a document as Json (the webhook's
// AdmissionReview): a parse that returns Result, the conversion of a subtree to Json, and type
// names for diagnostics. Including it needs simdjson (link simdjson::simdjson); readers that want
// whole trees use json_reader.h, which names no simdjson type.
#pragma once

#include <string_view>

#include <simdjson.h>

#include "topoguard/common/json.h"
#include "topoguard/common/result.h"

namespace topoguard {

// Parses `text` with `parser` (which owns the returned element's storage; a reused parser keeps
// its buffers when they are large and deep enough). A leading UTF-8 byte order mark is skipped,
// as nlohmann does. Errors, whose messages call the text `what` ("body", "JSON"): kTooDeep past
// `max_depth` levels of arrays/objects, kInternal when memory runs out, kInvalidJson otherwise.
[[nodiscard]] Result<simdjson::dom::element> parse_json_document(simdjson::dom::parser& parser,
                                                                 std::string_view text,
                                                                 int max_depth,
                                                                 std::string_view what = "JSON");

// The subtree as a Json value, as Json::parse builds it. Linear in the subtree's size, also
// with many (or repeated) keys. Throws only std::bad_alloc.
[[nodiscard]] Json to_json(simdjson::dom::element value);

// "object", "array", "string", "integer", "number", "boolean" or "null", as json_type_name().
[[nodiscard]] const char* element_type_name(simdjson::dom::element value);

}  // namespace topoguard
