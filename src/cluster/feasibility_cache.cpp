#include "topoguard/cluster/feasibility_cache.h"

#include <numeric>

namespace topoguard::cluster {

namespace {

std::size_t text_bytes(const std::string& text) { return sizeof(std::string) + text.capacity(); }

template <typename Strings>
std::size_t all_text_bytes(const Strings& texts) {
  return std::accumulate(texts.begin(), texts.end(), std::size_t{0},
                         [](std::size_t sum, const std::string& text) {
                           return sum + text_bytes(text);
                         });
}

}  // namespace

std::size_t estimated_bytes(const ClaimFeasibility& answer) {
  std::size_t bytes = sizeof answer + all_text_bytes(answer.notes);
  for (const NodeFeasibility& node : answer.nodes) {
    bytes += sizeof node + text_bytes(node.node) + text_bytes(node.reason) +
             node.requests.size() * sizeof(RequestOnNode);
    for (const auto& [request, devices] : node.assignment) {
      bytes += text_bytes(request) + all_text_bytes(devices);
    }
  }
  for (const auto& group : answer.node_groups) {
    bytes += sizeof group + group.size() * sizeof(std::size_t);
  }
  for (const AttributePublication& publication : answer.publications) {
    bytes += sizeof publication + all_text_bytes(publication.nodes_without) +
             all_text_bytes(publication.nonstandard_values);
  }
  return bytes;
}

ClaimFeasibilityPtr FeasibilityCache::find(const std::string& key) {
  const auto it = entries_.find(key);
  if (it == entries_.end()) {
    return nullptr;
  }
  uses_.splice(uses_.begin(), uses_, it->second.use);
  return it->second.answer;
}

void FeasibilityCache::insert(const std::string& key, ClaimFeasibilityPtr answer) {
  const std::size_t bytes = estimated_bytes(*answer) + 2 * key.size();
  if (bytes > max_bytes_) {
    return;
  }
  if (entries_.count(key) != 0) {
    return;
  }
  while (bytes_ + bytes > max_bytes_) {
    const auto oldest = entries_.find(uses_.back());
    bytes_ -= oldest->second.bytes;
    entries_.erase(oldest);
    uses_.pop_back();
  }
  uses_.push_front(key);
  entries_.emplace(key, Entry{std::move(answer), bytes, uses_.begin()});
  bytes_ += bytes;
}

std::size_t FeasibilityCache::size() const {
  return entries_.size();
}

std::size_t FeasibilityCache::bytes() const {
  return bytes_;
}

const NodeValues& FeasibilityCache::node_values(const ClusterState& state,
                                                const NodeShapes& shapes) {
  if (!node_values_) {
    node_values_.emplace(state, shapes.per_node_attributes());
  }
  return *node_values_;
}

ClaimFeasibilityPtr check_feasibility_cached(const k8s::ClaimSpec& spec, const ClusterState& state,
                                             const FeasibilityOptions& options) {
  if (options.cache == nullptr || options.spec_key.empty()) {
    return std::make_shared<const ClaimFeasibility>(check_feasibility(spec, state, options));
  }
  // Everything else the answer depends on: whose allocation holds nothing, whether allocations
  // count, and whether it is grouped by shape (node_groups).
  std::string key = options.spec_key;
  key += '\0';
  key += options.own_claim;
  key += '\0';
  key += options.with_allocations ? 'a' : 'h';
  key += options.shapes != nullptr ? 's' : 'n';
  if (ClaimFeasibilityPtr kept = options.cache->find(key)) {
    return kept;
  }
  auto answer = std::make_shared<const ClaimFeasibility>(check_feasibility(spec, state, options));
  if (!answer->budget_exhausted) {
    options.cache->insert(key, answer);
  }
  return answer;
}

}  // namespace topoguard::cluster
