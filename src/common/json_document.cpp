#include "topoguard/common/json_document.h"
#include "topoguard/common/json_reader.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <exception>
#include <numeric>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <simdjson.h>

namespace topoguard {
namespace {

namespace dom = simdjson::dom;

using Members = Json::object_t::Container;  // vector<pair<const string, Json>>

Json to_json(dom::element value);

// Up to this many members an object is checked for a repeated key by comparing each new key with
// the earlier ones (at most 28 comparisons); larger objects are sorted once instead, so a body
// with 100,000 keys costs n log n comparisons, never n^2, and no hash an attacker could flood.
constexpr std::size_t kPairwiseMembers = 8;

// Folds repeated keys as nlohmann's parser does: the first position, the last value.
void fold_repeated_keys(Members& members) {
  std::vector<std::size_t> order(members.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  // Stable: equal keys stay in document order, so each run's front is the first occurrence.
  std::stable_sort(order.begin(), order.end(), [&members](std::size_t a, std::size_t b) {
    return members[a].first < members[b].first;
  });
  std::vector<bool> repeated(members.size(), false);
  bool any = false;
  for (std::size_t run = 0; run < order.size();) {
    std::size_t next = run + 1;
    while (next < order.size() && members[order[next]].first == members[order[run]].first) {
      repeated[order[next]] = true;
      ++next;
    }
    if (next - run > 1) {
      members[order[run]].second = std::move(members[order[next - 1]].second);
      any = true;
    }
    run = next;
  }
  if (!any) {
    return;
  }
  // Rebuilt rather than erased in place: the keys are const, so elements cannot be moved over.
  Members kept;
  kept.reserve(members.size());
  for (std::size_t i = 0; i < members.size(); ++i) {
    if (!repeated[i]) {
      kept.emplace_back(members[i].first, std::move(members[i].second));
    }
  }
  members.swap(kept);
}

Json object_to_json(dom::object object) {
  Json result = Json::object();
  // The members are appended to ordered_json's vector directly: its own insert looks each key
  // up by a linear scan, n^2 for an object of n keys.
  auto& members = static_cast<Members&>(result.get_ref<Json::object_t&>());
  members.reserve(object.size());
  for (const dom::key_value_pair field : object) {
    if (members.size() < kPairwiseMembers) {
      auto same = std::find_if(members.begin(), members.end(),
                               [&field](const auto& member) { return member.first == field.key; });
      if (same != members.end()) {
        same->second = to_json(field.value);
        continue;
      }
    }
    members.emplace_back(std::string(field.key), to_json(field.value));
  }
  if (members.size() > kPairwiseMembers) {
    fold_repeated_keys(members);
  }
  return result;
}

Result<dom::element> parse_json_document(dom::parser& parser, std::string_view text,
                                         int max_depth, std::string_view what) {
  // nlohmann skips a UTF-8 byte order mark; simdjson does not.
  if (text.starts_with("\xEF\xBB\xBF")) {
    text.remove_prefix(3);
  }
  Error error;
  // A reused parser keeps its buffers when they are large enough and nest as deep.
  simdjson::error_code code = simdjson::SUCCESS;
  if (parser.capacity() < text.size() || parser.max_depth() != static_cast<std::size_t>(max_depth)) {
    code = parser.allocate(text.size(), static_cast<std::size_t>(max_depth));
  }
  if (code == simdjson::SUCCESS) {
    dom::element root;
    // The text is copied into a padded buffer (simdjson reads past the end in SIMD words).
    code = parser.parse(text.data(), text.size(), /*realloc_if_needed=*/true).get(root);
    if (code == simdjson::SUCCESS) {
      return root;
    }
  }
  switch (code) {
    case simdjson::DEPTH_ERROR:
      error.code = ErrorCode::kTooDeep;
      error.message =
          std::string(what) + " nests deeper than " + std::to_string(max_depth) + " levels";
      break;
    case simdjson::MEMALLOC:
      error.code = ErrorCode::kInternal;
      error.message = "cannot read JSON: out of memory";
      break;
    default:
      error.code = ErrorCode::kInvalidJson;
      error.message = std::string(what) + " is not valid JSON: " + simdjson::error_message(code);
  }
  return error;
}

Json to_json(dom::element value) {
  switch (value.type()) {
    case dom::element_type::OBJECT:
      return object_to_json(value.get_object().value_unsafe());
    case dom::element_type::ARRAY: {
      const dom::array elements = value.get_array().value_unsafe();
      Json result = Json::array();
      auto& array = result.get_ref<Json::array_t&>();
      array.reserve(elements.size());
      for (const dom::element element : elements) {
        array.push_back(to_json(element));
      }
      return result;
    }
    case dom::element_type::STRING:
      return Json(value.get_string().value_unsafe());
    case dom::element_type::INT64: {
      // nlohmann types every non-negative integer as unsigned.
      const std::int64_t number = value.get_int64().value_unsafe();
      return number >= 0 ? Json(static_cast<std::uint64_t>(number)) : Json(number);
    }
    case dom::element_type::UINT64:
      return Json(value.get_uint64().value_unsafe());
    case dom::element_type::DOUBLE:
      return Json(value.get_double().value_unsafe());
    case dom::element_type::BOOL:
      return Json(value.get_bool().value_unsafe());
    case dom::element_type::NULL_VALUE:
      return Json();
  }
  return Json();
}

// The type Json gives the value (to_json's choice), so type names are json_type_name's.
Json::value_t json_value_type(dom::element value) {
  switch (value.type()) {
    case dom::element_type::OBJECT:
      return Json::value_t::object;
    case dom::element_type::ARRAY:
      return Json::value_t::array;
    case dom::element_type::STRING:
      return Json::value_t::string;
    case dom::element_type::INT64:
      return value.get_int64().value_unsafe() >= 0 ? Json::value_t::number_unsigned
                                                   : Json::value_t::number_integer;
    case dom::element_type::UINT64:
      return Json::value_t::number_unsigned;
    case dom::element_type::DOUBLE:
      return Json::value_t::number_float;
    case dom::element_type::BOOL:
      return Json::value_t::boolean;
    case dom::element_type::NULL_VALUE:
      return Json::value_t::null;
  }
  return Json::value_t::discarded;
}

}  // namespace

// A part's handle is simdjson's element (a document pointer and a tape position), copied bytewise.
static_assert(sizeof(dom::element) <= sizeof(JsonPart) &&
              alignof(dom::element) <= alignof(JsonPart) &&
              std::is_trivially_copyable_v<dom::element>);

struct JsonPartAccess {
  static dom::element element(const JsonPart& part) {
    dom::element value;
    std::memcpy(static_cast<void*>(&value), part.handle_, sizeof value);
    return value;
  }
  static JsonPart part(dom::element value) {
    JsonPart part;
    std::memcpy(part.handle_, static_cast<const void*>(&value), sizeof value);
    return part;
  }
};

const char* JsonPart::type_name() const {
  return json_type_name(json_value_type(JsonPartAccess::element(*this)));
}

bool JsonPart::is_null() const {
  return JsonPartAccess::element(*this).type() == dom::element_type::NULL_VALUE;
}

bool JsonPart::is_object() const {
  return JsonPartAccess::element(*this).type() == dom::element_type::OBJECT;
}

std::optional<std::string_view> JsonPart::string() const {
  std::string_view text;
  if (JsonPartAccess::element(*this).get_string().get(text) != simdjson::SUCCESS) {
    return std::nullopt;
  }
  return text;
}

std::optional<bool> JsonPart::boolean() const {
  bool value = false;
  if (JsonPartAccess::element(*this).get_bool().get(value) != simdjson::SUCCESS) {
    return std::nullopt;
  }
  return value;
}

void JsonPart::members(std::span<const std::string_view> names,
                       std::span<std::optional<JsonPart>> found) const {
  dom::object object;
  if (JsonPartAccess::element(*this).get_object().get(object) != simdjson::SUCCESS) {
    return;
  }
  for (const dom::key_value_pair field : object) {
    for (std::size_t i = 0; i < names.size() && i < found.size(); ++i) {
      if (field.key == names[i]) {
        found[i] = JsonPartAccess::part(field.value);
      }
    }
  }
}

Json JsonPart::to_json() const { return topoguard::to_json(JsonPartAccess::element(*this)); }

struct JsonDocumentParser::Parser {
  dom::parser parser;
};

JsonDocumentParser::JsonDocumentParser() : parser_(std::make_unique<Parser>()) {}

JsonDocumentParser::~JsonDocumentParser() = default;

Result<JsonPart> JsonDocumentParser::parse(std::string_view text, int max_depth,
                                           std::string_view what) {
  auto root = parse_json_document(parser_->parser, text, max_depth, what);
  if (!root) {
    return root.error();
  }
  return JsonPartAccess::part(*root);
}

void JsonDocumentParser::release_beyond(std::size_t bytes) {
  if (parser_->parser.capacity() > bytes) {
    parser_->parser = dom::parser();
  }
}

namespace {

// Buffers for documents up to this size are kept for the next one.
constexpr std::size_t kKeptCapacity = 8 * 1024 * 1024;

Result<Json> read_with(JsonDocumentParser& parser, std::string_view text, int max_depth) {
  auto root = parser.parse(text, max_depth);
  if (!root) {
    return root.error();
  }
  try {
    return root->to_json();
  } catch (const std::exception& exception) {  // bad_alloc
    return Error{ErrorCode::kInternal, std::string("cannot read JSON: ") + exception.what(), {}};
  }
}

}  // namespace

Result<Json> read_json(std::string_view text, int max_depth) {
  JsonDocumentParser parser;
  return read_with(parser, text, max_depth);
}

JsonReader::JsonReader(int max_depth) : max_depth_(max_depth) {}

Result<Json> JsonReader::read(std::string_view text) {
  Result<Json> tree = read_with(parser_, text, max_depth_);
  parser_.release_beyond(kKeptCapacity);  // a rare huge document does not keep its buffers
  return tree;
}

}  // namespace topoguard
