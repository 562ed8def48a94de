// Answers of feasibility checks against one ClusterState (a watch cache's snapshot generation),
// by claim spec: a review that checks a claim checked before gets the answer without the work.
// Bounded by the answers' estimated size, the least recently used forgotten first; an answer
// larger than the bound is not kept. Only complete answers are kept (one cut short by a step
// budget could be answered with more). Also keeps the state's NodeValues once a check needs them.
// Owned by one evaluator (engine::Evaluator), on one thread: not thread-safe.
#pragma once

#include <cstddef>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "topoguard/cluster/feasibility.h"
#include "topoguard/cluster/shape_index.h"

namespace topoguard::cluster {

using ClaimFeasibilityPtr = std::shared_ptr<const ClaimFeasibility>;

class FeasibilityCache {
 public:
  static constexpr std::size_t kDefaultMaxBytes = 8 << 20;

  explicit FeasibilityCache(std::size_t max_bytes = kDefaultMaxBytes) : max_bytes_(max_bytes) {}
  FeasibilityCache(const FeasibilityCache&) = delete;
  FeasibilityCache& operator=(const FeasibilityCache&) = delete;

  // The answer kept under `key`, or null.
  [[nodiscard]] ClaimFeasibilityPtr find(const std::string& key);
  // Keeps `answer` under `key`; a key kept already keeps its answer.
  void insert(const std::string& key, ClaimFeasibilityPtr answer);

  [[nodiscard]] std::size_t size() const;
  [[nodiscard]] std::size_t bytes() const;

  // The values of `shapes`' per-node attributes in `state` (the state the answers are for; its
  // shapes), built on the first call.
  [[nodiscard]] const NodeValues& node_values(const ClusterState& state, const NodeShapes& shapes);

 private:
  struct Entry {
    ClaimFeasibilityPtr answer;
    std::size_t bytes = 0;
    std::list<std::string>::iterator use;  // in uses_
  };

  const std::size_t max_bytes_;
  std::unordered_map<std::string, Entry> entries_;
  std::list<std::string> uses_;  // keys, most recently used first
  std::size_t bytes_ = 0;
  std::optional<NodeValues> node_values_;
};

// About how many bytes `answer` holds.
[[nodiscard]] std::size_t estimated_bytes(const ClaimFeasibility& answer);

// check_feasibility(), through options.cache when it is set and options.spec_key is not empty:
// an answer kept for the same spec, own claim and options costs no step.
[[nodiscard]] ClaimFeasibilityPtr check_feasibility_cached(const k8s::ClaimSpec& spec,
                                                           const ClusterState& state,
                                                           const FeasibilityOptions& options);

}  // namespace topoguard::cluster
