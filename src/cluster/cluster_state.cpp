#include "topoguard/cluster/cluster_state.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "topoguard/k8s/kinds.h"
#include "topoguard/k8s/object.h"

namespace topoguard::cluster {

namespace {

constexpr std::string_view kAllNodesName = "(all nodes)";

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

Result<bool> ClusterStateBuilder::add_slice(const Json& object,
                                            const Result<ParsedSlicePtr>& slice) {
  if (!slice) {
    // What this slice publishes is unknown: its node (or every node) may lack devices it has.
    std::string node = k8s::slice_node_name(object);
    if (!node.empty()) {
      broken_nodes_.insert(std::move(node));
    } else {
      broken_without_node_ = true;
    }
    return slice.error();
  }
  slices_.push_back(*slice);
  return true;
}

Result<bool> ClusterStateBuilder::add(const Json& object) {
  switch (k8s::resource_kind(object)) {
    case k8s::ResourceKind::kResourceSlice:
      return add_slice(object, k8s::read_resource_slice(object, interner_));
    case k8s::ResourceKind::kDeviceClass:
      return add_device_class(object);
    case k8s::ResourceKind::kDeviceTaintRule:
      return add_taint_rule(object);
    case k8s::ResourceKind::kResourceClaim:
      return add_claim(object);
    default:
      return false;
  }
}

Result<bool> ClusterStateBuilder::add_taint_rule(const Json& object) {
  auto rule = k8s::read_device_taint_rule(object);
  if (!rule) {
    return rule.error();
  }
  if (*rule) {
    taint_rules_.push_back(std::move(**rule));
  }
  return true;
}

Result<bool> ClusterStateBuilder::add_claim(const Json& object) {
  auto allocations = k8s::read_claim_allocations(object);
  if (!allocations) {
    return allocations.error();
  }
  for (Allocation& allocation : *allocations) {
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
  // twice (k8s::read_resource_slice), but two slices of one pool may.
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
      for (const k8s::DeviceTaintRule& rule : taint_rules_) {
        if (rule.applies_to(*shared)) {
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
