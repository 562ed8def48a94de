#include "topoguard/common/json.h"

#include <charconv>

namespace topoguard {

namespace {

void append_escaped_token(std::string& out, std::string_view token) {
  for (char c : token) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
}

}  // namespace

std::string escape_pointer_token(std::string_view token) {
  std::string escaped;
  escaped.reserve(token.size());
  append_escaped_token(escaped, token);
  return escaped;
}

// Both append_pointer()s build the result in one allocation: the engine makes a pointer for every
// element it reads.
std::string append_pointer(std::string_view base, std::string_view token) {
  std::string pointer;
  pointer.reserve(base.size() + 1 + token.size());
  pointer += base;
  pointer += '/';
  append_escaped_token(pointer, token);
  return pointer;
}

std::string append_pointer(std::string_view base, std::size_t index) {
  char digits[24];
  const auto written = std::to_chars(digits, digits + sizeof(digits), index);
  std::string pointer;
  pointer.reserve(base.size() + 1 + static_cast<std::size_t>(written.ptr - digits));
  pointer += base;
  pointer += '/';
  pointer.append(digits, written.ptr);
  return pointer;
}

std::string unescape_pointer_token(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  for (std::size_t i = 0; i < token.size(); ++i) {
    if (token[i] == '~' && i + 1 < token.size()) {
      out += token[i + 1] == '1' ? '/' : '~';
      ++i;
    } else {
      out += token[i];
    }
  }
  return out;
}

const Json* find_at(const Json& document, std::string_view pointer) {
  const Json* current = &document;
  std::size_t position = 0;
  while (position < pointer.size()) {
    if (pointer[position] != '/') {
      return nullptr;
    }
    std::size_t next = pointer.find('/', position + 1);
    if (next == std::string_view::npos) {
      next = pointer.size();
    }
    // Most tokens have nothing escaped and are looked up as they are, without a copy.
    const std::string_view raw = pointer.substr(position + 1, next - position - 1);
    std::string unescaped;
    if (raw.find('~') != std::string_view::npos) {
      unescaped = unescape_pointer_token(raw);
    }
    const std::string_view token = unescaped.empty() ? raw : std::string_view(unescaped);
    if (current->is_object()) {
      auto it = current->find(token);
      if (it == current->end()) {
        return nullptr;
      }
      current = &*it;
    } else if (current->is_array()) {
      std::size_t index = 0;
      auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), index);
      if (ec != std::errc() || end != token.data() + token.size() || index >= current->size()) {
        return nullptr;
      }
      current = &(*current)[index];
    } else {
      return nullptr;
    }
    position = next;
  }
  return current;
}

const Json* member(const Json& object, std::string_view key) {
  if (!object.is_object()) {
    return nullptr;
  }
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

std::string string_member(const Json& object, std::string_view key) {
  return std::string(string_member_view(object, key));
}

std::string_view string_member_view(const Json& object, std::string_view key) {
  const Json* value = member(object, key);
  return value != nullptr && value->is_string()
             ? std::string_view(value->get_ref<const std::string&>())
             : std::string_view();
}

const char* json_type_name(Json::value_t type) {
  switch (type) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::object:
      return "object";
    case Json::value_t::array:
      return "array";
    case Json::value_t::string:
      return "string";
    case Json::value_t::boolean:
      return "boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return "integer";
    case Json::value_t::number_float:
      return "number";
    case Json::value_t::binary:
      return "binary";
    case Json::value_t::discarded:
      return "discarded";
  }
  return "unknown";
}

const char* json_type_name(const Json& value) { return json_type_name(value.type()); }

void release_tree(Json& tree) {
  if (tree.is_object()) {
    auto& members = tree.get_ref<Json::object_t&>();
    for (auto& [key, value] : members) {
      release_tree(value);
    }
    members.clear();
  } else if (tree.is_array()) {
    auto& elements = tree.get_ref<Json::array_t&>();
    for (Json& element : elements) {
      release_tree(element);
    }
    elements.clear();
  }
  tree = nullptr;  // an empty container or a scalar: nothing left to move aside
}

}  // namespace topoguard
