// Test driver for the allocator differential (allocator_differential.py): reads one JSON request
// per line,
//   {"objects": [ResourceSlice, DeviceClass, ResourceClaim (allocated), ...], "claim": {...}}
// and prints one JSON line per request with topoguard's feasibility verdict on the claim against
// that cluster state (cluster::check_feasibility, as `audit --cluster-state` and the webhook run
// it): {"outcome": "fits" | "now" (not with the state's allocations, but on the same hardware
// without them) | "never" | "error" (the allocation fails with an error) | "unknown",
// "reason": ..., "nodes": {node: why it cannot, or why unknown}}. A request that cannot be read
// prints {"bad_request": "..."}.
#include <iostream>
#include <string>

#include "topoguard/cluster/cluster_state.h"
#include "topoguard/cluster/feasibility.h"
#include "topoguard/common/json.h"
#include "topoguard/k8s/claim_view.h"

namespace {

using topoguard::Json;
namespace cluster = topoguard::cluster;

// Why the answer is unknown: the notes of the check and of the nodes that were unknown.
std::string unknown_reason(const cluster::ClaimFeasibility& result) {
  std::string reason;
  for (const std::string& note : result.notes) {
    reason += note + "; ";
  }
  for (const cluster::NodeFeasibility& node : result.nodes) {
    if (node.verdict == cluster::Verdict::kUnknown) {
      reason += node.node + ": " + node.reason + "; ";
    }
  }
  return reason;
}

Json with_nodes(Json out, const cluster::ClaimFeasibility& result) {
  Json nodes = Json::object();
  for (const cluster::NodeFeasibility& node : result.nodes) {
    nodes[node.node] = node.reason;
  }
  out["nodes"] = std::move(nodes);
  return out;
}

Json answer(const Json& request) {
  cluster::ClusterStateBuilder builder;
  for (const Json& object : request.at("objects")) {
    if (auto added = builder.add(object); !added) {
      return Json{{"bad_request", added.error().to_string()}};
    }
  }
  const cluster::ClusterState state = std::move(builder).finish();
  const Json& claim = request.at("claim");
  auto spec = topoguard::k8s::read_claim_spec(claim);
  if (!spec) {
    return Json{{"bad_request", spec.error().to_string()}};
  }
  cluster::FeasibilityOptions options;
  options.own_claim = claim.at("metadata").value("namespace", "default") + "/" +
                      claim.at("metadata").at("name").get<std::string>();
  const cluster::ClaimFeasibility result = cluster::check_feasibility(*spec, state, options);
  switch (result.verdict) {
    case cluster::Verdict::kSatisfiable:
      return with_nodes(Json{{"outcome", "fits"}}, result);
    case cluster::Verdict::kUnsatisfiable:
      if (result.allocation_error) {
        return with_nodes(Json{{"outcome", "error"}, {"reason", result.allocation_error->message}},
                          result);
      }
      return with_nodes(Json{{"outcome", result.only_now ? "now" : "never"}}, result);
    case cluster::Verdict::kUnknown:
      break;
  }
  return with_nodes(Json{{"outcome", "unknown"}, {"reason", unknown_reason(result)}}, result);
}

}  // namespace

int main() {
  std::ios::sync_with_stdio(false);
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty()) {
      continue;
    }
    const Json request = Json::parse(line, nullptr, /*allow_exceptions=*/false);
    const Json response = request.is_object() && request.contains("objects") &&
                                  request.contains("claim")
                              ? answer(request)
                              : Json{{"bad_request", "not a request"}};
    std::cout << response.dump(-1, ' ', false, Json::error_handler_t::replace) << '\n';
  }
  return 0;
}
