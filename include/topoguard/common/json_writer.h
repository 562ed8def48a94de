// The one JSON writer of the project: admission responses and patches, log lines and reports are
// all written with it. It appends to a caller's string without building a tree, so a response or
// a log line costs one pass over what it says. Output is byte for byte what nlohmann's
// Json::dump(indent, ' ', false, error_handler_t::replace) gives for the same values: compact
// with indent < 0, otherwise one member per line, `"key": value`, `indent` spaces per level.
// Invalid UTF-8 in strings is replaced by U+FFFD, so whatever a client sent is written as JSON.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "topoguard/common/json.h"

namespace topoguard {

// Appends `text` as a JSON string literal (quotes, escapes, invalid UTF-8 replaced).
void append_json_string(std::string& out, std::string_view text);

// `value` as JSON text: compact (indent < 0) or pretty-printed.
[[nodiscard]] std::string to_json_text(const Json& value, int indent = -1);

class JsonWriter {
 public:
  // Appends to `out`, which must outlive the writer.
  explicit JsonWriter(std::string& out, int indent = -1) : out_(out), indent_(indent) {}

  JsonWriter& begin_object() { return open('{'); }
  JsonWriter& end_object() { return close('}'); }
  JsonWriter& begin_array() { return open('['); }
  JsonWriter& end_array() { return close(']'); }
  // The next value is the member `name` of the open object.
  JsonWriter& key(std::string_view name);

  JsonWriter& string(std::string_view text);
  JsonWriter& boolean(bool value);
  JsonWriter& null();
  JsonWriter& number(std::int64_t value);
  JsonWriter& number(std::uint64_t value);
  JsonWriter& number(double value);
  // A whole tree, laid out as the writer lays out everything else.
  JsonWriter& value(const Json& tree);

  // value() for every type a member usually has, so that reports read as a list of members.
  JsonWriter& value(std::string_view text) { return string(text); }
  JsonWriter& value(const char* text) { return string(text); }
  JsonWriter& value(const std::string& text) { return string(text); }
  JsonWriter& value(bool flag) { return boolean(flag); }
  template <typename Integer>
    requires(std::is_integral_v<Integer> && !std::is_same_v<Integer, bool>)
  JsonWriter& value(Integer number_value) {
    if constexpr (std::is_signed_v<Integer>) {
      return number(static_cast<std::int64_t>(number_value));
    } else {
      return number(static_cast<std::uint64_t>(number_value));
    }
  }
  JsonWriter& value(double number_value) { return number(number_value); }

  template <typename T>
  JsonWriter& member(std::string_view name, const T& member_value) {
    key(name);
    return value(member_value);
  }

 private:
  struct Level {
    bool empty = true;
  };

  JsonWriter& open(char bracket);
  JsonWriter& close(char bracket);
  // Separator and indentation before a value (after a key: nothing).
  void before_value();
  void new_line(std::size_t depth);

  std::string& out_;
  int indent_;
  bool after_key_ = false;
  std::vector<Level> levels_;
};

}  // namespace topoguard
