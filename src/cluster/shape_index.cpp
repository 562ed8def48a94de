#include "topoguard/cluster/shape_index.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <numeric>
#include <tuple>
#include <unordered_set>

#include "selector_match.h"

namespace topoguard::cluster {

namespace {

// Length-prefixed, so that no two different sequences of fields give the same key.
void put(std::string& key, std::string_view text) {
  const auto size = static_cast<std::uint32_t>(text.size());
  key.append(reinterpret_cast<const char*>(&size), sizeof size);
  key.append(text);
}

void put(std::string& key, std::int64_t number) {
  key.append(reinterpret_cast<const char*>(&number), sizeof number);
}

void put_value(std::string& key, const AttributeValue& value) {
  key.push_back(static_cast<char>(value.type));
  key.push_back(value.list ? 'l' : 's');
  put(key, static_cast<std::int64_t>(value.values.size()));
  for (const AttributeValue::Scalar& scalar : value.values) {
    key.push_back(static_cast<char>(scalar.index()));
    if (const auto* number = std::get_if<std::int64_t>(&scalar)) {
      put(key, *number);
    } else if (const auto* flag = std::get_if<bool>(&scalar)) {
      key.push_back(*flag ? 't' : 'f');
    } else {
      put(key, std::get<std::string>(scalar));
    }
  }
}

void put_optional(std::string& key, const std::optional<std::string>& text) {
  key.push_back(text ? 'y' : 'n');
  if (text) {
    put(key, *text);
  }
}

// A per-node attribute's value is left out, its type kept: a selector that only compares it with
// string literals then sees the same on every node of a shape but where it equals one.
void put_left_out(std::string& key, const AttributeValue& value) {
  key.push_back('*');
  key.push_back(static_cast<char>(value.type));
  key.push_back(value.list ? 'l' : 's');
}

void put_attributes(std::string& key, const Device& device, const AttributeNames& per_node) {
  put(key, static_cast<std::int64_t>(device.attributes.size()));
  for (const auto& [name, value] : device.attributes) {
    put(key, name);
    if (per_node.count(name) != 0) {
      put_left_out(key, value);
    } else {
      key.push_back('=');
      put_value(key, value);
    }
  }
  // A short name is usually a bit on the qualified "<driver>/<name>" entry, keyed above; one
  // published beside a qualified name of another value has its own.
  put(key, static_cast<std::int64_t>(device.short_names));
  put(key, static_cast<std::int64_t>(device.other_short_attributes().size()));
  for (const auto& [name, value] : device.other_short_attributes()) {
    put(key, name);
    if (per_node.count(device.driver.get() + "/" + name) != 0) {
      put_left_out(key, value);  // projected with the qualified one (projection_key)
    } else {
      key.push_back('=');
      put_value(key, value);
    }
  }
}

void put_capacity(std::string& key, const Device& device) {
  put(key, static_cast<std::int64_t>(device.capacity.size()));
  for (const auto& [name, quantity] : device.capacity) {
    put(key, name);
    put(key, quantity);
  }
  put(key, static_cast<std::int64_t>(device.request_policies().size()));
  for (const auto& [name, policy] : device.request_policies()) {
    put(key, name);
    put_optional(key, policy.default_value);
    put(key, static_cast<std::int64_t>(policy.valid_values.size()));
    for (const std::string& value : policy.valid_values) {
      put(key, value);
    }
    put_optional(key, policy.min);
    put_optional(key, policy.max);
    put_optional(key, policy.step);
  }
  key.push_back(device.allow_multiple_allocations ? 'm' : 'o');
}

void put_taints(std::string& key, const Device& device) {
  put(key, static_cast<std::int64_t>(device.taints().size()));
  for (const DeviceTaint& taint : device.taints()) {
    put(key, taint.key);
    put(key, taint.value);
    put(key, taint.effect);
    put(key, taint.rule);
    key.push_back(taint.uncertain ? 'u' : 'c');
  }
}

// The counters a device consumes, with the amounts its pool's counter sets hold. Pools are
// numbered in the order the node's devices first name them: two devices of one pool share its
// counters, devices of two pools do not.
void put_counters(std::string& key, const ClusterState& state, const Device& device,
                  std::map<std::pair<std::string, std::string>, std::int64_t>& pools) {
  put(key, static_cast<std::int64_t>(device.consumes_counters().size()));
  if (device.consumes_counters().empty()) {
    return;
  }
  const auto [it, fresh] = pools.try_emplace(std::pair(device.driver, device.pool),
                                             static_cast<std::int64_t>(pools.size()));
  put(key, it->second);
  for (const CounterConsumption& consumption : device.consumes_counters()) {
    put(key, consumption.counter_set);
    const auto set = state.counter_sets().find(device.driver.get() + "/" + device.pool.get() + "/" +
                                               consumption.counter_set);
    put(key, static_cast<std::int64_t>(consumption.counters.size()));
    for (const auto& [name, amount] : consumption.counters) {
      put(key, name);
      put(key, amount);
      std::optional<std::string_view> total;  // none: the pool does not define the counter
      if (set != state.counter_sets().end()) {
        if (const auto counter = set->second.find(name); counter != set->second.end()) {
          total = counter->second;
        }
      }
      key.push_back(total ? '=' : '?');
      put(key, total.value_or(""));
    }
  }
}

// The rank of each position of `node.devices` in the order `less` sorts device indexes by.
template <typename Less>
void put_order(std::string& key, const Node& node, Less less) {
  std::vector<std::size_t> positions(node.devices.size());
  std::iota(positions.begin(), positions.end(), std::size_t{0});
  std::sort(positions.begin(), positions.end(),
            [&](std::size_t a, std::size_t b) { return less(node.devices[a], node.devices[b]); });
  for (std::size_t position : positions) {
    put(key, static_cast<std::int64_t>(position));
  }
}

// A hash of an attribute's value (equal values, equal hashes).
std::size_t value_hash(const AttributeValue& value) {
  std::size_t hash = static_cast<std::size_t>(value.type) * 31 + (value.list ? 1 : 0);
  for (const AttributeValue::Scalar& scalar : value.values) {
    std::size_t element = 0;
    if (const auto* number = std::get_if<std::int64_t>(&scalar)) {
      element = std::hash<std::int64_t>{}(*number);
    } else if (const auto* flag = std::get_if<bool>(&scalar)) {
      element = *flag ? 1 : 2;
    } else {
      element = std::hash<std::string>{}(std::get<std::string>(scalar));
    }
    hash = hash * 1'000'003 ^ element;
  }
  return hash;
}

// Attributes with more than 8 distinct values, distinct on more than half the nodes that
// publish them.
AttributeNames detect_per_node(const ClusterState& state) {
  struct Seen {
    std::unordered_set<std::size_t> values;  // hashes of the values
    std::size_t nodes = 0;
    std::size_t last_node = static_cast<std::size_t>(-1);
  };
  std::unordered_map<std::string_view, Seen> seen;  // names of the state's devices
  for (std::size_t n = 0; n < state.nodes().size(); ++n) {
    for (std::size_t d : state.nodes()[n].devices) {
      for (const auto& [name, value] : state.devices()[d].attributes) {
        Seen& entry = seen[name];
        entry.values.insert(value_hash(value));
        if (entry.last_node != n) {
          entry.last_node = n;
          ++entry.nodes;
        }
      }
    }
  }
  AttributeNames per_node;
  for (const auto& [name, entry] : seen) {
    if (entry.values.size() > 8 && entry.values.size() * 2 > entry.nodes) {
      per_node.emplace(name);
    }
  }
  return per_node;
}

}  // namespace

std::optional<std::size_t> find_node(const ClusterState& state, std::string_view name) {
  const auto& nodes = state.nodes();
  const auto it =
      std::lower_bound(nodes.begin(), nodes.end(), name,
                       [](const Node& node, std::string_view n) { return node.name < n; });
  if (it == nodes.end() || it->name != name) {
    return std::nullopt;
  }
  return static_cast<std::size_t>(it - nodes.begin());
}

std::string look_key(const Device& device, const SelectorReads& reads) {
  std::string key;
  put(key, device.driver.get());
  key.push_back(device.allow_multiple_allocations ? 'm' : 'o');
  put(key, static_cast<std::int64_t>(device.capacity.size()));
  for (const auto& [name, quantity] : device.capacity) {
    put(key, name);
    put(key, quantity);
  }
  for (const auto& [name, value] : device.attributes) {
    const std::string_view domain = std::string_view(name).substr(0, name.find('/'));
    const bool whole = reads.all || reads.domains.count(domain) != 0;
    if (!whole && reads.attributes.count(name) == 0) {
      continue;
    }
    put(key, name);
    const auto literals = whole ? reads.by_literal.end() : reads.by_literal.find(name);
    if (literals == reads.by_literal.end()) {
      key.push_back('=');
      put_value(key, value);
    } else if (value.type == AttributeValue::Type::kString && !value.list &&
               value.values.size() == 1) {
      const auto& text = std::get<std::string>(value.values[0]);
      const auto equal = std::lower_bound(literals->second.begin(), literals->second.end(), text);
      key.push_back('L');
      put(key, equal != literals->second.end() && *equal == text
                   ? static_cast<std::int64_t>(equal - literals->second.begin())
                   : std::int64_t{-1});
    } else {
      put_left_out(key, value);
    }
  }
  return key;
}

std::string shape_key(const ClusterState& state, const Node& node, const AttributeNames& per_node) {
  std::string key;
  key.push_back(node.incomplete ? 'i' : 'c');
  put(key, static_cast<std::int64_t>(node.devices.size()));
  std::map<std::pair<std::string, std::string>, std::int64_t> pools;
  const auto& devices = state.devices();
  for (std::size_t d : node.devices) {
    const Device& device = devices[d];
    if (device.scope == NodeScope::kNode) {
      key.push_back('n');
    } else {
      key.push_back('a');  // the same device on every node
      put(key, device.id());
    }
    put(key, device.driver.get());
    put_attributes(key, device, per_node);
    put_capacity(key, device);
    put_taints(key, device);
    put_counters(key, state, device, pools);
  }
  // Candidates and results are sorted by device index, and the allocator's own search tries them
  // by pool, slice and index (allocation_search.cpp: allocator_order).
  put_order(key, node, std::less<>{});
  put_order(key, node, [&](std::size_t a, std::size_t b) {
    return std::tie(devices[a].driver, devices[a].pool, devices[a].slice, a) <
           std::tie(devices[b].driver, devices[b].pool, devices[b].slice, b);
  });
  return key;
}

std::string projection_key(const ClusterState& state, const Node& node,
                           const AttributeNames& names) {
  std::string key;
  for (std::size_t d : node.devices) {
    const Device& device = state.devices()[d];
    for (const std::string& name : names) {
      // The attribute, and what a constraint naming it short finds on this driver's devices.
      const std::size_t slash = name.find('/');
      const std::string& driver = device.driver.get();
      const AttributeValue* short_value =
          name.compare(0, slash, driver) == 0 && slash == driver.size()
              ? device.short_attribute(std::string_view(name).substr(slash + 1))
              : nullptr;
      for (const AttributeValue* value : {device.attribute(name), short_value}) {
        key.push_back(value != nullptr ? '=' : '-');
        if (value != nullptr) {
          put_value(key, *value);
        }
      }
    }
  }
  return key;
}

ShapeIndex ShapeIndex::build(const ClusterState& state, const ShapeOptions& options) {
  ShapeIndex index(options.per_node_attributes ? *options.per_node_attributes
                                               : detect_per_node(state));
  for (const Node& node : state.nodes()) {
    index.place(node.name, shape_key(state, node, index.per_node_));
  }
  return index;
}

void ShapeIndex::place(const std::string& name, std::string key) {
  remove_node(name);
  auto [it, fresh] = shape_of_key_.try_emplace(std::move(key));
  if (fresh) {
    it->second.id = next_id_++;
  }
  ++it->second.nodes;
  node_shape_.insert_or_assign(name, &it->first);
}

void ShapeIndex::update_node(const ClusterState& state, std::string_view name) {
  const auto index = find_node(state, name);
  if (!index) {
    remove_node(name);
    return;
  }
  const Node& node = state.nodes()[*index];
  place(node.name, shape_key(state, node, per_node_));
}

void ShapeIndex::remove_node(std::string_view name) {
  const auto it = node_shape_.find(std::string(name));
  if (it == node_shape_.end()) {
    return;
  }
  const auto shape = shape_of_key_.find(*it->second);
  node_shape_.erase(it);
  if (--shape->second.nodes == 0) {
    shape_of_key_.erase(shape);
  }
}

NodeShapes ShapeIndex::view(const ClusterState& state) const {
  NodeShapes out;
  out.per_node_ = per_node_;
  out.shape_of_.resize(state.nodes().size());
  std::unordered_map<std::size_t, std::size_t> position;  // Shape::id -> index in out.shapes_
  std::unordered_map<std::string, std::size_t> unknown;   // keys of nodes not in the index
  for (std::size_t n = 0; n < state.nodes().size(); ++n) {
    const Node& node = state.nodes()[n];
    std::size_t* slot = nullptr;
    if (const auto it = node_shape_.find(node.name); it != node_shape_.end()) {
      slot =
          &position.try_emplace(shape_of_key_.at(*it->second).id, out.shapes_.size()).first->second;
    } else if (std::string key = shape_key(state, node, per_node_); shape_of_key_.count(key) != 0) {
      slot = &position.try_emplace(shape_of_key_.at(key).id, out.shapes_.size()).first->second;
    } else {
      slot = &unknown.try_emplace(std::move(key), out.shapes_.size()).first->second;
    }
    if (*slot == out.shapes_.size()) {
      out.shapes_.emplace_back();
    }
    out.shapes_[*slot].push_back(n);
    out.shape_of_[n] = *slot;
  }
  return out;
}

std::uint64_t NodeValues::value_hash(std::string_view attribute, std::string_view text) {
  const std::uint64_t name_hash = std::hash<std::string_view>{}(attribute);
  return name_hash * 0x9E3779B97F4A7C15ULL ^ std::hash<std::string_view>{}(text);
}

NodeValues::NodeValues(const ClusterState& state, const AttributeNames& attributes) {
  for (std::size_t n = 0; n < state.nodes().size(); ++n) {
    for (std::size_t d : state.nodes()[n].devices) {
      const Device& device = state.devices()[d];
      for (const std::string& name : attributes) {
        const AttributeValue* value = device.attribute(name);
        if (value != nullptr && value->type == AttributeValue::Type::kString && !value->list &&
            value->values.size() == 1) {
          entries_.emplace_back(value_hash(name, std::get<std::string>(value->values[0])),
                                static_cast<std::uint32_t>(n));
        }
      }
    }
  }
  std::sort(entries_.begin(), entries_.end());
  entries_.erase(std::unique(entries_.begin(), entries_.end()), entries_.end());
}

std::vector<std::size_t> NodeValues::nodes_with_value(std::string_view attribute,
                                                      std::string_view text) const {
  const std::uint64_t hash = value_hash(attribute, text);
  auto it = std::lower_bound(entries_.begin(), entries_.end(),
                             std::pair<std::uint64_t, std::uint32_t>(hash, 0));
  std::vector<std::size_t> nodes;
  for (; it != entries_.end() && it->first == hash; ++it) {
    nodes.push_back(it->second);
  }
  return nodes;
}

NodeShapes NodeShapes::of(const ClusterState& state, const ShapeOptions& options) {
  return ShapeIndex::build(state, options).view(state);
}

}  // namespace topoguard::cluster
