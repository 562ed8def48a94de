// Nodes grouped by device shape, so feasibility evaluates a claim once per shape instead of once
// per node. Two nodes have the same shape when their device lists are equal, position by
// position, in everything feasibility reads: driver, attributes and their values, capacity,
// request policies, allowMultipleAllocations, taints, counters consumed and the counter sets
// they come from, the order the allocator tries the devices in, and whether the node is
// incomplete. Devices available to all nodes are the same device on each node. What differs per
// node and no claim usually reads (a GPU's uuid, a node-name attribute) can be left out: the
// values of `per_node_attributes` (their types are kept); a claim whose constraints read one of
// those tells nodes apart by its values, one whose selectors read it by what they match on each
// node, device by device (feasibility.cpp), so the grouping stays exact; one whose selectors only
// compare it with string literals, only the nodes where it equals one of them
// (NodeValues).
// Allocations are not part of a shape: a node holding an allocated device is checked on its own.
//
// Two structures, for a watch cache that publishes immutable ClusterState snapshots:
// - ShapeIndex, kept across snapshots, by node name: update_node() when one node's slices
//   change costs O(that node's devices); remove_node() when it goes.
// - NodeShapes, one per snapshot: the shape of every node by index, as check_feasibility()
//   reads it. ShapeIndex::view() makes it in O(nodes) hash look-ups; NodeShapes::of() builds
//   both from scratch in O(devices).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "topoguard/cluster/cluster_state.h"

namespace topoguard::cluster {

using AttributeNames = std::set<std::string, std::less<>>;

struct ShapeOptions {
  // Qualified attribute names whose values are left out of shapes. Unset: chosen by
  // ShapeIndex::build() from the state, as the attributes with more than 8 distinct values
  // that are distinct on more than half the nodes publishing them.
  std::optional<AttributeNames> per_node_attributes;
};

// The shapes of the nodes of one ClusterState. Read-only; valid for that state only.
class NodeShapes {
 public:
  // ShapeIndex::build(state, options).view(state).
  [[nodiscard]] static NodeShapes of(const ClusterState& state, const ShapeOptions& options = {});

  // The node indexes (into ClusterState::nodes()) of each shape, ascending; shapes in the order
  // of their first node.
  [[nodiscard]] const std::vector<std::vector<std::size_t>>& shapes() const { return shapes_; }
  // Per node index, its shape (index into shapes()).
  [[nodiscard]] const std::vector<std::size_t>& shape_of() const { return shape_of_; }
  [[nodiscard]] const AttributeNames& per_node_attributes() const { return per_node_; }

 private:
  friend class ShapeIndex;

  std::vector<std::vector<std::size_t>> shapes_;
  std::vector<std::size_t> shape_of_;
  AttributeNames per_node_;
};

// The nodes of a ClusterState by the string values of some of their devices' attributes (the
// per-node ones of its NodeShapes), hashed. Built in O(devices) by whoever checks claims against
// that state, when a claim first compares such an attribute with string literals: a
// FeasibilityCache keeps one (feasibility_cache.h), one per evaluator.
class NodeValues {
 public:
  NodeValues(const ClusterState& state, const AttributeNames& attributes);

  // The nodes (indexes, ascending) with a device whose attribute `attribute` (one of those
  // indexed) is the string `text`, and maybe a few others.
  [[nodiscard]] std::vector<std::size_t> nodes_with_value(std::string_view attribute,
                                                          std::string_view text) const;

 private:
  static std::uint64_t value_hash(std::string_view attribute, std::string_view text);

  std::vector<std::pair<std::uint64_t, std::uint32_t>> entries_;  // (value_hash, node), sorted
};

// Node shapes by node name, kept up to date per node. Not thread-safe while updated.
class ShapeIndex {
 public:
  [[nodiscard]] static ShapeIndex build(const ClusterState& state,
                                        const ShapeOptions& options = {});

  // Records the shape node `name` has in `state` (its slices changed, or it is new): O(its
  // devices). A name `state` has no node of is removed.
  void update_node(const ClusterState& state, std::string_view name);
  void remove_node(std::string_view name);

  // The shapes of `state`'s nodes. Nodes the index does not know are keyed on the way; nodes
  // whose devices changed since their last update_node() would be misplaced. O(nodes) look-ups.
  [[nodiscard]] NodeShapes view(const ClusterState& state) const;

  [[nodiscard]] std::size_t shape_count() const { return shape_of_key_.size(); }
  [[nodiscard]] std::size_t node_count() const { return node_shape_.size(); }
  [[nodiscard]] const AttributeNames& per_node_attributes() const { return per_node_; }

 private:
  struct Shape {
    std::size_t id = 0;  // stable while the shape has nodes
    std::size_t nodes = 0;
  };

  explicit ShapeIndex(AttributeNames per_node) : per_node_(std::move(per_node)) {}
  void place(const std::string& name, std::string key);

  AttributeNames per_node_;
  std::unordered_map<std::string, Shape> shape_of_key_;  // key -> shape
  // Node name -> its shape's key (in shape_of_key_, whose keys do not move).
  std::unordered_map<std::string, const std::string*> node_shape_;
  std::size_t next_id_ = 0;
};

// The index of node `name` in `state` (nodes are sorted by name), or nullopt.
[[nodiscard]] std::optional<std::size_t> find_node(const ClusterState& state,
                                                   std::string_view name);

// The values of `names` on `node`'s devices, position by position, as a string equal for two
// nodes exactly when they publish the same values of those attributes on the same positions.
[[nodiscard]] std::string projection_key(const ClusterState& state, const Node& node,
                                         const AttributeNames& names);

// What a set of selectors reads of a device's attributes (cel::device_reads of each).
struct SelectorReads {
  AttributeNames attributes;  // qualified names read with literal keys
  AttributeNames domains;     // domains whose attributes may all be read
  bool all = false;           // any attribute may be read
  // Of `attributes`, those every selector only compares with string literals (and tests with
  // has()): name -> the literals, sorted, unique.
  std::map<std::string, std::vector<std::string>, std::less<>> by_literal;
};

// What selectors reading `reads` can see of `device`, as a string equal for devices they cannot
// tell apart: driver, capacity, allowMultipleAllocations and the attributes read; an attribute
// of `reads.by_literal` whose value is a single string by the literal it equals (or none), any
// other value by its type (a comparison with a string literal is false or an error whatever it
// holds).
[[nodiscard]] std::string look_key(const Device& device, const SelectorReads& reads);

// Everything feasibility reads of `node`'s devices, as a string equal for nodes of one shape;
// the values of `per_node` attributes are left out.
[[nodiscard]] std::string shape_key(const ClusterState& state, const Node& node,
                                    const AttributeNames& per_node);

}  // namespace topoguard::cluster
