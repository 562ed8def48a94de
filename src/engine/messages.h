// The text of every finding, in one place so that wording and the fix a user should write stay
// consistent across rules. A finding says what is wrong and what to write, short enough for a CI
// log line; why it matters (with the measured figures) is told once, by the rule table
// (topoguard/policy/rule_info.h: `topoguard explain RULE`, the SARIF help).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "topoguard/cluster/feasibility.h"
#include "topoguard/k8s/claim_view.h"

namespace topoguard::engine::messages {

using RequestList = std::vector<const k8s::DeviceRequest*>;
using PairList = std::vector<std::pair<std::string, std::string>>;

[[nodiscard]] std::string missing(const PairList& pairs, const std::string& attribute);
[[nodiscard]] std::string missing_ambiguous(const RequestList& untied_gpus,
                                            const RequestList& untied_nics,
                                            const RequestList& gpus, const RequestList& nics,
                                            const std::string& attribute);
[[nodiscard]] std::string numa_only(const PairList& pairs, const std::string& attribute);
[[nodiscard]] std::string numa_only_ambiguous(const RequestList& untied_gpus,
                                              const RequestList& untied_nics,
                                              const RequestList& gpus, const RequestList& nics,
                                              const std::string& attribute);
// GPU/NIC requests of several devices each: one constraint over them would need all of them on
// one root, so the user has to split them into one-device pairs.
[[nodiscard]] std::string multi_device_pairing(const RequestList& untied_gpus,
                                               const RequestList& untied_nics, bool numa_only,
                                               const std::string& attribute);
[[nodiscard]] std::string describe_choice(const k8s::DeviceRequest& request,
                                          const k8s::DeviceChoice& choice);
// `offenders` lists the first of `total` multi-device choices the constraint binds.
[[nodiscard]] std::string multi_device(const std::vector<std::string>& offenders,
                                       std::size_t total, const k8s::DeviceConstraint& constraint);
// A derived attribute of `request` / `choice` that replaces the alignment or NUMA attribute it is
// named after; `reads` is the attribute its expression is exactly a read of, or empty.
[[nodiscard]] std::string overridden_attribute(const k8s::DeviceRequest& request,
                                               const k8s::DeviceChoice& choice,
                                               const k8s::DerivedAttribute& derived,
                                               const std::string& reads);
// Appended to a misalignment message when a request overrides `attribute` itself.
[[nodiscard]] std::string overridden_note(const std::string& attribute);

// Pod-level messages. `gpu_sources` / `nic_sources` describe where each device comes from,
// e.g. "extended resource nvidia.com/gpu" or "claim \"pair\" (ResourceClaimTemplate x)".
[[nodiscard]] std::string device_plugin_pairing(const std::vector<std::string>& gpu_sources,
                                                const std::vector<std::string>& nic_sources,
                                                const std::string& attribute);
[[nodiscard]] std::string split_claims(const std::vector<std::string>& gpu_sources,
                                       const std::vector<std::string>& nic_sources,
                                       const std::string& attribute);
[[nodiscard]] std::string inherited(const std::string& claim_source, bool numa_only,
                                    const std::string& attribute);
[[nodiscard]] std::string unresolved(const std::string& pod_claim, const std::string& kind,
                                     const std::string& name, const std::string& namespace_name);

// Feasibility against the cluster state; `what_if`: judged on the constraint topoguard's fix
// would add rather than on the claim's own.
[[nodiscard]] std::string unsatisfiable(const cluster::ClaimFeasibility& feasibility, bool what_if);
// A derived attribute's expression fails on a device a request can get: the allocation aborts.
[[nodiscard]] std::string allocation_fails(const cluster::AllocationError& error);
// Appended to a numa-only-alignment message: `attribute` can be met on none of `nodes`, the
// nodes that could hold the claim as written.
[[nodiscard]] std::string alignment_impossible(const std::vector<std::string>& nodes,
                                               const std::string& attribute);
[[nodiscard]] std::string attribute_not_published(const cluster::AttributePublication& publication,
                                                  bool what_if);

}  // namespace topoguard::engine::messages
