// A parsed JSON document read in parts, for readers that take only some members of a large or
// untrusted text (the webhook's AdmissionReview): the whole text is checked in one pass (RFC 8259,
// UTF-8, nesting) and only the parts asked for become Json. Readers that want whole trees use
// json_reader.h. No parser type shows here: the parser lives behind a pointer and a part keeps
// its handle in fixed storage.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string_view>

#include "topoguard/common/json.h"
#include "topoguard/common/result.h"

namespace topoguard {

// One value inside a parsed document. Valid while its JsonDocumentParser lives and has not parsed
// another text. Cheap to copy.
class JsonPart {
 public:
  // "object", "array", "string", "integer", "number", "boolean" or "null", as json_type_name().
  [[nodiscard]] const char* type_name() const;
  [[nodiscard]] bool is_null() const;
  [[nodiscard]] bool is_object() const;
  // The value when it is of that type, else empty.
  [[nodiscard]] std::optional<std::string_view> string() const;
  [[nodiscard]] std::optional<bool> boolean() const;

  // Of an object, the members named in `names`, each its last occurrence (a repeated key's last
  // value wins, as everywhere else), in one pass over the object; `found[i]` answers `names[i]`.
  // Of any other value, nothing is found. `found` has the size of `names`.
  void members(std::span<const std::string_view> names,
               std::span<std::optional<JsonPart>> found) const;
  template <std::size_t N>
  [[nodiscard]] std::array<std::optional<JsonPart>, N> members(
      const std::array<std::string_view, N>& names) const {
    std::array<std::optional<JsonPart>, N> found;
    members(names, found);
    return found;
  }

  // The value as a Json tree, as Json::parse builds it (key order, types, non-negative integers
  // unsigned, a repeated key keeping its first position and its last value). Linear in the
  // value's size, also with many (or repeated) keys. Throws only std::bad_alloc.
  [[nodiscard]] Json to_json() const;

 private:
  friend struct JsonPartAccess;
  JsonPart() = default;
  // The parser's handle of the value (a document pointer and a position); json_document.cpp checks
  // that it fits.
  alignas(std::max_align_t) std::byte handle_[16]{};
};

// Parses one text after another, keeping its buffers between texts (each part of a text is valid
// until the next parse). Not thread-safe: one parser per thread.
class JsonDocumentParser {
 public:
  JsonDocumentParser();
  ~JsonDocumentParser();
  JsonDocumentParser(const JsonDocumentParser&) = delete;
  JsonDocumentParser& operator=(const JsonDocumentParser&) = delete;

  // The root of `text`. A leading UTF-8 byte order mark is skipped, as nlohmann does. Errors,
  // whose messages call the text `what` ("body", "JSON"): kTooDeep past `max_depth` levels of
  // arrays/objects, kInternal when memory runs out, kInvalidJson otherwise.
  [[nodiscard]] Result<JsonPart> parse(std::string_view text, int max_depth,
                                       std::string_view what = "JSON");

  // Frees the buffers when a text grew them past `bytes` (parts of the last text become invalid).
  void release_beyond(std::size_t bytes);

 private:
  struct Parser;
  std::unique_ptr<Parser> parser_;
};

}  // namespace topoguard
