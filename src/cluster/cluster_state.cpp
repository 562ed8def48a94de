#include "topoguard/cluster/cluster_state.h"

#include <algorithm>
#include <array>
#include <tuple>
#include <utility>

#include "topoguard/cel/value.h"
#include "topoguard/k8s/fields.h"
#include "topoguard/k8s/object.h"

namespace topoguard::cluster {

namespace {

constexpr std::string_view kAllNodesName = "(all nodes)";

using k8s::field_error;
using k8s::required_string;
using k8s::type_error;
constexpr auto optional = &k8s::optional_member;

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

std::string qualify(std::string_view driver, std::string_view name) {
  if (name.find('/') != std::string_view::npos) {
    return std::string(name);
  }
  return std::string(driver) + "/" + std::string(name);
}

// A quantity as text, checked.
Result<std::string> read_quantity(const Json& value, const std::string& pointer) {
  std::optional<std::string> text = k8s::quantity_text(value);
  if (!text) {
    return type_error(pointer, "quantity string", value);
  }
  if (!cel::Quantity::parse(*text)) {
    return field_error(ErrorCode::kInvalidValue, pointer,
                       "\"" + *text + "\" is not a quantity (e.g. 40Gi, 100m, 8)");
  }
  return *std::move(text);
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

Result<DeviceTaint> read_taint(const Json& taint, const std::string& pointer) {
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
Status read_device_properties(const Json& holder, const std::string& pointer, Device& device) {
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
      std::string key = qualify(driver, name);
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
    device.attributes = AttributeTable(std::move(qualified_attributes));
    extras.other_short_attributes = AttributeTable(std::move(short_attributes));
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
          extras.request_policies.insert_or_assign(qualify(device.driver.get(), name),
                                                   std::move(read).value());
        }
        entry_pointer = append_pointer(entry_pointer, "value");
      }
      auto text = read_quantity(*value, entry_pointer);
      if (!text) {
        return text.error();
      }
      quantities.insert_or_assign(qualify(device.driver.get(), name), std::move(text).value());
    }
    device.capacity = CapacityTable(std::move(quantities));
  }
  auto multiple =
      optional(holder, pointer, "allowMultipleAllocations", "boolean", &Json::is_boolean);
  if (!multiple) {
    return multiple.error();
  }
  device.allow_multiple_allocations = *multiple != nullptr && (*multiple)->get<bool>();
  if (auto error = take(read_list(holder, pointer, "taints", read_taint), extras.taints)) {
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

namespace {

// A device's identity, which Device::id() joins with slashes.
using DeviceKey = std::tuple<std::string_view, std::string_view, std::string_view>;

DeviceKey key_of(const Device& device) {
  return {device.driver.get(), device.pool.get(), device.name.get()};
}

std::uint32_t hash_of(const DeviceKey& key) {
  const std::hash<std::string_view> hash;
  const std::size_t full =
      (hash(std::get<0>(key)) * 31 + hash(std::get<1>(key))) * 31 + hash(std::get<2>(key));
  return static_cast<std::uint32_t>(full ^ (full >> 32));
}

}  // namespace

std::optional<std::size_t> ClusterState::device_index(std::string_view id) const {
  // Neither a driver (a DNS subdomain) nor a device name (a DNS label) has a slash; a pool
  // name may.
  const std::size_t first = id.find('/');
  const std::size_t last = id.rfind('/');
  if (first == std::string_view::npos || first == last) {
    return std::nullopt;
  }
  const DeviceKey wanted{id.substr(0, first), id.substr(first + 1, last - first - 1),
                         id.substr(last + 1)};
  const std::uint32_t hash = hash_of(wanted);
  // Ordered by hash, then by key: ids chosen to collide still cost a binary search.
  const auto it = std::lower_bound(
      device_ids_.begin(), device_ids_.end(), wanted,
      [this, hash](const std::pair<std::uint32_t, std::uint32_t>& entry, const DeviceKey& key) {
        return entry.first != hash ? entry.first < hash : key_of(devices_[entry.second]) < key;
      });
  return it != device_ids_.end() && it->first == hash && key_of(devices_[it->second]) == wanted
             ? std::optional<std::size_t>(it->second)
             : std::nullopt;
}

const DeviceClass* ClusterState::device_class(std::string_view name) const {
  auto it = device_classes_.find(name);
  return it == device_classes_.end() ? nullptr : &it->second;
}

Result<ParsedSlicePtr> ClusterStateBuilder::read_slice(const Json& object) {
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
  const Interned<std::string> shared_driver(slice.driver);
  const Interned<std::string> shared_pool(slice.pool);
  const Interned<std::string> shared_slice(slice.name);
  const Interned<std::string> shared_node(slice.node);
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
    device.name = Interned<std::string>(std::move(name).value());
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
    if (auto status = read_device_properties(holder, holder_pointer, device); !status) {
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
      device.node = (*device_scope)->second;
    }
  }
  return ParsedSlicePtr(std::move(read));
}

bool ClusterStateBuilder::is_kind(const Json& object, std::string_view kind) {
  return object.is_object() &&
         k8s::api_group(string_member_view(object, "apiVersion")) == "resource.k8s.io" &&
         string_member_view(object, "kind") == kind;
}

Result<bool> ClusterStateBuilder::add_slice(const Json& object,
                                            const Result<ParsedSlicePtr>& slice) {
  if (!slice) {
    // What this slice publishes is unknown: its node (or every node) may lack devices it has.
    const Json* node = find_at(object, "/spec/nodeName");
    if (node != nullptr && node->is_string() && !node->get_ref<const std::string&>().empty()) {
      broken_nodes_.insert(node->get<std::string>());
    } else {
      broken_without_node_ = true;
    }
    return slice.error();
  }
  slices_.push_back(*slice);
  return true;
}

Result<bool> ClusterStateBuilder::add(const Json& object) {
  if (!object.is_object() ||
      k8s::api_group(string_member_view(object, "apiVersion")) != "resource.k8s.io") {
    return false;
  }
  const std::string_view kind = string_member_view(object, "kind");
  if (kind == "ResourceSlice") {
    return add_slice(object, read_slice(object));
  }
  if (kind == "DeviceClass") {
    return add_device_class(object);
  }
  if (kind == "DeviceTaintRule") {
    return add_taint_rule(object);
  }
  if (kind == "ResourceClaim") {
    return add_claim(object);
  }
  return false;
}

// DeviceTaintRule (v1alpha3 1.33, v1beta2 1.36, v1 1.37): spec.taint applies to every device
// that spec.deviceSelector's driver, pool and device pick (each unset one matches all); without
// a selector it applies to none.
Result<bool> ClusterStateBuilder::add_taint_rule(const Json& object) {
  const Json* spec = member(object, "spec");
  if (spec == nullptr || !spec->is_object()) {
    return spec == nullptr
               ? field_error(ErrorCode::kMissingField, "/spec", "DeviceTaintRule has no spec")
               : type_error("/spec", "object", *spec);
  }
  auto selector = optional(*spec, "/spec", "deviceSelector", "object", &Json::is_object);
  if (!selector) {
    return selector.error();
  }
  const Json* taint = member(*spec, "taint");
  if (taint == nullptr) {
    return field_error(ErrorCode::kMissingField, "/spec/taint", "DeviceTaintRule has no taint");
  }
  auto read = read_taint(*taint, "/spec/taint");
  if (!read) {
    return read.error();
  }
  if (*selector == nullptr) {
    return true;
  }
  TaintRule rule;
  rule.taint = std::move(read).value();
  rule.taint.rule = k8s::object_ref(object).name;
  rule.taint.uncertain = member(**selector, "deviceClassName") != nullptr ||
                         member(**selector, "selectors") != nullptr;
  for (auto [key, field] :
       {std::pair<std::string_view, std::optional<std::string>*>{"driver", &rule.driver},
        {"pool", &rule.pool},
        {"device", &rule.device}}) {
    auto value = optional(**selector, "/spec/deviceSelector", key, "string", &Json::is_string);
    if (!value) {
      return value.error();
    }
    if (*value != nullptr) {
      *field = (*value)->get<std::string>();
    }
  }
  taint_rules_.push_back(std::move(rule));
  return true;
}

// status.allocation.devices.results[] of a ResourceClaim, as the scheduler counts them: a result
// with adminAccess takes nothing; one with a shareID is one share of a device that allows
// multiple allocations, holding its consumedCapacity; any other takes its device.
Result<bool> ClusterStateBuilder::add_claim(const Json& object) {
  const Json* results = find_at(object, "/status/allocation/devices/results");
  if (results == nullptr || results->is_null()) {
    return true;
  }
  if (!results->is_array()) {
    return type_error("/status/allocation/devices/results", "array", *results);
  }
  const k8s::ObjectRef ref = k8s::object_ref(object);
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
    auto admin = optional(result, pointer, "adminAccess", "boolean", &Json::is_boolean);
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
    auto consumed = optional(result, pointer, "consumedCapacity", "object", &Json::is_object);
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
      allocation.consumed.insert_or_assign(qualify(id[0], name), std::move(text).value());
    }
    allocations_.push_back(std::move(allocation));
  }
  return true;
}

