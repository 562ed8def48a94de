// The one JSON type of the project and JSON pointer helpers. Objects keep their document key
// order (ordered_json) so that `topoguard fix` writes manifests back in the order users wrote.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace topoguard {

using Json = nlohmann::ordered_json;

// Escapes one reference token for a JSON pointer (RFC 6901: "~" -> "~0", "/" -> "~1").
[[nodiscard]] std::string escape_pointer_token(std::string_view token);
// The reverse: "~1" -> "/", "~0" -> "~".
[[nodiscard]] std::string unescape_pointer_token(std::string_view token);

// base + "/" + escaped token.
[[nodiscard]] std::string append_pointer(std::string_view base, std::string_view token);
[[nodiscard]] std::string append_pointer(std::string_view base, std::size_t index);

// The value at `pointer` or nullptr when any step is missing or of the wrong type. Never throws.
[[nodiscard]] const Json* find_at(const Json& document, std::string_view pointer);

// Typed lookups of a member of an object; nullptr / empty when absent or of another type.
[[nodiscard]] const Json* member(const Json& object, std::string_view key);
[[nodiscard]] std::string string_member(const Json& object, std::string_view key);
// string_member() without the copy, for a look that ends before `object` changes.
[[nodiscard]] std::string_view string_member_view(const Json& object, std::string_view key);

// Human-readable JSON type name ("object", "array", "string", "integer", "number", ...), for
// diagnostics.
[[nodiscard]] const char* json_type_name(Json::value_t type);
[[nodiscard]] const char* json_type_name(const Json& value);

// Empties `tree` (it is null afterwards) by freeing its nodes depth first. nlohmann's destructor
// instead moves every descendant into a vector to avoid recursion, which costs more than building
// the tree; trees read from a request nest at most as deep as its reader allows, so recursion is
// bounded by that depth.
void release_tree(Json& tree);

}  // namespace topoguard
