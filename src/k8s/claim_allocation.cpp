#include "topoguard/k8s/claim_allocation.h"

#include <array>
#include <string_view>
#include <utility>

#include "fields.h"
#include "topoguard/k8s/object.h"
#include "topoguard/k8s/resource_slice.h"

namespace topoguard::k8s {

Result<std::vector<Allocation>> read_claim_allocations(const Json& object) {
  std::vector<Allocation> allocations;
  const Json* results = find_at(object, "/status/allocation/devices/results");
  if (results == nullptr || results->is_null()) {
    return allocations;
  }
  if (!results->is_array()) {
    return type_error("/status/allocation/devices/results", "array", *results);
  }
  const ObjectRef ref = object_ref(object);
  for (std::size_t i = 0; i < results->size(); ++i) {
    const Json& result = (*results)[i];
    const std::string pointer = append_pointer("/status/allocation/devices/results", i);
    if (!result.is_object()) {
      return type_error(pointer, "object", result);
    }
    std::array<std::string, 3> id;
    for (std::size_t part = 0; part < id.size(); ++part) {
      static constexpr std::array<std::string_view, 3> kParts{"driver", "pool", "device"};
      auto value = required_string(result, pointer, kParts[part], "allocation result");
      if (!value) {
        return value.error();
      }
      id[part] = std::move(value).value();
    }
    auto admin = optional_member(result, pointer, "adminAccess", "boolean", &Json::is_boolean);
    if (!admin) {
      return admin.error();
    }
    if (*admin != nullptr && (*admin)->get<bool>()) {
      continue;
    }
    Allocation allocation;
    allocation.claim = ref.namespace_name + "/" + ref.name;
    allocation.device = id[0] + "/" + id[1] + "/" + id[2];
    const Json* share = member(result, "shareID");
    allocation.shared = share != nullptr && share->is_string();
    auto consumed =
        optional_member(result, pointer, "consumedCapacity", "object", &Json::is_object);
    if (!consumed) {
      return consumed.error();
    }
    static const Json kNone = Json::object();
    for (const auto& [name, quantity] : (*consumed != nullptr ? **consumed : kNone).items()) {
      auto text = read_quantity(quantity,
                                append_pointer(append_pointer(pointer, "consumedCapacity"), name));
      if (!text) {
        return text.error();
      }
      allocation.consumed.insert_or_assign(qualified_name(id[0], name), std::move(text).value());
    }
    allocations.push_back(std::move(allocation));
  }
  return allocations;
}

}  // namespace topoguard::k8s
