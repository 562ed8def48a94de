// The devices of a cluster as its ResourceSlices publish them (read in k8s/resource_slice.h, one
// normalised view across resource.k8s.io v1beta1, v1beta2 and v1), grouped per node, with the
// DeviceClasses the cluster defines. Built once from `kubectl get resourceslices,
// deviceclasses,... -o yaml|json` output and then only read: an input value for the engine,
// feasibility and topology. Not thread-safe while building; safe to share read-only after.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "topoguard/common/json.h"
#include "topoguard/common/result.h"
#include "topoguard/k8s/claim_allocation.h"
#include "topoguard/k8s/device_class.h"
#include "topoguard/k8s/device_taint_rule.h"
#include "topoguard/k8s/resource_slice.h"

namespace topoguard::cluster {

// The device model is read in k8s/; the cluster state groups it per node.
using k8s::Allocation;
using k8s::attribute_type_name;
using k8s::AttributeTable;
using k8s::AttributeValue;
using k8s::AttributeValueHash;
using k8s::CapacityTable;
using k8s::CounterConsumption;
using k8s::Device;
using k8s::DeviceExtras;
using k8s::DeviceTaint;
using k8s::Interned;
using k8s::NodeScope;
using k8s::ParsedSlice;
using k8s::ParsedSlicePtr;
using k8s::RequestPolicy;
using k8s::scalar_to_string;

using DevicePtr = std::shared_ptr<const Device>;

// The devices of a state, indexed and iterated as `const Device&`. Each device is shared with the
// slice it was read from, so states built one after another from mostly the same slices (a watch
// cache's generations) share them instead of copying.
class DeviceList {
 public:
  // Walks the shared pointers, yielding what they point to.
  class const_iterator {
   public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = Device;
    using difference_type = std::ptrdiff_t;
    using pointer = const Device*;
    using reference = const Device&;

    const_iterator() = default;
    explicit const_iterator(std::vector<DevicePtr>::const_iterator at) : at_(at) {}

    reference operator*() const { return **at_; }
    pointer operator->() const { return at_->get(); }
    reference operator[](difference_type n) const { return *at_[n]; }
    const_iterator& operator++() { return ++at_, *this; }
    const_iterator operator++(int) { return const_iterator(at_++); }
    const_iterator& operator--() { return --at_, *this; }
    const_iterator operator--(int) { return const_iterator(at_--); }
    const_iterator& operator+=(difference_type n) { return at_ += n, *this; }
    const_iterator& operator-=(difference_type n) { return at_ -= n, *this; }
    friend const_iterator operator+(const_iterator it, difference_type n) { return it += n; }
    friend const_iterator operator+(difference_type n, const_iterator it) { return it += n; }
    friend const_iterator operator-(const_iterator it, difference_type n) { return it -= n; }
    friend difference_type operator-(const const_iterator& a, const const_iterator& b) {
      return a.at_ - b.at_;
    }
    friend bool operator==(const const_iterator&, const const_iterator&) = default;
    friend auto operator<=>(const const_iterator&, const const_iterator&) = default;

   private:
    std::vector<DevicePtr>::const_iterator at_;
  };

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

// Collects ResourceSlices, DeviceClasses, DeviceTaintRules (v1alpha3, v1beta2, v1) and the
// allocations of ResourceClaims; other kinds are ignored. Only the newest
// generation of each pool counts, as for the scheduler.
class ClusterStateBuilder {
 public:
  // Reads `object` when it is a ResourceSlice or DeviceClass. Returns whether it was one; an
  // error names the offending field (JSON pointer in the object) and drops that object.
  [[nodiscard]] Result<bool> add(const Json& object);
  // A ResourceSlice read before (k8s::read_resource_slice), with its object (which may lack
  // spec.devices): an unreadable slice leaves its node incomplete and returns its error.
  [[nodiscard]] Result<bool> add_slice(const Json& object, const Result<ParsedSlicePtr>& slice);
  [[nodiscard]] ClusterState finish() &&;

 private:
  Result<bool> add_device_class(const Json& object);
  Result<bool> add_taint_rule(const Json& object);
  Result<bool> add_claim(const Json& object);

  std::vector<ParsedSlicePtr> slices_;
  std::map<std::string, DeviceClass, std::less<>> device_classes_;
  std::vector<k8s::DeviceTaintRule> taint_rules_;
  std::vector<Allocation> allocations_;
  std::set<std::string> broken_nodes_;
  bool broken_without_node_ = false;
  k8s::SliceInterner interner_;  // of the slices add() reads
};

}  // namespace topoguard::cluster
