// A ResourceSlice (resource.k8s.io v1beta1, v1beta2, v1) as one normalised device model: v1beta1
// wraps a device's properties in `basic`, v1beta2 and v1 keep them on the device. Read in one
// place for the cluster state and the watch cache; immutable once read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "topoguard/common/flat_map.h"
#include "topoguard/common/json.h"
#include "topoguard/common/result.h"
#include "topoguard/k8s/interned_table.h"

namespace topoguard::k8s {

// A DeviceAttribute: exactly one typed value, or (DRAListTypeAttributes, 1.36+) a list of them.
// A scalar is a one-element list, so matchAttribute compares both as sets.
struct AttributeValue {
  enum class Type { kInt, kBool, kString, kVersion };
  using Scalar = std::variant<std::int64_t, bool, std::string>;  // version: std::string

  Type type = Type::kString;
  bool list = false;
  std::vector<Scalar> values;

  // Whether some element of `other` equals some element of this value (same type required;
  // versions compare without build metadata).
  [[nodiscard]] bool shares_element(const AttributeValue& other) const;
  [[nodiscard]] bool contains(const Scalar& value) const;
  // "pci0000:10", "8", "true", "[0, 1]": for messages and reports.
  [[nodiscard]] std::string to_string() const;

  friend bool operator==(const AttributeValue&, const AttributeValue&) = default;
};

struct AttributeValueHash {
  [[nodiscard]] std::size_t operator()(const AttributeValue& value) const;
};

using AttributeTable = InternedTable<AttributeValue, AttributeValueHash>;
using CapacityTable = InternedTable<std::string>;

// Where a reader of ResourceSlices keeps the names and values of their devices: one per reader
// (a cache's store, a command's cluster state), changed by one thread at a time. The devices read
// hold what they use, so the interner may go before them.
struct SliceInterner {
  NamePools names;  // and capacity quantities
  InternPool<AttributeValue, AttributeValueHash> attributes;
};

[[nodiscard]] std::string_view attribute_type_name(AttributeValue::Type type);
[[nodiscard]] std::string scalar_to_string(const AttributeValue::Scalar& value);

// A device taint (GA in 1.37): effects NoSchedule and NoExecute keep claims that do not
// tolerate it off the device; None and effects unknown to this version do nothing.
struct DeviceTaint {
  std::string key;
  std::string value;
  std::string effect;
  std::string rule;  // the DeviceTaintRule that applied it; empty for a slice's own taint
  // From a rule whose deviceSelector also has deviceClassName or CEL selectors (v1alpha3 before
  // 1.35), which topoguard does not evaluate: the device may not be tainted at all.
  bool uncertain = false;

  [[nodiscard]] bool prevents_allocation() const {
    return effect == "NoSchedule" || effect == "NoExecute";
  }
};

// capacity.<name>.requestPolicy of a device that allows multiple allocations: quantities as
// written (validated when read). validRange wins over validValues, as in the allocator.
struct RequestPolicy {
  std::optional<std::string> default_value;
  std::vector<std::string> valid_values;  // ascending (API validation)
  std::optional<std::string> min;         // validRange
  std::optional<std::string> max;
  std::optional<std::string> step;
};

// What a device takes from one shared counter set of its pool (partitionable devices).
struct CounterConsumption {
  std::string counter_set;
  std::map<std::string, std::string, std::less<>> counters;  // counter -> quantity
};

// Where a device is available: one node, every node, or nodes chosen by a node selector that
// topoguard cannot evaluate (Node objects are not part of the input).
enum class NodeScope : std::uint8_t { kNode, kAllNodes, kNodeSelector };

// What few devices publish, kept apart so that a device without any of it holds one null pointer.
struct DeviceExtras {
  // Short attribute names Device::short_names cannot mark (see there).
  AttributeTable other_short_attributes;
  // capacity.<name>.requestPolicy (DRAConsumableCapacity), by qualified capacity names.
  FlatMap<std::string, RequestPolicy> request_policies;
  std::vector<DeviceTaint> taints;  // the slice's, then those of DeviceTaintRules
  std::vector<CounterConsumption> consumes_counters;

