#include "topoguard/common/result.h"

#include "topoguard/common/printable_text.h"

namespace topoguard {

const char* error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kIo:
      return "io_error";
    case ErrorCode::kInvalidYaml:
      return "invalid_yaml";
    case ErrorCode::kInvalidJson:
      return "invalid_json";
    case ErrorCode::kTooLarge:
      return "too_large";
    case ErrorCode::kTooDeep:
      return "too_deep";
    case ErrorCode::kDuplicateKey:
      return "duplicate_key";
    case ErrorCode::kMissingField:
      return "missing_field";
    case ErrorCode::kUnknownField:
      return "unknown_field";
    case ErrorCode::kWrongType:
      return "wrong_type";
    case ErrorCode::kInvalidValue:
      return "invalid_value";
    case ErrorCode::kInvalidPattern:
      return "invalid_pattern";
    case ErrorCode::kUnknownRule:
      return "unknown_rule";
    case ErrorCode::kUsage:
      return "usage";
    case ErrorCode::kInternal:
      return "internal";
  }
  return "internal";
}

std::string Error::to_string() const {
  // Files, fields and messages quote input; escaped, an error stays one line.
  std::string text;
  if (!location.file.empty()) {
    text += printable(location.file);
    if (location.line > 0) {
      text += ":" + std::to_string(location.line);
    }
    text += ": ";
  }
  if (!location.field.empty()) {
    text += printable(location.field) + ": ";
  }
  text += printable(message);
  text += " [";
  text += error_code_name(code);
  text += "]";
  return text;
}

}  // namespace topoguard
