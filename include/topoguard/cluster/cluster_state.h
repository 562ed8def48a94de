// The devices of a cluster as its ResourceSlices publish them, one normalised view across
// resource.k8s.io v1beta1 (devices wrapped in `basic`), v1beta2 and v1, grouped per node, with
// the DeviceClasses the cluster defines. Built once from `kubectl get resourceslices,
// deviceclasses,... -o yaml|json` output and then only read: an input value for the engine,
// feasibility and topology. Not thread-safe while building; safe to share read-only after.
#pragma once

#include <boost/container/flat_map.hpp>
#include <boost/iterator/indirect_iterator.hpp>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "topoguard/cluster/interned_table.h"
#include "topoguard/common/json.h"
#include "topoguard/common/result.h"
#include "topoguard/k8s/device_class.h"

namespace topoguard::cluster {

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

// One device a ResourceClaim holds (status.allocation.devices.results[]); admin-access results
// are not listed, as they take nothing.
struct Allocation {
  std::string claim;    // namespace/name
  std::string device;   // Device::id()
  bool shared = false;  // has a shareID: one of several allocations of the device
  std::map<std::string, std::string, std::less<>> consumed;  // consumedCapacity, qualified
};

// Where a device is available: one node, every node, or nodes chosen by a node selector that
// topoguard cannot evaluate (Node objects are not part of the input).
enum class NodeScope : std::uint8_t { kNode, kAllNodes, kNodeSelector };

// What few devices publish, kept apart so that a device without any of it holds one null pointer.
struct DeviceExtras {
  // Short attribute names Device::short_names cannot mark (see there).
  AttributeTable other_short_attributes;
  // capacity.<name>.requestPolicy (DRAConsumableCapacity), by qualified capacity names.
  boost::container::flat_map<std::string, RequestPolicy, std::less<>> request_policies;
  std::vector<DeviceTaint> taints;  // the slice's, then those of DeviceTaintRules
  std::vector<CounterConsumption> consumes_counters;

  [[nodiscard]] bool empty() const {
    return other_short_attributes.empty() && request_policies.empty() && taints.empty() &&
           consumes_counters.empty();
  }
};

struct Device {
  // Names are kept once per process (Interned): every device of a slice shares its driver,
  // pool, node and slice, and the devices of every node of a kind share their names.
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
  CapacityTable capacity;  // valid quantities, as written
  std::shared_ptr<const DeviceExtras> extras;  // null when empty
  Interned<std::string> slice;  // metadata.name of the ResourceSlice
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

using DevicePtr = std::shared_ptr<const Device>;

// The devices of a state, indexed and iterated as `const Device&`. Each device is shared with the
// slice it was read from, so states built one after another from mostly the same slices (a watch
// cache's generations) share them instead of copying.
class DeviceList {
 public:
  using const_iterator = boost::indirect_iterator<std::vector<DevicePtr>::const_iterator>;

  [[nodiscard]] const Device& operator[](std::size_t index) const { return *items_[index]; }
  [[nodiscard]] std::size_t size() const { return items_.size(); }
  [[nodiscard]] bool empty() const { return items_.empty(); }
  [[nodiscard]] const_iterator begin() const { return const_iterator(items_.begin()); }
  [[nodiscard]] const_iterator end() const { return const_iterator(items_.end()); }

  void push_back(DevicePtr device) { items_.push_back(std::move(device)); }

 private:
  std::vector<DevicePtr> items_;
};

using DeviceClass = k8s::DeviceClass;

// The devices one node can use: its own slices plus the slices available to all nodes.
struct Node {
  std::string name;
  std::vector<std::size_t> devices;  // indexes into ClusterState::devices(), in input order
  // A slice for this node could not be read, or a pool of it is incomplete: what the node
  // lacks may just be missing from the input.
  bool incomplete = false;
};

class ClusterState {
 public:
  [[nodiscard]] const DeviceList& devices() const { return devices_; }
  // Nodes by name. When no slice names a node but some are available to all nodes, one node
  // named "(all nodes)" stands for every node.
  [[nodiscard]] const std::vector<Node>& nodes() const { return nodes_; }
  [[nodiscard]] const DeviceClass* device_class(std::string_view name) const;
  [[nodiscard]] const std::map<std::string, DeviceClass, std::less<>>& device_classes() const {
    return device_classes_;
  }
  // Devices whose nodes come from a node selector: they may belong to any node.
  [[nodiscard]] const std::vector<std::size_t>& selector_devices() const {
    return selector_devices_;
  }
  // Some slice could not be read and its node is not known: every node may be incomplete.
  [[nodiscard]] bool incomplete() const { return incomplete_; }
  [[nodiscard]] std::size_t slice_count() const { return slice_count_; }
  // sharedCounters of the pools: "<driver>/<pool>/<counter set>" -> counter -> quantity.
  [[nodiscard]] const std::map<std::string, std::map<std::string, std::string, std::less<>>,
                               std::less<>>&
  counter_sets() const {
    return counter_sets_;
  }
  // Devices held by the ResourceClaims of the state, in input order.
  [[nodiscard]] const std::vector<Allocation>& allocations() const { return allocations_; }
  // The index of a device by Device::id(), or nullopt.
  [[nodiscard]] std::optional<std::size_t> device_index(std::string_view id) const;

 private:
  friend class ClusterStateBuilder;

  DeviceList devices_;
  // (hash of driver, pool and name; index into devices_), by hash and then by those names.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> device_ids_;
  std::map<std::string, std::map<std::string, std::string, std::less<>>, std::less<>> counter_sets_;
  std::vector<Allocation> allocations_;
  std::vector<Node> nodes_;
  std::vector<std::size_t> selector_devices_;
  std::map<std::string, DeviceClass, std::less<>> device_classes_;
  bool incomplete_ = false;
  std::size_t slice_count_ = 0;
};

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

// Collects ResourceSlices, DeviceClasses, DeviceTaintRules (v1alpha3, v1beta2, v1) and the
// allocations of ResourceClaims; other kinds are ignored. Only the newest
// generation of each pool counts, as for the scheduler.
class ClusterStateBuilder {
 public:
  // Reads `object` when it is a ResourceSlice or DeviceClass. Returns whether it was one; an
  // error names the offending field (JSON pointer in the object) and drops that object.
  [[nodiscard]] Result<bool> add(const Json& object);
  // A ResourceSlice read before (read_slice), with its object (which may lack spec.devices):
  // an unreadable slice leaves its node incomplete and returns its error.
  [[nodiscard]] Result<bool> add_slice(const Json& object, const Result<ParsedSlicePtr>& slice);
  [[nodiscard]] ClusterState finish() &&;

  // `object` as a ResourceSlice; an error names the offending field.
  [[nodiscard]] static Result<ParsedSlicePtr> read_slice(const Json& object);

 private:
  struct TaintRule {
    std::optional<std::string> driver;
    std::optional<std::string> pool;
    std::optional<std::string> device;
    DeviceTaint taint;
  };

  // Whether `object` is a resource.k8s.io object of `kind`.
  [[nodiscard]] static bool is_kind(const Json& object, std::string_view kind);
  Result<bool> add_device_class(const Json& object);
  Result<bool> add_taint_rule(const Json& object);
  Result<bool> add_claim(const Json& object);

  std::vector<ParsedSlicePtr> slices_;
  std::map<std::string, DeviceClass, std::less<>> device_classes_;
  std::vector<TaintRule> taint_rules_;
  std::vector<Allocation> allocations_;
  std::set<std::string> broken_nodes_;
  bool broken_without_node_ = false;
};

}  // namespace topoguard::cluster
