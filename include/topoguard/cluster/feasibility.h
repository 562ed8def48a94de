// Can any node of the cluster hold a claim, as the scheduler's structured allocator would
// allocate it (Kubernetes 1.37, k8s.io/dynamic-resource-allocation/structured)? Per node, the
// devices each request can get (DeviceClass and request selectors through the CEL evaluator;
// "unknown" counts as may-match), then a bounded search for one assignment that satisfies every
// constraint at once, with count, allocationMode All, firstAvailable order and subrequests as the
// allocator treats them. Modelled (docs/dra-feasibility.md has the sources):
// - device taints, from slices and DeviceTaintRules: a NoSchedule or NoExecute taint the request
//   does not tolerate keeps the device from it (an All request that would take it fails);
// - matchAttribute and distinctAttribute, list-valued attributes as sets, with the allocator's own
//   bookkeeping where its answer depends on the order it tries devices in (distinctAttribute);
// - derived attributes (KEP-6080): evaluated per device the request may get, their values stand
//   for the driver's attribute of that name in the request's constraints; an expression that
//   fails on such a device is an allocation error (`allocation_error`);
// - consumable capacity: capacity requests against each device's capacity and requestPolicy;
//   devices that allow multiple allocations share their capacity between requests and claims;
// - shared counters of partitionable devices: devices taken together must fit their counter sets;
// - allocations of the ResourceClaims in the state: a device held by another claim is taken
//   (a shareable one keeps what its shares leave). A claim that fails only because of them is
//   unsatisfiable *now* (`only_now`): the same hardware without them could hold it.
// Not modelled (each said in the result): node selectors of network-attached slices (such devices
// make a result unknown, never unsat), binding conditions.
// Pure and deterministic; the cost is linear in devices x requests for the usual shapes, and every
// search has a step budget whose end is "unknown".
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "topoguard/cluster/cluster_state.h"
#include "topoguard/cluster/shape_index.h"
#include "topoguard/k8s/claim_view.h"

namespace topoguard::cluster {

class FeasibilityCache;

enum class Verdict { kSatisfiable, kUnsatisfiable, kUnknown };
[[nodiscard]] std::string_view verdict_name(Verdict verdict);

// Why a node cannot hold the claim, from the nearest miss to the farthest.
enum class Shortfall {
  kNone,             // satisfiable, or unknown
  kNoSharedValue,    // enough devices publish the attribute, but no value is common to all
  kAttributeMissing, // too few candidates publish the constrained attribute
  kNotEnoughDevices, // too few devices match a request's selectors at all
  kAllModeRejected,  // allocationMode All takes a device the constraint rejects
  // enough devices share a value, but distinctAttribute, shared capacity or counters rule out
  // every combination of them
  kConflict,
  // a derived attribute's expression fails on a device the request can get: the allocator aborts
  kAllocationError,
};

struct RequestOnNode {
  std::string request;  // "gpu" or "gpu/sub" for a firstAvailable subrequest
  std::size_t needed = 0;    // count, or 1 for allocationMode All (at least one)
  std::size_t matching = 0;  // devices whose selectors are all true
  std::size_t maybe = 0;     // devices with a selector topoguard cannot evaluate exactly
  std::size_t with_attribute = 0;  // of matching+maybe, those publishing every constrained attr.
  // Devices whose selectors match but which the request cannot get (not in matching/maybe): an
  // untolerated taint, held by another claim, capacity too small or against its requestPolicy.
  std::size_t tainted = 0;
  std::size_t held = 0;
  std::size_t too_small = 0;
};

struct NodeFeasibility {
  std::string node;
  Verdict verdict = Verdict::kUnknown;
  Shortfall shortfall = Shortfall::kNone;
  std::string reason;  // what the node lacks, or why the answer is unknown; empty when satisfied
  // For a satisfiable node: one assignment, "request[/sub]" -> device ids, in request order.
  std::vector<std::pair<std::string, std::vector<std::string>>> assignment;
  std::vector<RequestOnNode> requests;  // the first choice of each request (for messages)
  double closeness = 0;  // fraction of needed devices the best attribute value offers
};

// How one driver publishes a constrained attribute on the devices a request may get.
struct AttributePublication {
  std::string request;  // "nic" or "nic/sub"
  std::string attribute;
  std::string driver;
  // How many nodes the request may get devices of it on (a count, not names: a review pays
  // for what it keeps, and every node of a large cluster may be one).
  std::size_t node_count = 0;
  std::vector<std::string> nodes_without;  // of those, nodes where none of them publishes it
  // Published values not in the attribute's standard format (pcieRoot: pci<domain>:<bus>),
  // unique, in device order.
  std::vector<std::string> nonstandard_values;
};

// Where the allocator aborts with an error, so the Pod fails scheduling, whatever other nodes
// offer: a derived attribute whose expression fails (a CEL runtime error, or a value of a type no
// attribute has) on a device a request can get; or a device an allocationMode All request must
// take that a constraint refuses, reached in the allocator's order.
struct AllocationError {
  enum class Cause { kDerivedAttribute, kAllModeConstraint };
  std::string request;    // "gpu" or "gpu/sub"
  std::string attribute;  // the derived attribute's name, or the constraint's attribute
  std::string device;     // Device::id()
  std::string node;
  std::string message;  // what the evaluation says
  std::string pointer;  // the derived attribute (the constraint) in the claim
  Cause cause = Cause::kDerivedAttribute;
};

struct ClaimFeasibility {
  Verdict verdict = Verdict::kUnknown;
  // Set when the allocation fails with an error (then verdict is kUnsatisfiable): the first one
  // found, in node, request and device order.
  std::optional<AllocationError> allocation_error;
  // In node order: every node; or, checked with node shapes (FeasibilityOptions::shapes), one
  // per group of nodes the claim cannot tell apart, the answer of its first node (per_node()
  // gives every node's).
  std::vector<NodeFeasibility> nodes;
  // Checked with node shapes: per entry of `nodes`, the indexes (into ClusterState::nodes()) of
  // the nodes it stands for, ascending, its own node first. Empty otherwise.
  std::vector<std::vector<std::size_t>> node_groups;
  std::vector<std::string> notes;      // what was not modelled for this claim, sorted, unique
  // Per constrained request choice and driver (requests whose DeviceClass is known).
  std::vector<AttributePublication> publications;
  // kUnsatisfiable only because of the allocations in the state: without them it is satisfiable.
  bool only_now = false;
  // The check stopped when FeasibilityOptions::budget ran out: the verdict is kUnknown.
  bool budget_exhausted = false;
  // For kUnsatisfiable: the node that comes closest (smallest shortfall, most devices).
  const NodeFeasibility* closest() const;
  // How many nodes entry `i` of `nodes` stands for.
  [[nodiscard]] std::size_t group_size(std::size_t i) const {
    return node_groups.empty() ? 1 : node_groups[i].size();
  }
};

// The work a caller allows one or more feasibility checks, shared by every check it is passed to
// (a review checks a claim as written, as fixed, and its patched form). A step is one device
// judged against a request choice's selectors, one device read to tell nodes apart by the
// per-node values a claim reads, one literal looked up among those values, one node checked, or
// one step of a node's search. A check that
// finds too few steps left stops and answers unknown; it never takes more than the steps left.
// Not thread-safe: one per review.
class StepBudget {
 public:
  explicit StepBudget(std::size_t limit) : left_(limit) {}

