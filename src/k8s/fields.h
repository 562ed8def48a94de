// Typed reading of an object's fields for the readers of Kubernetes shapes: each error is an
// Error whose location's field is the JSON pointer of the offending member.
#pragma once

#include <string>
#include <string_view>

#include "topoguard/common/json.h"
#include "topoguard/common/result.h"

namespace topoguard::k8s {

[[nodiscard]] Error field_error(ErrorCode code, std::string pointer, std::string message);
// "expected <expected>, got <type of actual>" at `pointer`.
[[nodiscard]] Error type_error(std::string pointer, const char* expected, const Json& actual);

// Member `key` of `object` (at `pointer`): nullptr when absent or null, an error when of another
// type than `is_type` accepts.
[[nodiscard]] Result<const Json*> optional_member(const Json& object, const std::string& pointer,
                                                  std::string_view key, const char* expected,
                                                  bool (Json::*is_type)() const noexcept);

// A string member that must be set and not empty; the error calls the object `what`.
[[nodiscard]] Result<std::string> required_string(const Json& object, const std::string& pointer,
                                                  std::string_view key, std::string_view what);

// A resource quantity ("40Gi", "100m", 8) as text, checked.
[[nodiscard]] Result<std::string> read_quantity(const Json& value, const std::string& pointer);

}  // namespace topoguard::k8s
