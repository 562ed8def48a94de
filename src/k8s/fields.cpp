#include "fields.h"

#include <optional>
#include <utility>

#include "topoguard/cel/value.h"
#include "topoguard/k8s/object.h"

namespace topoguard::k8s {

Error field_error(ErrorCode code, std::string pointer, std::string message) {
  return Error{code, std::move(message), SourceLocation{"", 0, std::move(pointer)}};
}

Error type_error(std::string pointer, const char* expected, const Json& actual) {
  return field_error(ErrorCode::kWrongType, std::move(pointer),
                     std::string("expected ") + expected + ", got " + json_type_name(actual));
}

Result<const Json*> optional_member(const Json& object, const std::string& pointer,
                                    std::string_view key, const char* expected,
                                    bool (Json::*is_type)() const noexcept) {
  const Json* value = member(object, key);
  if (value == nullptr || value->is_null()) {
    return static_cast<const Json*>(nullptr);
  }
  if (!(value->*is_type)()) {
    return type_error(append_pointer(pointer, key), expected, *value);
  }
  return value;
}

Result<std::string> required_string(const Json& object, const std::string& pointer,
                                    std::string_view key, std::string_view what) {
  auto value = optional_member(object, pointer, key, "string", &Json::is_string);
  if (!value) {
    return value.error();
  }
  if (*value == nullptr || (*value)->get_ref<const std::string&>().empty()) {
    return field_error(ErrorCode::kMissingField, append_pointer(pointer, key),
                       std::string(what) + " has no " + std::string(key));
  }
  return (*value)->get<std::string>();
}

Result<std::string> read_quantity(const Json& value, const std::string& pointer) {
  std::optional<std::string> text = quantity_text(value);
  if (!text) {
    return type_error(pointer, "quantity string", value);
  }
  if (!cel::Quantity::parse(*text)) {
    return field_error(ErrorCode::kInvalidValue, pointer,
                       "\"" + *text + "\" is not a quantity (e.g. 40Gi, 100m, 8)");
  }
  return *std::move(text);
}

}  // namespace topoguard::k8s
