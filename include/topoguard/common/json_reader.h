// JSON text to Json for large or untrusted inputs (review bodies, API list pages, watch events):
// simdjson (DOM) checks the whole text (RFC 8259, UTF-8, nesting) in one pass and the tree is
// built with each object's members appended in order, so an object of n keys costs n log n
// (nlohmann's ordered_json insert scans for the key: n^2). Accepts what nlohmann's Json::parse
// accepts (a leading UTF-8 BOM is skipped) except integers beyond -2^63..2^64-1, which simdjson
// refuses and the API server never sends; builds the same trees (key order, types, non-negative
// integers unsigned, a repeated key keeping its first position and its last value).
#pragma once

#include <string_view>

#include "topoguard/common/json.h"
#include "topoguard/common/json_document.h"
#include "topoguard/common/result.h"

namespace topoguard {

// Errors: kTooDeep when arrays/objects nest deeper than `max_depth`, kInvalidJson otherwise.
// Pure, safe to call concurrently.
[[nodiscard]] Result<Json> read_json(std::string_view text, int max_depth);

// read_json for one document after another (a stream's events): keeps the parser's buffers
// between documents, up to a bound. Not thread-safe: one reader per stream.
class JsonReader {
 public:
  explicit JsonReader(int max_depth = 512);

  [[nodiscard]] Result<Json> read(std::string_view text);

 private:
  JsonDocumentParser parser_;
  int max_depth_;
};

}  // namespace topoguard