Result<bool> ClusterStateBuilder::add_device_class(const Json& object) {
  auto device_class = k8s::read_device_class(object);
  if (!device_class) {
    return device_class.error();
  }
  std::string name = device_class->name;
  device_classes_.insert_or_assign(std::move(name), std::move(device_class).value());
  return true;
}

ClusterState ClusterStateBuilder::finish() && {
  ClusterState state;
  state.device_classes_ = std::move(device_classes_);
  state.allocations_ = std::move(allocations_);
  state.incomplete_ = broken_without_node_;

  // Only the newest generation of a pool counts; a pool with fewer slices than it announces is
  // still being published.
  using PoolKey = std::pair<std::string, std::string>;
  std::map<PoolKey, std::pair<std::int64_t, std::int64_t>> newest;  // generation, slices seen
  for (const ParsedSlicePtr& read : slices_) {
    const ParsedSlice& slice = *read;
    auto [it, inserted] =
        newest.try_emplace(PoolKey{slice.driver, slice.pool}, slice.generation, 0);
    if (!inserted && slice.generation > it->second.first) {
      it->second = {slice.generation, 0};
    }
  }
  for (const ParsedSlicePtr& read : slices_) {
    const ParsedSlice& slice = *read;
    auto& entry = newest[PoolKey{slice.driver, slice.pool}];
    entry.second += slice.generation == entry.first ? 1 : 0;
  }

  std::map<std::string, std::size_t, std::less<>> node_index;
  std::vector<std::size_t> all_node_devices;
  std::set<std::string> incomplete_nodes = broken_nodes_;
  // Device names of the pools published in several slices: a slice never lists a device
  // twice (read_slice), but two slices of one pool may.
  std::map<PoolKey, std::set<std::string_view>> names_in_pool;
  std::size_t last_node = 0;  // a slice's devices are mostly on one node
  const auto node_of = [&](const std::string& name) -> Node& {
    if (last_node < state.nodes_.size() && state.nodes_[last_node].name == name) {
      return state.nodes_[last_node];
    }
    auto [it, inserted] = node_index.try_emplace(name, state.nodes_.size());
    if (inserted) {
      state.nodes_.push_back(Node{name, {}, false});
    }
    last_node = it->second;
    return state.nodes_[it->second];
  };
  for (const ParsedSlicePtr& read : slices_) {
    const ParsedSlice& slice = *read;
    const auto& [generation, seen] = newest[PoolKey{slice.driver, slice.pool}];
    if (slice.generation != generation) {
      continue;
    }
    ++state.slice_count_;
    const bool pool_incomplete = seen < slice.slice_count;
    for (const auto& [name, counters] : slice.counter_sets) {
      state.counter_sets_.insert_or_assign(slice.driver + "/" + slice.pool + "/" + name, counters);
    }
    std::set<std::string_view>* pool_names =
        seen > 1 ? &names_in_pool[PoolKey{slice.driver, slice.pool}] : nullptr;
    for (const Device& own : slice.devices) {
      DevicePtr shared(read, &own);  // shares the slice's ownership
      if (pool_names != nullptr && !pool_names->insert(shared->name.get()).second) {
        // The same device in two slices of one pool: the scheduler rejects such a pool.
        if (shared->scope == NodeScope::kNode) {
          incomplete_nodes.insert(shared->node);
        } else {
          state.incomplete_ = true;
        }
        continue;
      }
      std::shared_ptr<Device> tainted;  // a copy, when a rule taints the slice's device
      for (const TaintRule& rule : taint_rules_) {
        if ((!rule.driver || *rule.driver == shared->driver) &&
            (!rule.pool || *rule.pool == shared->pool) &&
            (!rule.device || *rule.device == shared->name.get())) {
          if (!tainted) {
            tainted = std::make_shared<Device>(*shared);
          }
          tainted->add_taint(rule.taint);
        }
      }
      if (tainted) {
        shared = std::move(tainted);
      }
      const Device& device = *shared;
      const std::size_t index = state.devices_.size();
      switch (device.scope) {
        case NodeScope::kNode:
          node_of(device.node).devices.push_back(index);
          if (pool_incomplete) {
            incomplete_nodes.insert(device.node);
          }
          break;
        case NodeScope::kAllNodes:
          all_node_devices.push_back(index);
          state.incomplete_ = state.incomplete_ || pool_incomplete;
          break;
        case NodeScope::kNodeSelector:
          state.selector_devices_.push_back(index);
          break;
      }
      state.devices_.push_back(std::move(shared));
    }
    if (slice.devices.empty() && slice.scope == NodeScope::kNode) {
      node_of(slice.node);  // a node that publishes no devices for this driver is still a node
    }
  }
  for (const std::string& name : incomplete_nodes) {
    node_of(name);  // a node whose only slices are broken is still a node, of unknown devices
  }
  if (state.nodes_.empty() && !all_node_devices.empty()) {
    node_of(std::string(kAllNodesName));
  }
  std::sort(state.nodes_.begin(), state.nodes_.end(),
            [](const Node& a, const Node& b) { return a.name < b.name; });
  for (Node& node : state.nodes_) {
    node.devices.insert(node.devices.end(), all_node_devices.begin(), all_node_devices.end());
    node.incomplete = incomplete_nodes.count(node.name) != 0;
  }
  state.device_ids_.reserve(state.devices_.size());
  for (std::size_t index = 0; index < state.devices_.size(); ++index) {
    state.device_ids_.emplace_back(hash_of(key_of(state.devices_[index])),
                                   static_cast<std::uint32_t>(index));
  }
  std::sort(state.device_ids_.begin(), state.device_ids_.end(),
            [&devices = state.devices_](const auto& a, const auto& b) {
              return a.first != b.first ? a.first < b.first
                                        : key_of(devices[a.second]) < key_of(devices[b.second]);
            });
  return state;
}

}  // namespace topoguard::cluster
