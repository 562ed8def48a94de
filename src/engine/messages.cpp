#include "messages.h"

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

}  // namespace topoguard::engine::messages
