#include "topoguard/engine/json_patch.h"

#include <cstddef>
#include <exception>
#include <string>
#include <string_view>
#include <utility>

namespace topoguard::engine {
namespace {

// ordered_json keeps an object's members in a vector of pair<const string, Json>. That pair's
// move constructor may throw (the const key is copied), so a vector growing on `add` copies
// every sibling subtree instead of moving it: adding constraints beside a claim's requests
// copied all the requests. Giving each object an `add` will grow room for its new members
// first, with the values moved, leaves nlohmann's patch with nothing to copy. Only capacity
// changes here; what the patch does, and how it fails, is still nlohmann's.
void make_room_for_added_members(Json& document, const JsonPatch& patch) {
  const std::size_t adds = patch.size();  // every operation is an `add`
  for (const PatchOperation& operation : patch) {
    const std::string_view pointer = operation.path;
    const std::size_t last_slash = pointer.rfind('/');
    if (last_slash == std::string_view::npos) {
      continue;
    }
    // find_at() never throws and finds nothing nlohmann would not; `document` is ours to change.
    auto* parent = const_cast<Json*>(find_at(document, pointer.substr(0, last_slash)));
    if (parent == nullptr || !parent->is_object()) {
      continue;
    }
    auto& members = static_cast<Json::object_t::Container&>(parent->get_ref<Json::object_t&>());
    if (members.capacity() - members.size() >= adds) {
      continue;
    }
    Json::object_t::Container grown;
    grown.reserve(members.size() + adds);
    for (auto& [key, value] : members) {
      grown.emplace_back(key, std::move(value));
    }
    members = std::move(grown);
  }
}

}  // namespace

Json patch_to_json(const JsonPatch& patch) {
  Json operations = Json::array();
  for (const PatchOperation& operation : patch) {
    Json entry = Json::object();
    entry["op"] = "add";
    entry["path"] = operation.path;
    entry["value"] = operation.value;
    operations.push_back(std::move(entry));
  }
  return operations;
}

Result<Json> apply_patch(const Json& document, const JsonPatch& patch) {
  Json patched = document;
  if (Status applied = apply_patch_in_place(patched, patch); !applied) {
    return applied.error();
  }
  return patched;
}

Status apply_patch_in_place(Json& document, const JsonPatch& patch) {
  try {
    make_room_for_added_members(document, patch);
    document.patch_inplace(patch_to_json(patch));
    return Ok{};
  } catch (const std::exception& exception) {
    return Error{ErrorCode::kInvalidValue, std::string("patch does not apply: ") + exception.what(),
                 {}};
  }
}

}  // namespace topoguard::engine
