#include "messages.h"

#include <algorithm>

namespace topoguard::engine::messages {

namespace {

// Measured on A100 + ConnectX-6 (200 Gbit/s InfiniBand), GPUDirect RDMA.
constexpr const char* kNumbers =
    "measured on A100 + ConnectX-6: 194.6 Gbit/s on one PCIe root, 127.1 on the same NUMA node "
    "but another root, 110.0 across NUMA nodes";

std::string join(const std::vector<std::string>& items) {
  std::string text;
  for (const std::string& item : items) {
    text += (text.empty() ? "" : ", ") + item;
  }
  return text;
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

std::string pairs_text(const PairList& pairs) {
  std::string text;
  for (const auto& [gpu, nic] : pairs) {
    text += (text.empty() ? "" : ", ") + std::string("GPU request \"") + gpu +
            "\" with NIC request \"" + nic + "\"";
  }
  return text;
}

std::string constraints_text(const PairList& pairs, const std::string& attribute) {
  std::string text;
  for (const auto& [gpu, nic] : pairs) {
    text += (text.empty() ? "" : ", ") + constraint_text(gpu, nic, attribute);
  }
  return "[" + text + "]";
}

std::string ambiguous_advice(const RequestList& untied_gpus, const RequestList& untied_nics,
                             const RequestList& gpus, const RequestList& nics,
                             const std::string& attribute) {
  const RequestList& some_gpus = untied_gpus.empty() ? gpus : untied_gpus;
  const RequestList& some_nics = untied_nics.empty() ? nics : untied_nics;
  std::string all_names;
  for (const RequestList* list : {&some_gpus, &some_nics}) {
    for (const k8s::DeviceRequest* request : *list) {
      all_names += (all_names.empty() ? "" : ", ") + request->name;
    }
  }
  return "cannot be paired automatically (" + std::to_string(gpus.size()) + " GPU request(s) " +
         quoted_list(gpus) + ", " + std::to_string(nics.size()) + " NIC request(s) " +
         quoted_list(nics) + "): decide which NIC feeds which GPU and add one constraint per pair, "
         "e.g. " + constraint_text(some_gpus.front()->name, some_nics.front()->name, attribute) +
         ", or one constraint naming all of them if they must share a root: {requests: [" +
         all_names + "], matchAttribute: " + attribute + "}";
}

}  // namespace

std::string missing(const PairList& pairs, const std::string& attribute) {
  return pairs_text(pairs) + ": not tied by a " + attribute +
         " constraint, so the scheduler may pick a NIC on another PCIe root or NUMA node (" +
         kNumbers + "). Fix: add constraints " + constraints_text(pairs, attribute);
}

std::string missing_ambiguous(const RequestList& untied_gpus, const RequestList& untied_nics,
                              const RequestList& gpus, const RequestList& nics,
                              const std::string& attribute) {
  return "GPU and NIC requests are not tied by a " + attribute + " constraint (" + kNumbers +
         ") and " + ambiguous_advice(untied_gpus, untied_nics, gpus, nics, attribute);
}

std::string numa_only(const PairList& pairs, const std::string& attribute) {
  return pairs_text(pairs) +
         ": aligned only by NUMA node, which does not put them on one PCIe root (" + kNumbers +
         "). Fix: keep the NUMA constraint or selectors and add constraints " +
         constraints_text(pairs, attribute);
}

std::string numa_only_ambiguous(const RequestList& untied_gpus, const RequestList& untied_nics,
                                const RequestList& gpus, const RequestList& nics,
                                const std::string& attribute) {
  return "GPU and NIC requests are aligned only by NUMA node, which does not put them on one "
         "PCIe root (" + std::string(kNumbers) + "), and " +
         ambiguous_advice(untied_gpus, untied_nics, gpus, nics, attribute);
}

std::string multi_device_pairing(const RequestList& untied_gpus, const RequestList& untied_nics,
                                 bool numa_only, const std::string& attribute) {
  const RequestList& named = untied_gpus.empty() ? untied_nics : untied_gpus;
  return std::string(numa_only ? "GPU and NIC requests are aligned only by NUMA node"
                               : "GPU and NIC requests are not tied by a " + attribute +
                                     " constraint") +
         " (" + kNumbers + "), and " + quoted_list(named) +
         " asks for several devices: one constraint over them would need every device on one "
         "PCIe root, which typical servers cannot satisfy. Split them into one-device requests "
         "(gpu-0, nic-0, gpu-1, nic-1, ...) and add one constraint per pair, e.g. {requests: "
         "[gpu-0, nic-0], matchAttribute: " + attribute + "}";
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
         ": every device of these requests must share one PCIe root, which typical servers "
         "cannot satisfy (one NIC per GPU root), so the claim stays Pending. Use one request per "
         "GPU and per NIC (count 1) and one constraint per GPU/NIC pair";
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
         ": device plugins and DRA extended resources (whose generated claim has no constraints) "
         "cannot express PCIe alignment; at best Topology Manager aligns by NUMA node (" +
         kNumbers +
         "). Request both in one ResourceClaim(Template): requests [{name: gpu, exactly: "
         "{deviceClassName: gpu.nvidia.com}}, {name: nic, exactly: {deviceClassName: <NIC "
         "class>}}], constraints [{requests: [gpu, nic], matchAttribute: " + attribute +
         "}], and reference it from spec.resourceClaims";
}

std::string split_claims(const std::vector<std::string>& gpu_sources,
                         const std::vector<std::string>& nic_sources,
                         const std::string& attribute) {
  return "GPU from " + join(gpu_sources) + " and NIC from " + join(nic_sources) +
         ": constraints never span claims, so nothing ties them to one PCIe root. Put the GPU "
         "and NIC requests in one ResourceClaim(Template) with constraints [{requests: [gpu, "
         "nic], matchAttribute: " + attribute + "}]";
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

std::string count_of(std::size_t count, const char* noun) {
  return std::to_string(count) + " " + noun + (count == 1 ? "" : "s");
}

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
    case cluster::Shortfall::kNone:
      break;
  }
  return "unknown";
}

}  // namespace

std::string unsatisfiable(const cluster::ClaimFeasibility& feasibility, bool what_if) {
  std::vector<std::string> parts;
  for (cluster::Shortfall shortfall :
       {cluster::Shortfall::kNoSharedValue, cluster::Shortfall::kAttributeMissing,
        cluster::Shortfall::kAllModeRejected, cluster::Shortfall::kNotEnoughDevices}) {
    const auto nodes = static_cast<std::size_t>(
        std::count_if(feasibility.nodes.begin(), feasibility.nodes.end(),
                      [&](const cluster::NodeFeasibility& node) { return node.shortfall == shortfall; }));
    if (nodes != 0) {
      parts.push_back(std::string(shortfall_text(shortfall)) + " on " + count_of(nodes, "node"));
    }
  }
  std::string text = what_if ? "the alignment constraint topoguard's fix would add cannot be met "
                               "by any node, so after the fix its pods would stay Pending: "
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

std::string attribute_not_published(const cluster::AttributePublication& publication,
                                    bool what_if) {
  std::string text = "driver \"" + publication.driver + "\"";
  if (!publication.nodes_without.empty()) {
    const std::size_t total = publication.nodes.size();
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
            some_names(publication.nonstandard_values) +
            "), as dra-driver-sriov builds before November 2025 did: they never equal a GPU's root";
  }
  text += what_if ? ": the constraint topoguard's fix would add can never be met there"
                  : ": the claim's constraint can never be met there";
  return text;
}

}  // namespace topoguard::engine::messages
