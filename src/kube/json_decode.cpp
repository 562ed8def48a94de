#include "json_decode.h"

#include <simdjson.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

namespace topoguard::kube {

namespace {

namespace dom = simdjson::dom;

using Members = Json::object_t::Container;  // vector<pair<const string, Json>>

// Objects up to this size look for a repeated key pairwise; larger ones sort their keys once.
constexpr std::size_t kPairwiseMembers = 8;
// Buffers for documents up to this size are kept for the next one.
constexpr std::size_t kKeptCapacity = 8 * 1024 * 1024;

// Folds repeated keys as nlohmann's parser does: the first position, the last value.
void fold_repeated_keys(Members& members) {
  std::vector<std::size_t> order(members.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
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
  Members kept;  // the keys are const: rebuilt rather than erased in place
  kept.reserve(members.size());
  for (std::size_t i = 0; i < members.size(); ++i) {
    if (!repeated[i]) {
      kept.emplace_back(members[i].first, std::move(members[i].second));
    }
  }
  members.swap(kept);
}

Json to_json(dom::element value);

Json object_to_json(dom::object object) {
  Json result = Json::object();
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

}  // namespace

struct JsonDecoder::Parser {
  dom::parser parser;
};

JsonDecoder::JsonDecoder(int max_depth)
    : parser_(std::make_unique<Parser>()), max_depth_(max_depth) {}

JsonDecoder::~JsonDecoder() = default;

Result<Json> JsonDecoder::decode(std::string_view text) {
  dom::parser& parser = parser_->parser;
  simdjson::error_code code = simdjson::SUCCESS;
  if (parser.capacity() < text.size() ||
      parser.max_depth() != static_cast<std::size_t>(max_depth_)) {
    code = parser.allocate(std::max<std::size_t>(text.size(), 4096),
                           static_cast<std::size_t>(max_depth_));
  }
  dom::element root;
  if (code == simdjson::SUCCESS) {
    code = parser.parse(text.data(), text.size(), /*realloc_if_needed=*/true).get(root);
  }
  if (code == simdjson::DEPTH_ERROR) {
    return Error{ErrorCode::kTooDeep,
                 "JSON nests deeper than " + std::to_string(max_depth_) + " levels",
                 {}};
  }
  if (code != simdjson::SUCCESS) {
    return Error{ErrorCode::kInvalidJson,
                 std::string("not valid JSON: ") + simdjson::error_message(code),
                 {}};
  }
  Result<Json> tree = Error{ErrorCode::kInternal, "", {}};
  try {
    tree = to_json(root);
  } catch (const std::exception& exception) {  // bad_alloc
    tree = Error{ErrorCode::kInternal, std::string("cannot read JSON: ") + exception.what(), {}};
  }
  if (text.size() > kKeptCapacity) {
    parser_ = std::make_unique<Parser>();  // a rare huge document does not keep its buffers
  }
  return tree;
}

}  // namespace topoguard::kube
