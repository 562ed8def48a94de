#include "messages.h"

#include <algorithm>

namespace topoguard::engine::messages {

namespace {

std::string join(const std::vector<std::string>& items) {
  std::string text;
  for (const std::string& item : items) {
    text += (text.empty() ? "" : ", ") + item;
  }
  return text;
}

std::string count_of(std::size_t count, const char* noun) {
  return std::to_string(count) + " " + noun + (count == 1 ? "" : "s");
}

std::string quoted_list(const RequestList& requests) {
  std::string text;
  for (const k8s::DeviceRequest* request : requests) {
    text += (text.empty() ? "" : ", ") + request->name;
  }
  return "[" + text + "]";
}

std::string constraint_text(const std::string& first, const std::string& second,
                            const std::string& attribute) {
  return "{requests: [" + first + ", " + second + "], matchAttribute: " + attribute + "}";
}

// One pair by name; several by count, since the constraints that follow name them.
std::string pairs_text(const PairList& pairs) {
  if (pairs.size() == 1) {
    return "GPU request \"" + pairs[0].first + "\" with NIC request \"" + pairs[0].second + "\"";
  }
  return std::to_string(pairs.size()) + " GPU/NIC request pairs";
}

// "constraint {...}" for one pair, "constraints [{...}, {...}]" for several.
std::string constraints_text(const PairList& pairs, const std::string& attribute) {
  if (pairs.size() == 1) {
    return "constraint " + constraint_text(pairs[0].first, pairs[0].second, attribute);
  }
  std::string text;
  for (const auto& [gpu, nic] : pairs) {
    text += (text.empty() ? "" : ", ") + constraint_text(gpu, nic, attribute);
  }
  return "constraints [" + text + "]";
}

// `state` says how the requests are (not) tied; the user has to choose the pairs.
std::string ambiguous(const std::string& state, const RequestList& untied_gpus,
                      const RequestList& untied_nics, const RequestList& gpus,
                      const RequestList& nics, const std::string& attribute) {
  const RequestList& some_gpus = untied_gpus.empty() ? gpus : untied_gpus;
  const RequestList& some_nics = untied_nics.empty() ? nics : untied_nics;
  return count_of(gpus.size(), "GPU request") + " " + quoted_list(gpus) + " and " +
         count_of(nics.size(), "NIC request") + " " + quoted_list(nics) + ": " + state +
         ", with no pairing to infer; add one constraint per GPU/NIC pair, e.g. " +
         constraint_text(some_gpus.front()->name, some_nics.front()->name, attribute);
}

constexpr const char* kNotTied = "not tied to one PCIe root";
constexpr const char* kNumaOnly = "aligned only by NUMA node, not to one PCIe root";

}  // namespace

std::string missing(const PairList& pairs, const std::string& attribute) {
  return pairs_text(pairs) + ": " + kNotTied + "; add " + constraints_text(pairs, attribute);
}

std::string missing_ambiguous(const RequestList& untied_gpus, const RequestList& untied_nics,
                              const RequestList& gpus, const RequestList& nics,
                              const std::string& attribute) {
  return ambiguous(kNotTied, untied_gpus, untied_nics, gpus, nics, attribute);
}

std::string numa_only(const PairList& pairs, const std::string& attribute) {
  return pairs_text(pairs) + ": " + kNumaOnly + "; keep the NUMA constraint or selectors and add " +
         constraints_text(pairs, attribute);
}

std::string numa_only_ambiguous(const RequestList& untied_gpus, const RequestList& untied_nics,
                                const RequestList& gpus, const RequestList& nics,
                                const std::string& attribute) {
  return ambiguous(kNumaOnly, untied_gpus, untied_nics, gpus, nics, attribute);
}

std::string multi_device_pairing(const RequestList& untied_gpus, const RequestList& untied_nics,
                                 bool numa_only, const std::string& attribute) {
  const RequestList& named = untied_gpus.empty() ? untied_nics : untied_gpus;
  return quoted_list(named) + " asks for several devices and is " +
         (numa_only ? kNumaOnly : kNotTied) +
         ": split them into one-device requests with one constraint per GPU/NIC pair, e.g. " +
         constraint_text("gpu-0", "nic-0", attribute);
}

std::string describe_choice(const k8s::DeviceRequest& request, const k8s::DeviceChoice& choice) {
  std::string name = request.name;
  if (!choice.subrequest.empty()) {
    name += "/" + choice.subrequest;
  }
  if (choice.allocation_mode == k8s::AllocationMode::kAll) {
    return name + " (allocationMode All)";
  }
  return name + " (count " + std::to_string(choice.count) + ")";
}

std::string multi_device(const std::vector<std::string>& offenders, std::size_t total,
                         const k8s::DeviceConstraint& constraint) {
  const std::string more =
      total > offenders.size() ? " and " + std::to_string(total - offenders.size()) + " more" : "";
  return "constraint on " + constraint.match_attribute + " covers " + join(offenders) + more +
         ": all their devices must share one PCIe root, so on typical servers the claim stays "
         "Pending; use count-1 requests and one constraint per GPU/NIC pair";
}

std::string overridden_attribute(const k8s::DeviceRequest& request, const k8s::DeviceChoice& choice,
                                 const k8s::DerivedAttribute& derived, const std::string& reads) {
  std::string name = request.name;
  if (!choice.subrequest.empty()) {
    name += "/" + choice.subrequest;
  }
  const std::string value = reads.empty()
                                ? "the value of the expression `" + derived.program.source() + "`"
                                : "the device's " + reads;
  return "request " + name + " derives its own " + derived.name + " (" + value +
         "): a constraint on " + derived.name +
         " then compares that value instead of the attribute the driver publishes, so it no "
         "longer keeps devices on one PCIe root or NUMA node. Remove the derived attribute, or "
         "give it a name of its own (e.g. derived/" +
         derived.name.substr(derived.name.rfind('/') + 1) +
         ") whose expression is exactly device.attributes[\"<domain>\"].<attribute>";
}

std::string overridden_note(const std::string& attribute) {
  return ". A request derives its own " + attribute +
         " (overridden-alignment-attribute): remove or rename that derived attribute first, or "
         "any constraint on " +
         attribute + " compares its value instead of the PCIe root";
}

std::string device_plugin_pairing(const std::vector<std::string>& gpu_sources,
                                  const std::vector<std::string>& nic_sources,
                                  const std::string& attribute) {
  return "GPU from " + join(gpu_sources) + " and NIC from " + join(nic_sources) +
         ": extended resources cannot be aligned; request both in one claim with constraint " +
         constraint_text("gpu", "nic", attribute);
}

std::string split_claims(const std::vector<std::string>& gpu_sources,
                         const std::vector<std::string>& nic_sources,
                         const std::string& attribute) {
  return "GPU from " + join(gpu_sources) + " and NIC from " + join(nic_sources) +
         ": constraints never span claims; put both requests in one claim with constraint " +
         constraint_text("gpu", "nic", attribute);
}

std::string inherited(const std::string& claim_source, bool numa_only,
                      const std::string& attribute) {
  return claim_source + (numa_only ? " ties GPU and NIC only by NUMA node"
                                   : " does not tie GPU and NIC to one PCIe root") +
         " (see the finding on it): fix it with a " + attribute +
         " constraint and re-create it (claim specs are immutable)";
}

std::string unresolved(const std::string& pod_claim, const std::string& kind,
                       const std::string& name, const std::string& namespace_name) {
  return "pod claim \"" + pod_claim + "\" references " + kind + " \"" + name +
         "\" in namespace " + namespace_name +
         ", which is not in the input, so its GPU/NIC alignment cannot be checked";
}

namespace {

// "a, b, c" with at most five names, then "and N more".
std::string some_names(const std::vector<std::string>& names) {
  constexpr std::size_t kShown = 5;
  std::vector<std::string> shown(names.begin(),
                                 names.begin() + static_cast<std::ptrdiff_t>(
                                                     std::min(names.size(), kShown)));
  std::string text = join(shown);
  if (names.size() > kShown) {
    text += " and " + std::to_string(names.size() - kShown) + " more";
  }
  return text;
}

const char* shortfall_text(cluster::Shortfall shortfall) {
  switch (shortfall) {
    case cluster::Shortfall::kNoSharedValue:
      return "no value of the attribute is shared by enough devices";
    case cluster::Shortfall::kAttributeMissing:
      return "the attribute is missing";
    case cluster::Shortfall::kNotEnoughDevices:
      return "not enough devices";
    case cluster::Shortfall::kAllModeRejected:
      return "allocationMode All takes a device the constraint rejects";
    case cluster::Shortfall::kConflict:
      return "distinct attributes, shared capacity or counters rule out the devices";
    case cluster::Shortfall::kAllocationError:
      return "a derived attribute fails";
    case cluster::Shortfall::kNone:
      break;
  }
  return "unknown";
}

}  // namespace

std::string unsatisfiable(const cluster::ClaimFeasibility& feasibility, bool what_if) {
  std::vector<std::string> parts;
  for (cluster::Shortfall shortfall :
       {cluster::Shortfall::kConflict, cluster::Shortfall::kNoSharedValue,
        cluster::Shortfall::kAttributeMissing,
        cluster::Shortfall::kAllModeRejected, cluster::Shortfall::kNotEnoughDevices}) {
    std::size_t nodes = 0;
    for (std::size_t i = 0; i < feasibility.nodes.size(); ++i) {
      nodes += feasibility.nodes[i].shortfall == shortfall ? feasibility.group_size(i) : 0;
    }
    if (nodes != 0) {
      parts.push_back(std::string(shortfall_text(shortfall)) + " on " + count_of(nodes, "node"));
    }
  }
  std::string text = what_if ? "the alignment constraint topoguard's fix would add cannot be met "
                               "by any node, so after the fix its pods would stay Pending: "
                 : feasibility.only_now
                     ? "no node can satisfy this claim now, only because ResourceClaims already "
                       "allocated hold the devices it needs (the hardware could hold it once "
                       "they are freed), so its pods would stay Pending until then: "
                     : "no node can satisfy this claim, so its pods would stay Pending: ";
  text += join(parts);
  if (const cluster::NodeFeasibility* closest = feasibility.closest()) {
    text += "; closest node " + closest->node + ": " + closest->reason;
  }
  if (!feasibility.notes.empty()) {
    text += " (not modelled: " + join(feasibility.notes) + ")";
  }
  return text;
}

std::string allocation_fails(const cluster::AllocationError& error) {
  if (error.cause == cluster::AllocationError::Cause::kAllModeConstraint) {
    return "the scheduler cannot allocate this claim: request \"" + error.request +
           "\" (allocationMode All) must take device " + error.device + " (node " + error.node +
           "), which the " + error.attribute +
           " constraint refuses; the allocator treats that as an error, so its pods would not "
           "be scheduled";
  }
  return "the scheduler cannot allocate this claim: derived attribute \"" + error.attribute +
         "\" of request \"" + error.request + "\" fails on device " + error.device + " (node " +
         error.node + "): " + error.message +
         "; a CEL error in a derived attribute aborts the allocation, so its pods would not be "
         "scheduled";
}

std::string alignment_impossible(const std::vector<std::string>& nodes,
                                 const std::string& attribute) {
  return "; but with the cluster state, a " + attribute +
         " constraint can be met on none of the nodes that could hold the claim (" +
         some_names(nodes) +
         "), so NUMA is the best alignment this hardware offers, and the fix is withheld (it would "
         "keep the pods Pending)";
}

std::string attribute_not_published(const cluster::AttributePublication& publication,
                                    bool what_if) {
  std::string text = "driver \"" + publication.driver + "\"";
  if (!publication.nodes_without.empty()) {
    const std::size_t total = publication.node_count;
    const std::size_t without = publication.nodes_without.size();
    text += " publishes no " + publication.attribute + " on the devices request \"" +
            publication.request + "\" can get, on " +
            (without == total ? std::string("every node that has them")
                              : std::to_string(without) + " of the " + count_of(total, "node") +
                                    " that have them") +
            " (" + some_names(publication.nodes_without) + ")";
  }
  if (!publication.nonstandard_values.empty()) {
    text += std::string(publication.nodes_without.empty() ? "" : "; it") + " publishes " +
            publication.attribute + " values not in the form pci<domain>:<bus> (" +
            some_names(publication.nonstandard_values) + "), which never equal a GPU's root";
  }
  text += what_if ? ": the constraint topoguard's fix would add can never be met there"
                  : ": the claim's constraint can never be met there";
  return text;
}

}  // namespace topoguard::engine::messages