  [[nodiscard]] bool empty() const {
    return other_short_attributes.empty() && request_policies.empty() && taints.empty() &&
           consumes_counters.empty();
  }
};

struct Device {
  // Names are interned (SliceInterner): every device of a slice shares its driver, pool, node
  // and slice, and the devices of every node of a kind share their names.
  Interned<std::string> driver;
  Interned<std::string> pool;
  Interned<std::string> name;
  Interned<std::string> node;  // for kNode
  // Fully qualified names: an unqualified attribute belongs to the driver's domain, so the key
  // is "<driver>/<name>"; a qualified one keeps its name. Same for capacity.
  AttributeTable attributes;
  // The attributes the driver published without a domain, which the allocator finds under a
  // constraint name without a domain (`numaNode`, as DRADerivedAttributes' matchAttribute allows):
  // bit i marks entry i of `attributes` ("<driver>/<short name>") as also published short. A short
  // one whose qualified entry holds another value (a qualified name published beside it wins
  // there), or whose entry lies past bit 63, is in `other_short_attributes()` by its short name.
  std::uint64_t short_names = 0;
  CapacityTable capacity;                      // valid quantities, as written
  std::shared_ptr<const DeviceExtras> extras;  // null when empty
  Interned<std::string> slice;                 // metadata.name of the ResourceSlice
  NodeScope scope = NodeScope::kNode;
  bool allow_multiple_allocations = false;

  [[nodiscard]] const AttributeTable& other_short_attributes() const {
    return extras_or_none().other_short_attributes;
  }
  [[nodiscard]] const auto& request_policies() const { return extras_or_none().request_policies; }
  [[nodiscard]] const std::vector<DeviceTaint>& taints() const { return extras_or_none().taints; }
  [[nodiscard]] const std::vector<CounterConsumption>& consumes_counters() const {
    return extras_or_none().consumes_counters;
  }
  // Adds a taint after the device's own (a DeviceTaintRule's); extras shared with copies of the
  // device are left as they are.
  void add_taint(DeviceTaint taint);

  // The allocator's lookup: the qualified name; an unqualified name was stored under the
  // driver's domain, so a driver's short `pcieRoot` never answers `resource.kubernetes.io/...`.
  // A name without a domain finds an attribute published under exactly that short name.
  [[nodiscard]] const AttributeValue* attribute(std::string_view qualified_name) const;
  // An attribute published under `short_name` (without a domain), or null.
  [[nodiscard]] const AttributeValue* short_attribute(std::string_view short_name) const;
  // Each attribute published short, as (short name, value), in name order within each source.
  template <class Visit>
  void for_each_short_attribute(Visit&& visit) const;
  // "<driver>/<pool>/<name>", unique in a cluster.
  [[nodiscard]] std::string id() const;

 private:
  [[nodiscard]] const DeviceExtras& extras_or_none() const;
};

template <class Visit>
void Device::for_each_short_attribute(Visit&& visit) const {
  std::size_t index = 0;
  for (const auto& [qualified, value] : attributes) {
    if (index < 64 && (short_names >> index & 1U) != 0) {
      visit(std::string_view(qualified).substr(driver.get().size() + 1), value);
    }
    ++index;
  }
  for (const auto& [short_name, value] : other_short_attributes()) {
    visit(std::string_view(short_name), value);
  }
}

// One ResourceSlice as read: immutable once read, shared by the states built from it.
struct ParsedSlice {
  std::string name;
  std::string driver;
  std::string pool;
  std::int64_t generation = 0;
  std::int64_t slice_count = 1;
  NodeScope scope = NodeScope::kNode;
  std::string node;
  std::vector<Device> devices;
  std::map<std::string, std::map<std::string, std::string, std::less<>>, std::less<>> counter_sets;
};

using ParsedSlicePtr = std::shared_ptr<const ParsedSlice>;

// `object` as a ResourceSlice, its names and values interned in `interner`; an error names the
// offending field.
[[nodiscard]] Result<ParsedSlicePtr> read_resource_slice(const Json& object,
                                                         SliceInterner& interner);
// One slice read alone: its devices share names and values with each other only.
[[nodiscard]] Result<ParsedSlicePtr> read_resource_slice(const Json& object);

// A device taint (a slice's device's, a DeviceTaintRule's spec.taint) at `pointer`.
[[nodiscard]] Result<DeviceTaint> read_device_taint(const Json& taint, const std::string& pointer);

// "<driver>/<name>" for a name without a domain, else the name: how the allocator qualifies
// attribute and capacity names.
[[nodiscard]] std::string qualified_name(std::string_view driver, std::string_view name);

}  // namespace topoguard::k8s
