#include "topoguard/k8s/resource_slice.h"

#include <algorithm>
#include <array>
#include <set>
#include <utility>

#include "fields.h"
#include "topoguard/cel/value.h"
#include "topoguard/k8s/object.h"

namespace topoguard::k8s {

namespace {

constexpr auto optional = &optional_member;

// The version without build metadata: "1.2.3+abc" and "1.2.3" are the same version.
std::string_view version_precedence_part(std::string_view version) {
  return version.substr(0, version.find('+'));
}

Result<AttributeValue::Scalar> read_scalar(const Json& value, AttributeValue::Type type,
                                           const std::string& pointer) {
  switch (type) {
    case AttributeValue::Type::kInt:
      if (!value.is_number_integer()) {
        return type_error(pointer, "integer", value);
      }
      return AttributeValue::Scalar(value.get<std::int64_t>());
    case AttributeValue::Type::kBool:
      if (!value.is_boolean()) {
        return type_error(pointer, "boolean", value);
      }
      return AttributeValue::Scalar(value.get<bool>());
    case AttributeValue::Type::kString:
      if (!value.is_string()) {
        return type_error(pointer, "string", value);
      }
      return AttributeValue::Scalar(value.get<std::string>());
    case AttributeValue::Type::kVersion:
      if (!value.is_string()) {
        return type_error(pointer, "string", value);
      }
      if (!cel::Version::parse(value.get_ref<const std::string&>())) {
        return field_error(ErrorCode::kInvalidValue, pointer,
                           "\"" + value.get<std::string>() + "\" is not a semantic version");
      }
      return AttributeValue::Scalar(value.get<std::string>());
  }
  return field_error(ErrorCode::kInternal, pointer, "unknown attribute type");
}

struct AttributeField {
  std::string_view name;
  AttributeValue::Type type;
  bool list;
};

constexpr std::array<AttributeField, 8> kAttributeFields{{
    {"int", AttributeValue::Type::kInt, false},
    {"bool", AttributeValue::Type::kBool, false},
    {"string", AttributeValue::Type::kString, false},
    {"version", AttributeValue::Type::kVersion, false},
    {"ints", AttributeValue::Type::kInt, true},
    {"bools", AttributeValue::Type::kBool, true},
    {"strings", AttributeValue::Type::kString, true},
    {"versions", AttributeValue::Type::kVersion, true},
}};

Result<AttributeValue> read_attribute(const Json& attribute, const std::string& pointer) {
  if (!attribute.is_object()) {
    return type_error(pointer, "object", attribute);
  }
  std::optional<AttributeValue> result;
  for (const auto& [key, value] : attribute.items()) {
    const auto field =
        std::find_if(kAttributeFields.begin(), kAttributeFields.end(),
                     [&key = key](const AttributeField& f) { return f.name == key; });
    const std::string value_pointer = append_pointer(pointer, key);
    if (field == kAttributeFields.end()) {
      return field_error(ErrorCode::kUnknownField, value_pointer,
                         "unknown attribute value type \"" + key +
                             "\" (int, bool, string, version or their lists)");
    }
    if (result) {
      return field_error(ErrorCode::kInvalidValue, value_pointer,
                         "an attribute holds exactly one value, also has " +
                             std::string(attribute_type_name(result->type)));
    }
    AttributeValue parsed;
    parsed.type = field->type;
    parsed.list = field->list;
    if (field->list) {
      if (!value.is_array()) {
        return type_error(value_pointer, "array", value);
      }
      for (std::size_t i = 0; i < value.size(); ++i) {
        auto scalar = read_scalar(value[i], field->type, append_pointer(value_pointer, i));
        if (!scalar) {
          return scalar.error();
        }
        parsed.values.push_back(std::move(scalar).value());
      }
    } else {
      auto scalar = read_scalar(value, field->type, value_pointer);
      if (!scalar) {
        return scalar.error();
      }
      parsed.values.push_back(std::move(scalar).value());
    }
    result = std::move(parsed);
  }
  if (!result) {
    return field_error(ErrorCode::kMissingField, pointer,
                       "an attribute needs one of int, bool, string, version");
  }
  return std::move(*result);
}

// An optional quantity member.
Result<std::optional<std::string>> optional_quantity(const Json& holder, const std::string& pointer,
                                                     std::string_view key) {
  const Json* value = member(holder, key);
  if (value == nullptr || value->is_null()) {
    return std::optional<std::string>();
  }
  auto text = read_quantity(*value, append_pointer(pointer, key));
  if (!text) {
    return text.error();
  }
  return std::optional<std::string>(std::move(text).value());
}

// Moves what `read` holds into `out`; its error when it holds none.
template <typename T, typename Out>
std::optional<Error> take(Result<T>&& read, Out& out) {
  if (!read) {
    return read.error();
  }
  out = std::move(read).value();
  return std::nullopt;
}

// Every element of the optional array member `key`, read by `read(element, pointer)` (a Result).
template <typename Read>
auto read_list(const Json& holder, const std::string& pointer, std::string_view key, Read&& read)
    -> Result<std::vector<std::decay_t<decltype(*read(holder, pointer))>>> {
  std::vector<std::decay_t<decltype(*read(holder, pointer))>> out;
  auto list = optional(holder, pointer, key, "array", &Json::is_array);
  if (!list) {
    return list.error();
  }
  const std::string list_pointer = append_pointer(pointer, key);
  for (std::size_t i = 0; *list != nullptr && i < (*list)->size(); ++i) {
    auto element = read((**list)[i], append_pointer(list_pointer, i));
    if (!element) {
      return element.error();
    }
    out.push_back(std::move(element).value());
  }
  return out;
}

// `{<name>: {value: <quantity>}}`: counters of a counter set or of a device's consumption.
Result<std::map<std::string, std::string, std::less<>>> read_counters(const Json& holder,
                                                                      const std::string& pointer) {
  std::map<std::string, std::string, std::less<>> counters;
  auto list = optional(holder, pointer, "counters", "object", &Json::is_object);
  if (!list) {
    return list.error();
  }
  if (*list == nullptr) {
    return counters;
  }
  const std::string list_pointer = append_pointer(pointer, "counters");
  for (const auto& [name, counter] : (*list)->items()) {
    const std::string counter_pointer = append_pointer(list_pointer, name);
    if (!counter.is_object()) {
      return type_error(counter_pointer, "object", counter);
    }
    auto value = optional_quantity(counter, counter_pointer, "value");
    if (!value) {
      return value.error();
    }
    if (!*value) {
      return field_error(ErrorCode::kMissingField, append_pointer(counter_pointer, "value"),
                         "counter has no value");
    }
    counters.emplace(name, std::move(**value));
  }
  return counters;
}

Result<RequestPolicy> read_request_policy(const Json& policy, const std::string& pointer) {
  if (!policy.is_object()) {
    return type_error(pointer, "object", policy);
  }
  RequestPolicy out;
  if (auto error = take(optional_quantity(policy, pointer, "default"), out.default_value)) {
    return *error;
  }
  if (auto error =
          take(read_list(policy, pointer, "validValues", read_quantity), out.valid_values)) {
    return *error;
  }
  auto range = optional(policy, pointer, "validRange", "object", &Json::is_object);
  if (!range) {
    return range.error();
  }
  if (*range != nullptr) {
    const std::string range_pointer = append_pointer(pointer, "validRange");
    for (auto [key, out_field] :
         {std::pair<std::string_view, std::optional<std::string>*>{"min", &out.min},
          {"max", &out.max},
          {"step", &out.step}}) {
      auto value = optional_quantity(**range, range_pointer, key);
      if (!value) {
        return value.error();
      }
      *out_field = std::move(value).value();
    }
  }
  return out;
}

// `{<key>: <name>, counters: {...}}`: a counter set of a slice's sharedCounters (key "name") or
// a device's consumption from one (key "counterSet").
using NamedCounters = std::pair<std::string, std::map<std::string, std::string, std::less<>>>;
Result<NamedCounters> read_named_counters(const Json& entry, const std::string& pointer,
                                          std::string_view key) {
  if (!entry.is_object()) {
    return type_error(pointer, "object", entry);
  }
  auto name = required_string(entry, pointer, key, "counters");
  if (!name) {
    return name.error();
  }
  auto counters = read_counters(entry, pointer);
  if (!counters) {
    return counters.error();
  }
  return NamedCounters(std::move(name).value(), std::move(counters).value());
}

Result<NamedCounters> read_counter_set(const Json& set, const std::string& pointer) {
  return read_named_counters(set, pointer, "name");
}

Result<CounterConsumption> read_consumption(const Json& entry, const std::string& pointer) {
  auto read = read_named_counters(entry, pointer, "counterSet");
  if (!read) {
    return read.error();
  }
  return CounterConsumption{std::move(read->first), std::move(read->second)};
}

// Reads attributes, capacity and taints from a v1/v1beta2 device or a v1beta1 `basic` object.
Status read_device_properties(const Json& holder, const std::string& pointer, Device& device,
                              SliceInterner& interner) {
  DeviceExtras extras;
  auto attributes = optional(holder, pointer, "attributes", "object", &Json::is_object);
  if (!attributes) {
    return attributes.error();
  }
  if (*attributes != nullptr) {
    std::map<std::string, AttributeValue, std::less<>> qualified_attributes;
    std::map<std::string, AttributeValue, std::less<>> short_attributes;
    const std::string& driver = device.driver.get();
    const std::string attributes_pointer = append_pointer(pointer, "attributes");
    for (const auto& [name, value] : (*attributes)->items()) {
      auto attribute = read_attribute(value, append_pointer(attributes_pointer, name));
      if (!attribute) {
        return attribute.error();
      }
      // A qualified name wins over the same name written short (the allocator looks it up first).
      const bool qualified = name.find('/') != std::string::npos;
      std::string key = qualified_name(driver, name);
      if (qualified) {
        qualified_attributes.insert_or_assign(std::move(key), std::move(attribute).value());
      } else {
        short_attributes.emplace(name, *attribute);
        qualified_attributes.emplace(std::move(key), std::move(attribute).value());
      }
    }
    // A short name whose qualified entry holds its value is a bit on that entry.
    std::size_t index = 0;
    for (const auto& [qualified_name, value] : qualified_attributes) {
      const bool in_driver_domain = qualified_name.size() > driver.size() &&
                                    qualified_name.starts_with(driver) &&
                                    qualified_name[driver.size()] == '/';
      const auto it =
          in_driver_domain
              ? short_attributes.find(std::string_view(qualified_name).substr(driver.size() + 1))
              : short_attributes.end();
      if (index < 64 && it != short_attributes.end() && it->second == value) {
        device.short_names |= std::uint64_t{1} << index;
        short_attributes.erase(it);
      }
      ++index;
    }
    device.attributes =
        AttributeTable(std::move(qualified_attributes), interner.names, interner.attributes);
    extras.other_short_attributes =
        AttributeTable(std::move(short_attributes), interner.names, interner.attributes);
  }
  auto capacity = optional(holder, pointer, "capacity", "object", &Json::is_object);
  if (!capacity) {
    return capacity.error();
  }
  if (*capacity != nullptr) {
    std::map<std::string, std::string, std::less<>> quantities;
    const std::string capacity_pointer = append_pointer(pointer, "capacity");
    for (const auto& [name, entry] : (*capacity)->items()) {
      std::string entry_pointer = append_pointer(capacity_pointer, name);
      // {value: <quantity>, requestPolicy} since v1beta1; a bare quantity in v1alpha3.
      const Json* value = &entry;
      if (entry.is_object()) {
        value = member(entry, "value");
        if (value == nullptr) {
          return field_error(ErrorCode::kMissingField, append_pointer(entry_pointer, "value"),
                             "capacity has no value");
        }
        if (const Json* policy = member(entry, "requestPolicy");
            policy != nullptr && !policy->is_null()) {
          auto read = read_request_policy(*policy, append_pointer(entry_pointer, "requestPolicy"));
          if (!read) {
            return read.error();
          }
          extras.request_policies.insert_or_assign(qualified_name(device.driver.get(), name),
                                                   std::move(read).value());
        }
        entry_pointer = append_pointer(entry_pointer, "value");
      }
      auto text = read_quantity(*value, entry_pointer);
      if (!text) {
        return text.error();
      }
      quantities.insert_or_assign(qualified_name(device.driver.get(), name),
                                  std::move(text).value());
    }
    device.capacity = CapacityTable(std::move(quantities), interner.names, interner.names.names);
  }
  auto multiple =
      optional(holder, pointer, "allowMultipleAllocations", "boolean", &Json::is_boolean);
  if (!multiple) {
    return multiple.error();
  }
  device.allow_multiple_allocations = *multiple != nullptr && (*multiple)->get<bool>();
  if (auto error = take(read_list(holder, pointer, "taints", read_device_taint), extras.taints)) {
    return *error;
  }
  if (auto error = take(read_list(holder, pointer, "consumesCounters", read_consumption),
                        extras.consumes_counters)) {
    return *error;
  }
  if (!extras.empty()) {
    device.extras = std::make_shared<const DeviceExtras>(std::move(extras));
  }
  return Ok{};
}

// nodeName / allNodes / nodeSelector of a slice or (perDeviceNodeSelection) of a device.
// Returns nullopt when none is set.
Result<std::optional<std::pair<NodeScope, std::string>>> read_node_scope(
    const Json& holder, const std::string& pointer) {
  using Scope = std::optional<std::pair<NodeScope, std::string>>;
  auto node_name = optional(holder, pointer, "nodeName", "string", &Json::is_string);
  if (!node_name) {
    return node_name.error();
  }
  if (*node_name != nullptr && !(*node_name)->get_ref<const std::string&>().empty()) {
    return Scope(std::pair(NodeScope::kNode, (*node_name)->get<std::string>()));
  }
  auto all_nodes = optional(holder, pointer, "allNodes", "boolean", &Json::is_boolean);
  if (!all_nodes) {
    return all_nodes.error();
  }
  if (*all_nodes != nullptr && (*all_nodes)->get<bool>()) {
    return Scope(std::pair(NodeScope::kAllNodes, std::string()));
  }
  auto selector = optional(holder, pointer, "nodeSelector", "object", &Json::is_object);
  if (!selector) {
    return selector.error();
  }
  if (*selector != nullptr) {
    return Scope(std::pair(NodeScope::kNodeSelector, std::string()));
  }
  return Scope();
}

}  // namespace

std::string qualified_name(std::string_view driver, std::string_view name) {
  if (name.find('/') != std::string_view::npos) {
    return std::string(name);
  }
  return std::string(driver) + "/" + std::string(name);
}

Result<DeviceTaint> read_device_taint(const Json& taint, const std::string& pointer) {
  if (!taint.is_object()) {
    return type_error(pointer, "object", taint);
  }
  DeviceTaint out;
  for (auto [key, field] : {std::pair<std::string_view, std::string*>{"key", &out.key},
                            {"value", &out.value},
                            {"effect", &out.effect}}) {
    auto value = optional(taint, pointer, key, "string", &Json::is_string);
    if (!value) {
      return value.error();
    }
    if (*value != nullptr) {
      *field = (*value)->get<std::string>();
    }
  }
  return out;
}

std::string_view attribute_type_name(AttributeValue::Type type) {
  switch (type) {
    case AttributeValue::Type::kInt:
      return "int";
    case AttributeValue::Type::kBool:
      return "bool";
    case AttributeValue::Type::kString:
      return "string";
    case AttributeValue::Type::kVersion:
      return "version";
  }
  return "unknown";
}

std::string scalar_to_string(const AttributeValue::Scalar& value) {
  if (const auto* number = std::get_if<std::int64_t>(&value)) {
    return std::to_string(*number);
  }
  if (const auto* flag = std::get_if<bool>(&value)) {
    return *flag ? "true" : "false";
  }
  return std::get<std::string>(value);
}

bool AttributeValue::contains(const Scalar& value) const {
  return std::any_of(values.begin(), values.end(), [&](const Scalar& element) {
    if (type == Type::kVersion && element.index() == value.index()) {
      return version_precedence_part(std::get<std::string>(element)) ==
             version_precedence_part(std::get<std::string>(value));
    }
    return element == value;
  });
}

std::size_t AttributeValueHash::operator()(const AttributeValue& value) const {
  std::size_t hash = static_cast<std::size_t>(value.type) * 2 + (value.list ? 1 : 0);
  for (const AttributeValue::Scalar& scalar : value.values) {
    hash = hash * 31 + std::hash<AttributeValue::Scalar>()(scalar);
  }
  return hash;
}

bool AttributeValue::shares_element(const AttributeValue& other) const {
  return type == other.type && std::any_of(other.values.begin(), other.values.end(),
                                           [&](const Scalar& value) { return contains(value); });
}

std::string AttributeValue::to_string() const {
  if (!list && values.size() == 1) {
    return scalar_to_string(values[0]);
  }
  std::string text = "[";
  for (std::size_t i = 0; i < values.size(); ++i) {
    text += (i == 0 ? "" : ", ") + scalar_to_string(values[i]);
  }
  return text + "]";
}

const AttributeValue* Device::attribute(std::string_view qualified_name) const {
  if (qualified_name.find('/') == std::string_view::npos) {
    return short_attribute(qualified_name);
  }
  const auto it = attributes.find(qualified_name);
  return it == attributes.end() ? nullptr : &it->second;
}

const AttributeValue* Device::short_attribute(std::string_view short_name) const {
  const AttributeTable& others = other_short_attributes();
  if (const auto it = others.find(short_name); it != others.end()) {
    return &it->second;
  }
  const auto it = attributes.find(driver.get(), short_name);
  if (it == attributes.end()) {
    return nullptr;
  }
  const std::size_t index = attributes.position(it);
  return index < 64 && (short_names >> index & 1U) != 0 ? &it->second : nullptr;
}

std::string Device::id() const { return driver.get() + "/" + pool.get() + "/" + name.get(); }

void Device::add_taint(DeviceTaint taint) {
  auto copy = std::make_shared<DeviceExtras>(extras_or_none());
  copy->taints.push_back(std::move(taint));
  extras = std::move(copy);
}

const DeviceExtras& Device::extras_or_none() const {
  static const DeviceExtras kNone;
  return extras != nullptr ? *extras : kNone;
}

Result<ParsedSlicePtr> read_resource_slice(const Json& object) {
  SliceInterner interner;
  return read_resource_slice(object, interner);
}

Result<ParsedSlicePtr> read_resource_slice(const Json& object, SliceInterner& interner) {
  auto read = std::make_shared<ParsedSlice>();
  ParsedSlice& slice = *read;
  slice.name = k8s::object_ref(object).name;
  const Json* spec = member(object, "spec");
  if (spec == nullptr || !spec->is_object()) {
    return spec == nullptr
               ? field_error(ErrorCode::kMissingField, "/spec", "ResourceSlice has no spec")
               : type_error("/spec", "object", *spec);
  }
  const std::string spec_pointer = "/spec";
  auto driver = required_string(*spec, spec_pointer, "driver", "ResourceSlice spec");
  if (!driver) {
    return driver.error();
  }
  slice.driver = std::move(driver).value();

  auto pool = optional(*spec, spec_pointer, "pool", "object", &Json::is_object);
  if (!pool) {
    return pool.error();
  }
  if (*pool == nullptr) {
    return field_error(ErrorCode::kMissingField, "/spec/pool", "ResourceSlice spec has no pool");
  }
  auto pool_name = required_string(**pool, "/spec/pool", "name", "pool");
  if (!pool_name) {
    return pool_name.error();
  }
  slice.pool = std::move(pool_name).value();
  for (const auto& [key, out] :
       {std::pair<std::string_view, std::int64_t*>{"generation", &slice.generation},
        {"resourceSliceCount", &slice.slice_count}}) {
    auto number = optional(**pool, "/spec/pool", key, "integer", &Json::is_number_integer);
    if (!number) {
      return number.error();
    }
    if (*number != nullptr) {
      *out = (*number)->get<std::int64_t>();
    }
  }

  auto scope = read_node_scope(*spec, spec_pointer);
  if (!scope) {
    return scope.error();
  }
  auto per_device =
      optional(*spec, spec_pointer, "perDeviceNodeSelection", "boolean", &Json::is_boolean);
  if (!per_device) {
    return per_device.error();
  }
  const bool per_device_scope = *per_device != nullptr && (*per_device)->get<bool>();
  if (*scope) {
    slice.scope = (*scope)->first;
    slice.node = (*scope)->second;
  } else if (!per_device_scope) {
    return field_error(ErrorCode::kMissingField, spec_pointer,
                       "ResourceSlice spec needs one of nodeName, nodeSelector, allNodes, "
                       "perDeviceNodeSelection");
  }

  auto shared = read_list(*spec, spec_pointer, "sharedCounters", read_counter_set);
  if (!shared) {
    return shared.error();
  }
  for (auto& [name, counters] : *shared) {
    slice.counter_sets.insert_or_assign(std::move(name), std::move(counters));
  }

  auto devices = optional(*spec, spec_pointer, "devices", "array", &Json::is_array);
  if (!devices) {
    return devices.error();
  }
  if (*devices == nullptr) {
    return ParsedSlicePtr(std::move(read));
  }
  std::set<std::string, std::less<>> names;
  const Interned<std::string> shared_driver = interner.names.names.intern(slice.driver);
  const Interned<std::string> shared_pool = interner.names.names.intern(slice.pool);
  const Interned<std::string> shared_slice = interner.names.names.intern(slice.name);
  const Interned<std::string> shared_node = interner.names.names.intern(slice.node);
  slice.devices.reserve((*devices)->size());
  for (std::size_t i = 0; i < (*devices)->size(); ++i) {
    const Json& entry = (**devices)[i];
    const std::string pointer = append_pointer("/spec/devices", i);
    if (!entry.is_object()) {
      return type_error(pointer, "object", entry);
    }
    Device& device = slice.devices.emplace_back();
    device.driver = shared_driver;
    device.pool = shared_pool;
    device.slice = shared_slice;
    device.scope = slice.scope;
    device.node = shared_node;
    auto name = required_string(entry, pointer, "name", "device");
    if (!name) {
      return name.error();
    }
    device.name = interner.names.names.intern(std::move(name).value());
    if (!names.insert(device.name.get()).second) {
      return field_error(ErrorCode::kInvalidValue, append_pointer(pointer, "name"),
                         "device \"" + device.name.get() + "\" appears twice in the slice");
    }
    // v1beta1 wraps the properties in `basic`; v1beta2 and v1 keep them on the device.
    auto basic = optional(entry, pointer, "basic", "object", &Json::is_object);
    if (!basic) {
      return basic.error();
    }
    const Json& holder = *basic != nullptr ? **basic : entry;
    const std::string holder_pointer =
        *basic != nullptr ? append_pointer(pointer, "basic") : pointer;
    if (auto status = read_device_properties(holder, holder_pointer, device, interner); !status) {
      return status.error();
    }
    if (per_device_scope) {
      auto device_scope = read_node_scope(holder, holder_pointer);
      if (!device_scope) {
        return device_scope.error();
      }
      if (!*device_scope) {
        return field_error(ErrorCode::kMissingField, holder_pointer,
                           "with perDeviceNodeSelection a device needs one of nodeName, "
                           "nodeSelector, allNodes");
      }
      device.scope = (*device_scope)->first;
      device.node = interner.names.names.intern((*device_scope)->second);
    }
  }
  return ParsedSlicePtr(std::move(read));
}

}  // namespace topoguard::k8s
