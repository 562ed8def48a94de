#include "topoguard/k8s/claim_view.h"

#include <algorithm>
#include <array>
#include <optional>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "fields.h"
#include "topoguard/k8s/kinds.h"
#include "topoguard/k8s/object.h"

namespace topoguard::k8s {

namespace {

// Reads an optional member of `expected` type into `out`. Returns an error when the member is
// present (and not null) with another type. `pointer` (of `object`) is a string, or a function
// that makes it, for pointers that are only worth making when there is an error to report.
template <typename Pointer, typename Check>
std::optional<Error> typed_member(const Json& object, const Pointer& pointer,
                                     std::string_view key, const char* expected, Check is_type,
                                     const Json*& out) {
  out = member(object, key);
  if (out == nullptr || out->is_null()) {
    out = nullptr;
    return std::nullopt;
  }
  if (!is_type(*out)) {
    if constexpr (std::is_invocable_v<const Pointer&>) {
      return type_error(append_pointer(pointer(), key), expected, *out);
    } else {
      return type_error(append_pointer(pointer, key), expected, *out);
    }
  }
  return std::nullopt;
}

// A list longer than the API server accepts: an input error, before any of it is read.
std::optional<Error> too_many(const Json& list, std::size_t limit, const std::string& pointer,
                              const char* what) {
  if (list.size() <= limit) {
    return std::nullopt;
  }
  return field_error(ErrorCode::kTooLarge, pointer,
                     std::to_string(list.size()) + " " + what +
                         "; the API server accepts at most " + std::to_string(limit));
}

const auto kIsString = [](const Json& v) { return v.is_string(); };
const auto kIsArray = [](const Json& v) { return v.is_array(); };
const auto kIsObject = [](const Json& v) { return v.is_object(); };
const auto kIsInteger = [](const Json& v) { return v.is_number_integer(); };
const auto kIsBoolean = [](const Json& v) { return v.is_boolean(); };

Result<std::vector<DeviceToleration>> read_tolerations(const Json& list,
                                                       const std::string& pointer) {
  std::vector<DeviceToleration> tolerations;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string item_pointer = append_pointer(pointer, i);
    if (!list[i].is_object()) {
      return type_error(item_pointer, "object", list[i]);
    }
    DeviceToleration toleration;
    for (auto [key, out] : {std::pair<std::string_view, std::string*>{"key", &toleration.key},
                            {"operator", &toleration.op},
                            {"value", &toleration.value},
                            {"effect", &toleration.effect}}) {
      const Json* value = nullptr;
      if (auto error = typed_member(list[i], item_pointer, key, "string", kIsString, value)) {
        return *error;
      }
      if (value != nullptr &&
          !(key == "operator" && value->get_ref<const std::string&>().empty())) {
        *out = value->get<std::string>();
      }
    }
    tolerations.push_back(std::move(toleration));
  }
  return tolerations;
}

// `capacity: {requests: {<name>: <quantity>}}`; a quantity may be written as a YAML number.
std::optional<Error> read_capacity_requests(const Json& capacity, const std::string& pointer,
                                            DeviceChoice& choice) {
  const Json* requests = nullptr;
  if (auto error = typed_member(capacity, pointer, "requests", "object", kIsObject, requests)) {
    return *error;
  }
  if (requests == nullptr) {
    return std::nullopt;
  }
  for (const auto& [name, quantity] : requests->items()) {
    const std::string field = append_pointer(append_pointer(pointer, "requests"), name);
    auto text = read_quantity(quantity, field);
    if (!text) {
      return text.error();
    }
    choice.capacity_requests.insert_or_assign(name, std::move(text).value());
  }
  return std::nullopt;
}

// Compiles a CEL expression of a claim (a selector's or a derived attribute's). One the API
// server would refuse, for its size or its syntax, is an input error at its field; the
// field's pointer is only made for an error.
template <typename Pointer>
Result<cel::Program> compile_expression(const std::string& text, std::size_t limit,
                                        const Pointer& pointer, cel::ProgramCache* programs) {
  if (text.size() > limit) {
    return field_error(ErrorCode::kTooLarge, pointer(),
                       "CEL expression of " + std::to_string(text.size()) +
                           " bytes; the API server accepts at most " + std::to_string(limit));
  }
  auto program = programs != nullptr ? programs->compile(text) : cel::compile(text);
  if (!program) {
    return field_error(program.error().code, pointer(), program.error().message);
  }
  return program;
}

// `derivedAttributes` of a request, subrequest or flat v1beta1 request (the same field in every
// version that has it): [{name, expression}], both required.
std::optional<Error> read_derived_attributes(const Json& holder, const std::string& pointer,
                                             std::vector<DerivedAttribute>& out,
                                             cel::ProgramCache* programs) {
  const Json* list = nullptr;
  if (auto error = typed_member(holder, pointer, "derivedAttributes", "array", kIsArray, list)) {
    return error;
  }
  if (list == nullptr) {
    return std::nullopt;
  }
  const std::string list_pointer = append_pointer(pointer, "derivedAttributes");
  if (auto error = too_many(*list, kMaxDerivedAttributes, list_pointer, "derived attributes")) {
    return error;
  }
  out.reserve(list->size());
  for (std::size_t i = 0; i < list->size(); ++i) {
    const std::string item_pointer = append_pointer(list_pointer, i);
    const Json& item = (*list)[i];
    if (!item.is_object()) {
      return type_error(item_pointer, "object", item);
    }
    const Json* name = nullptr;
    const Json* expression = nullptr;
    if (auto error = typed_member(item, item_pointer, "name", "string", kIsString, name)) {
      return error;
    }
    if (auto error =
            typed_member(item, item_pointer, "expression", "string", kIsString, expression)) {
      return error;
    }
    if (name == nullptr || expression == nullptr) {
      return field_error(
          ErrorCode::kMissingField,
          append_pointer(item_pointer, name == nullptr ? "name" : "expression"),
          "derived attribute has no " + std::string(name == nullptr ? "name" : "expression"));
    }
    auto program =
        compile_expression(expression->get_ref<const std::string&>(), kMaxDerivedExpressionBytes,
                           [&item_pointer] { return append_pointer(item_pointer, "expression"); },
                           programs);
    if (!program) {
      return program.error();
    }
    out.push_back(DerivedAttribute{name->get<std::string>(), std::move(*program), item_pointer});
  }
  return std::nullopt;
}

Result<DeviceChoice> read_choice(const Json& holder, const std::string& pointer,
                                 cel::ProgramCache* programs) {
  DeviceChoice choice;
  choice.pointer = pointer;
  const Json* value = nullptr;
  if (auto error = typed_member(holder, pointer, "name", "string", kIsString, value)) {
    return *error;
  }
  if (value != nullptr) {
    choice.subrequest = value->get<std::string>();
  }
  if (auto error =
          typed_member(holder, pointer, "deviceClassName", "string", kIsString, value)) {
    return *error;
  }
  if (value != nullptr) {
    choice.device_class_name = value->get<std::string>();
  }
  if (auto error = typed_member(holder, pointer, "selectors", "array", kIsArray, value)) {
    return *error;
  }
  if (value != nullptr) {
    if (auto error = too_many(*value, kMaxSelectors, append_pointer(pointer, "selectors"),
                              "selectors")) {
      return *error;
    }
    choice.selectors.reserve(value->size());
    choice.selector_programs.reserve(value->size());
    // The selectors' pointers are only made for an error: a valid claim does not need them.
    for (std::size_t i = 0; i < value->size(); ++i) {
      const auto selector_pointer = [&pointer, i] {
        return append_pointer(append_pointer(pointer, "selectors"), i);
      };
      const Json& selector = (*value)[i];
      if (!selector.is_object()) {
        return type_error(selector_pointer(), "object", selector);
      }
      const Json* cel = nullptr;
      if (auto error =
              typed_member(selector, selector_pointer, "cel", "object", kIsObject, cel)) {
        return *error;
      }
      if (cel == nullptr) {
        continue;
      }
      const auto cel_pointer = [&selector_pointer] {
        return append_pointer(selector_pointer(), "cel");
      };
      const Json* expression = nullptr;
      if (auto error =
              typed_member(*cel, cel_pointer, "expression", "string", kIsString, expression)) {
        return *error;
      }
      if (expression == nullptr) {
        continue;
      }
      auto program = compile_expression(
          expression->get_ref<const std::string&>(), kMaxSelectorExpressionBytes,
          [&cel_pointer] { return append_pointer(cel_pointer(), "expression"); }, programs);
      if (!program) {
        return program.error();
      }
      choice.selectors.push_back(expression->get<std::string>());
      choice.selector_programs.push_back(std::move(*program));
    }
  }
  if (auto error = read_derived_attributes(holder, pointer, choice.derived_attributes, programs)) {
    return *error;
  }
  if (auto error =
          typed_member(holder, pointer, "allocationMode", "string", kIsString, value)) {
    return *error;
  }
  if (value != nullptr) {
    // Modes other than All allocate counted devices; unknown ones (a newer API) are read as
    // ExactCount rather than failing the whole input.
    if (value->get_ref<const std::string&>() == "All") {
      choice.allocation_mode = AllocationMode::kAll;
    }
  }
  if (auto error = typed_member(holder, pointer, "count", "integer", kIsInteger, value)) {
    return *error;
  }
  if (value != nullptr) {
    choice.count = value->get<std::int64_t>();
  }
  if (auto error = typed_member(holder, pointer, "adminAccess", "boolean", kIsBoolean, value)) {
    return *error;
  }
  choice.admin_access = value != nullptr && value->get<bool>();
  if (auto error = typed_member(holder, pointer, "tolerations", "array", kIsArray, value)) {
    return *error;
  }
  if (value != nullptr) {
    auto tolerations = read_tolerations(*value, append_pointer(pointer, "tolerations"));
    if (!tolerations) {
      return tolerations.error();
    }
    choice.tolerations = std::move(tolerations).value();
  }
  if (auto error = typed_member(holder, pointer, "capacity", "object", kIsObject, value)) {
    return *error;
  }
  if (value != nullptr) {
    if (auto error = read_capacity_requests(*value, append_pointer(pointer, "capacity"), choice)) {
      return *error;
    }
  }
  return choice;
}

Result<DeviceRequest> read_request(const Json& request, const std::string& pointer,
                                   cel::ProgramCache* programs) {
  if (!request.is_object()) {
    return type_error(pointer, "object", request);
  }
  DeviceRequest view;
  view.pointer = pointer;
  const Json* value = nullptr;
  if (auto error = typed_member(request, pointer, "name", "string", kIsString, value)) {
    return *error;
  }
  if (value == nullptr) {
    return field_error(ErrorCode::kMissingField, append_pointer(pointer, "name"),
                       "device request has no name");
  }
  view.name = value->get<std::string>();

  if (auto error =
          typed_member(request, pointer, "firstAvailable", "array", kIsArray, value)) {
    return *error;
  }
  if (value != nullptr) {
    view.first_available = true;
    const std::string list_pointer = append_pointer(pointer, "firstAvailable");
    if (auto error = too_many(*value, kMaxSubrequests, list_pointer, "subrequests")) {
      return *error;
    }
    view.choices.reserve(value->size());
    for (std::size_t i = 0; i < value->size(); ++i) {
      const std::string sub_pointer = append_pointer(list_pointer, i);
      if (!(*value)[i].is_object()) {
        return type_error(sub_pointer, "object", (*value)[i]);
      }
      auto choice = read_choice((*value)[i], sub_pointer, programs);
      if (!choice) {
        return choice.error();
      }
      view.choices.push_back(std::move(choice).value());
    }
    return view;
  }
  // v1beta2 / v1 nest the single choice under `exactly`; v1beta1 keeps it on the request.
  const Json* exactly = nullptr;
  if (auto error = typed_member(request, pointer, "exactly", "object", kIsObject, exactly)) {
    return *error;
  }
  auto choice = exactly != nullptr
                    ? read_choice(*exactly, append_pointer(pointer, "exactly"), programs)
                    : read_choice(request, pointer, programs);
  if (!choice) {
    return choice.error();
  }
  choice->subrequest.clear();  // a flat request's `name` is the request's, not a subrequest's
  view.choices.push_back(std::move(choice).value());
  return view;
}

Result<DeviceConstraint> read_constraint(const Json& constraint, const std::string& pointer) {
  if (!constraint.is_object()) {
    return type_error(pointer, "object", constraint);
  }
  DeviceConstraint view;
  view.pointer = pointer;
  const Json* value = nullptr;
  if (auto error = typed_member(constraint, pointer, "requests", "array", kIsArray, value)) {
    return *error;
  }
  if (value != nullptr) {
    if (auto error = too_many(*value, kMaxDeviceRequests, append_pointer(pointer, "requests"),
                              "request names")) {
      return *error;
    }
    for (std::size_t i = 0; i < value->size(); ++i) {
      if (!(*value)[i].is_string()) {
        return type_error(append_pointer(append_pointer(pointer, "requests"), i), "string",
                          (*value)[i]);
      }
      view.requests.push_back((*value)[i].get<std::string>());
    }
  }
  if (auto error =
          typed_member(constraint, pointer, "matchAttribute", "string", kIsString, value)) {
    return *error;
  }
  if (value != nullptr) {
    view.match_attribute = value->get<std::string>();
  }
  if (auto error =
          typed_member(constraint, pointer, "distinctAttribute", "string", kIsString, value)) {
    return *error;
  }
  if (value != nullptr) {
    view.distinct_attribute = value->get<std::string>();
  }
  return view;
}

// The index of the first name that repeats among `named` (name, index), by document order of the
// repeat; sorted in place once, so 10,000 names cost n log n comparisons.
std::optional<std::size_t> first_repeat(
    std::vector<std::pair<std::string_view, std::size_t>>& named) {
  std::stable_sort(named.begin(), named.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::optional<std::size_t> repeat;
  for (std::size_t i = 1; i < named.size(); ++i) {
    if (named[i].first == named[i - 1].first && (!repeat || named[i].second < *repeat)) {
      repeat = named[i].second;
    }
  }
  return repeat;
}

Error repeated_name_error(const std::string& pointer, const char* what) {
  return field_error(ErrorCode::kInvalidValue, append_pointer(pointer, "name"),
                     std::string(what) + " name is repeated (the API server rejects the claim)");
}

// Request names are unique in a claim and subrequest names in a request (API validation, which
// runs after mutating webhooks): the rules match constraint entries to requests by name.
std::optional<Error> repeated_request_name(const std::vector<DeviceRequest>& requests) {
  std::vector<std::pair<std::string_view, std::size_t>> named;
  named.reserve(requests.size());
  for (std::size_t i = 0; i < requests.size(); ++i) {
    named.emplace_back(requests[i].name, i);
  }
  if (const auto repeat = first_repeat(named)) {
    return repeated_name_error(requests[*repeat].pointer, "device request");
  }
  for (const DeviceRequest& request : requests) {
    if (!request.first_available) {
      continue;
    }
    named.clear();
    for (std::size_t i = 0; i < request.choices.size(); ++i) {
      named.emplace_back(request.choices[i].subrequest, i);
    }
    if (const auto repeat = first_repeat(named)) {
      return repeated_name_error(request.choices[*repeat].pointer, "subrequest");
    }
  }
  return std::nullopt;
}

}  // namespace

Result<ClaimSpec> read_claim_spec(const Json& object, cel::ProgramCache* programs) {
  // ResourceClaim keeps its claim spec at /spec; the templates one level deeper.
  static constexpr std::array<std::string_view, 3> kTemplatePath{"spec", "spec", "devices"};
  const bool is_claim = string_member_view(object, "kind") == kResourceClaimKind;
  const std::span<const std::string_view> path =
      is_claim ? std::span(kTemplatePath).subspan(1) : std::span(kTemplatePath);
  ClaimSpec view;
  view.devices_pointer = is_claim ? "/spec/devices" : "/spec/spec/devices";
  view.constraints_pointer = view.devices_pointer + "/constraints";

  // Every level down to devices must be an object; a level's pointer is made only for an error.
  const Json* node = &object;
  for (std::size_t level = 0; level < path.size(); ++level) {
    node = member(*node, path[level]);
    if (node == nullptr || node->is_null()) {
      return view;  // nothing requested
    }
    if (!node->is_object()) {
      std::string pointer;
      for (std::size_t i = 0; i <= level; ++i) {
        pointer = append_pointer(pointer, path[i]);
      }
      return type_error(pointer, "object", *node);
    }
  }
  const Json& devices = *node;
  const Json* requests = nullptr;
  if (auto error =
          typed_member(devices, view.devices_pointer, "requests", "array", kIsArray, requests)) {
    return *error;
  }
  if (requests != nullptr) {
    const std::string list_pointer = view.devices_pointer + "/requests";
    if (auto error = too_many(*requests, kMaxDeviceRequests, list_pointer, "device requests")) {
      return *error;
    }
    view.requests.reserve(requests->size());
    for (std::size_t i = 0; i < requests->size(); ++i) {
      auto request = read_request((*requests)[i], append_pointer(list_pointer, i), programs);
      if (!request) {
        return request.error();
      }
      view.requests.push_back(std::move(request).value());
    }
    if (auto error = repeated_request_name(view.requests)) {
      return *error;
    }
  }
  const Json* constraints = nullptr;
  if (auto error = typed_member(devices, view.devices_pointer, "constraints", "array", kIsArray,
                                   constraints)) {
    return *error;
  }
  if (constraints != nullptr) {
    view.has_constraints_array = true;
    if (auto error = too_many(*constraints, kMaxConstraints, view.constraints_pointer,
                              "constraints")) {
      return *error;
    }
    view.constraints.reserve(constraints->size());
    for (std::size_t i = 0; i < constraints->size(); ++i) {
      auto constraint =
          read_constraint((*constraints)[i], append_pointer(view.constraints_pointer, i));
      if (!constraint) {
        return constraint.error();
      }
      view.constraints.push_back(std::move(constraint).value());
    }
  }
  return view;
}

}  // namespace topoguard::k8s