  // Takes `steps` when that many are left; otherwise takes nothing and marks the budget
  // exhausted. Returns whether they were taken.
  bool take(std::size_t steps);
  // Marks the budget exhausted: a check stopped because what was left did not suffice.
  void stop() { exhausted_ = true; }
  [[nodiscard]] std::size_t left() const { return left_; }
  [[nodiscard]] std::size_t spent() const { return spent_; }
  // Some check stopped for want of steps.
  [[nodiscard]] bool exhausted() const { return exhausted_; }

 private:
  std::size_t left_;
  std::size_t spent_ = 0;
  bool exhausted_ = false;
};

struct FeasibilityOptions {
  // Upper bound on assignments tried per node; beyond it the node's answer is unknown.
  std::size_t max_steps_per_node = 20'000;
  // "namespace/name" of the claim checked: its own allocation (when it has one) holds nothing.
  std::string own_claim;
  // Count the allocations of the state's ResourceClaims; false asks about the hardware alone.
  bool with_allocations = true;
  // The shapes of the state's nodes (NodeShapes::of, or a ShapeIndex's view of the same state):
  // the claim is then evaluated once per group of nodes it cannot tell apart, with the same
  // answer as node by node, and the result has node_groups. Null: every node is evaluated.
  const NodeShapes* shapes = nullptr;
  // Not owned. Null: no bound but max_steps_per_node.
  StepBudget* budget = nullptr;
  // Answers kept for this state (not owned; check_feasibility_cached(), feasibility_cache.h),
  // under `spec_key`: a text equal only for specs that read alike (the JSON of the claim's
  // devices, with where it sits). Null or empty: nothing is kept. It also keeps the index of
  // per-node values that `shapes` need for a claim comparing them with literals (null: built
  // per check).
  FeasibilityCache* cache = nullptr;
  std::string spec_key;
};

// Whether `value` is in the standard format of `attribute`: `pci<domain>:<bus>` (lower-case
// hex, as sysfs names root buses) for resource.kubernetes.io/pcieRoot; anything for others.
[[nodiscard]] bool is_standard_value(std::string_view attribute, const AttributeValue& value);

// Whether `spec` can be allocated on some node of `state`.
[[nodiscard]] ClaimFeasibility check_feasibility(const k8s::ClaimSpec& spec,
                                                 const ClusterState& state,
                                                 const FeasibilityOptions& options = {});

// Every node's answer, in node order, as a check without node shapes gives it: each entry of
// `result.nodes` copied to the nodes of its group, with the node's own name and the devices at
// the same positions of its device list in the assignment. `state` is the one checked.
[[nodiscard]] std::vector<NodeFeasibility> per_node(const ClaimFeasibility& result,
                                                    const ClusterState& state);

}  // namespace topoguard::cluster
