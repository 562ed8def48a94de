#include "topoguard/common/json_writer.h"

#include <array>
#include <charconv>

#include <simdjson.h>

namespace topoguard {
namespace {

constexpr std::string_view kHex = "0123456789abcdef";

// What append_json_string does with each byte: copy it, escape it, or (not ASCII) copy it once
// the whole text is known to be UTF-8.
enum class ByteClass : unsigned char { kCopy, kEscape, kNonAscii };

constexpr std::array<ByteClass, 256> kByteClasses = [] {
  std::array<ByteClass, 256> classes{};
  for (std::size_t byte = 0; byte < classes.size(); ++byte) {
    if (byte < 0x20U || byte == '"' || byte == '\\') {
      classes[byte] = ByteClass::kEscape;
    } else if (byte >= 0x80U) {
      classes[byte] = ByteClass::kNonAscii;
    } else {
      classes[byte] = ByteClass::kCopy;
    }
  }
  return classes;
}();

template <typename Number>
void append_integer(std::string& out, Number value) {
  char digits[24];
  const auto written = std::to_chars(digits, digits + sizeof(digits), value);
  out.append(digits, written.ptr);
}

}  // namespace

void append_json_string(std::string& out, std::string_view text) {
  // One pass: valid UTF-8 is copied as it is (only ASCII needs escapes); text with invalid UTF-8
  // goes through nlohmann instead, whose replacement of bad sequences is the reference.
  const std::size_t start = out.size();
  out.reserve(out.size() + text.size() + 2);
  out += '"';
  bool utf8_known_valid = false;
  std::size_t run = 0;  // start of the bytes not yet appended that need no escape
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    const ByteClass byte_class = kByteClasses[byte];
    if (byte_class == ByteClass::kCopy) {
      continue;  // appended with its run, not a character at a time
    }
    if (byte_class == ByteClass::kNonAscii) {
      if (!utf8_known_valid && !simdjson::validate_utf8(text.data(), text.size())) {
        out.resize(start);
        out += Json(text).dump(-1, ' ', false, Json::error_handler_t::replace);
        return;
      }
      utf8_known_valid = true;
      continue;
    }
    out.append(text.data() + run, i - run);
    run = i + 1;
    switch (text[i]) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        out += "\\u00";
        out += kHex[byte >> 4U];
        out += kHex[byte & 0x0FU];
    }
  }
  out.append(text.data() + run, text.size() - run);
  out += '"';
}

std::string to_json_text(const Json& value, int indent) {
  std::string out;
  JsonWriter(out, indent).value(value);
  return out;
}

JsonWriter& JsonWriter::key(std::string_view name) {
  before_value();
  append_json_string(out_, name);
  out_ += indent_ < 0 ? ":" : ": ";
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::string(std::string_view text) {
  before_value();
  append_json_string(out_, text);
  return *this;
}

JsonWriter& JsonWriter::boolean(bool value) {
  before_value();
  out_ += value ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::null() {
  before_value();
  out_ += "null";
  return *this;
}

JsonWriter& JsonWriter::number(std::int64_t value) {
  before_value();
  append_integer(out_, value);
  return *this;
}

JsonWriter& JsonWriter::number(std::uint64_t value) {
  before_value();
  append_integer(out_, value);
  return *this;
}

JsonWriter& JsonWriter::number(double value) {
  before_value();
  // nlohmann's shortest round-trip format ("1.0", "1e+100", null for NaN and infinities).
  out_ += Json(value).dump();
  return *this;
}

JsonWriter& JsonWriter::value(const Json& tree) {
  switch (tree.type()) {
    case Json::value_t::object:
      begin_object();
      for (const auto& [name, member_value] : tree.get_ref<const Json::object_t&>()) {
        key(name);
        value(member_value);
      }
      return end_object();
    case Json::value_t::array:
      begin_array();
      for (const Json& element : tree.get_ref<const Json::array_t&>()) {
        value(element);
      }
      return end_array();
    case Json::value_t::string:
      return string(tree.get_ref<const std::string&>());
    case Json::value_t::boolean:
      return boolean(tree.get<bool>());
    case Json::value_t::number_integer:
      return number(tree.get<std::int64_t>());
    case Json::value_t::number_unsigned:
      return number(tree.get<std::uint64_t>());
    case Json::value_t::number_float:
      return number(tree.get<double>());
    case Json::value_t::null:
    case Json::value_t::binary:  // never in a tree read from text; as nlohmann, written raw
    case Json::value_t::discarded:
      before_value();
      out_ += tree.dump(indent_, ' ', false, Json::error_handler_t::replace);
      return *this;
  }
  return *this;
}

JsonWriter& JsonWriter::open(char bracket) {
  before_value();
  out_ += bracket;
  levels_.push_back(Level{});
  return *this;
}

JsonWriter& JsonWriter::close(char bracket) {
  const bool was_empty = levels_.empty() || levels_.back().empty;
  if (!levels_.empty()) {
    levels_.pop_back();
  }
  if (!was_empty) {
    new_line(levels_.size());
  }
  out_ += bracket;
  return *this;
}

void JsonWriter::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (levels_.empty()) {
    return;
  }
  Level& level = levels_.back();
  if (!level.empty) {
    out_ += ',';
  }
  level.empty = false;
  new_line(levels_.size());
}

void JsonWriter::new_line(std::size_t depth) {
  if (indent_ < 0) {
    return;
  }
  out_ += '\n';
  out_.append(depth * static_cast<std::size_t>(indent_), ' ');
}

}  // namespace topoguard
