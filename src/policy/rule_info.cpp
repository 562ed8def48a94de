#include "topoguard/policy/rule_info.h"

namespace topoguard::policy {

namespace {

// Told once, by `topoguard explain` and the SARIF help of the rules about the GPU-NIC path
// (the README's "Why" gives the same figures).
constexpr std::string_view kMeasured =
    "Measured on A100 + ConnectX-6 (200 Gbit/s InfiniBand, GPUDirect RDMA): 194.6 Gbit/s with "
    "GPU and NIC on one PCIe root, 127.1 Gbit/s on the same NUMA node but another root, 110.0 "
    "Gbit/s across NUMA nodes; llm-d prefill-to-decode KV-cache transfers take 56.8 ms aligned "
    "against 122.3 ms across NUMA nodes.";

struct RuleEntry {
  RuleInfo info;
  bool about_the_path;  // the measured figures explain why the rule matters
};

// In RuleId order (checked at compile time below).
constexpr std::array<RuleEntry, kRuleCount> kRules{{
    {{RuleId::kMissingPcieAlignment, "missing-pcie-alignment",
      "GPU and NIC requests not tied to one PCIe root",
      "A claim or template requests a GPU and an RDMA NIC without a constraint whose "
      "matchAttribute is a PCIe-root attribute, so the scheduler may place them under different "
      "roots and GPUDirect RDMA traffic crosses the CPU.",
      Action::kDeny, true, Severity::kHigh,
      "Without a constraint that ties them, the scheduler may give a pod a GPU and an RDMA NIC "
      "under different PCIe roots, or on different NUMA nodes: the pod starts, on a slow path.",
      "A claim or template has GPU and NIC requests, and some GPU (or NIC) request is not tied "
      "to a NIC (GPU) request by a constraint whose matchAttribute is an alignment attribute "
      "(resource.kubernetes.io/pcieRoot, or one of the policy's alignment.acceptedAttributes) "
      "and whose requests cover both. Absent or empty requests cover all; `req` covers all its "
      "subrequests, `req/sub` only that one. Also fires on a workload whose claim template is "
      "unaligned, at its resourceClaims entry (without a fix there).",
      "Add one constraint per GPU/NIC pair: constraints: [{requests: [gpu, nic], "
      "matchAttribute: resource.kubernetes.io/pcieRoot}]. `topoguard fix` (and the webhook's "
      "/mutate) adds them when there are as many GPU as NIC requests, paired in document order; "
      "otherwise the finding names the requests to pair. A claim no node can satisfy then stays "
      "Pending instead of running badly; `topoguard audit --cluster-state` checks that some "
      "node can."},
     true},
    {{RuleId::kNumaOnlyAlignment, "numa-only-alignment", "GPU and NIC tied only by NUMA node",
      "The GPU and NIC requests share only a NUMA-node attribute (or CEL selectors pinning one), "
      "which still allows different PCIe roots on the same socket.",
      Action::kDeny, true, Severity::kHigh,
      "The same NUMA node is not a good path: GPU and NIC may still sit under different PCIe "
      "roots of one socket, and their traffic then crosses the CPU.",
      "GPU and NIC requests are tied only by a NUMA attribute (resource.kubernetes.io/numaNode, "
      "dra.net/numaNode, gpu.nvidia.com/numa, ...: the policy's alignment.numaAttributes) or "
      "pinned to one NUMA node by CEL selectors, with no alignment constraint. With "
      "`topoguard audit --cluster-state`, when the alignment attribute is impossible on every "
      "node that could hold the claim (GPUs on roots of their own, as on GB200/GB300 nodes), "
      "the message says so, no fix is offered and the rule's whenAlignmentImpossible action "
      "applies.",
      "Keep the NUMA constraint or selectors and add constraints: [{requests: [gpu, nic], "
      "matchAttribute: resource.kubernetes.io/pcieRoot}]. `topoguard fix` adds it as for "
      "missing-pcie-alignment. On hardware where no GPU and NIC share a root, the NUMA "
      "constraint is the best path there is: `topoguard topology --cluster-state` names the "
      "strongest attribute that pairs them."},
     true},
    {{RuleId::kDevicePluginPairing, "device-plugin-pairing",
      "GPU and NIC from device plugins cannot be aligned",
      "A pod gets its GPU or NIC from an extended resource (device plugin or Multus network), "
      "which cannot express PCIe alignment; move both to one DRA claim with a constraint.",
      Action::kWarn, false, Severity::kMedium,
      "Device plugins (nvidia.com/gpu with an SR-IOV or RDMA extended resource) and DRA extended "
      "resources (whose generated claim has no constraints) cannot express PCIe alignment; at "
      "best the kubelet's Topology Manager aligns them by NUMA node.",
      "A pod (template) gets a GPU and a NIC, and at least one of them comes from an extended "
      "resource or from a Multus network whose NetworkAttachmentDefinition names a NIC "
      "resource. The containers of one pod count together.",
      "Request both in one ResourceClaim(Template): requests [{name: gpu, exactly: "
      "{deviceClassName: gpu.nvidia.com}}, {name: nic, exactly: {deviceClassName: <NIC "
      "class>}}], constraints [{requests: [gpu, nic], matchAttribute: "
      "resource.kubernetes.io/pcieRoot}], and reference it from the pod's spec.resourceClaims. "
      "There is no automatic fix."},
     true},
    {{RuleId::kSplitClaims, "split-claims", "GPU and NIC in different ResourceClaims",
      "A pod's GPU and NIC come from different ResourceClaims; constraints never span claims, "
      "so nothing can keep them on one PCIe root.",
      Action::kDeny, false, Severity::kHigh,
      "Constraints never span claims, so a GPU from one ResourceClaim and a NIC from another "
      "may land under any two roots.",
      "A pod's GPU and NIC come from different ResourceClaims or claim templates.",
      "Put the GPU and NIC requests in one ResourceClaim(Template) with constraints "
      "[{requests: [gpu, nic], matchAttribute: resource.kubernetes.io/pcieRoot}]. There is no "
      "automatic fix."},
     true},
    {{RuleId::kMultiDeviceAlignment, "multi-device-alignment",
      "Alignment constraint over several devices of one request",
      "An alignment constraint covers a request with count > 1 or allocationMode All: every "
      "covered device must share one PCIe root, which typical servers cannot satisfy.",
      Action::kWarn, false, Severity::kMedium,
      "A constraint holds for every device it covers: over a request of several devices, all of "
      "them must sit under one PCIe root. Typical servers have one NIC per root, so no node "
      "fits and the claim stays Pending (large nodes may still fit, hence warn).",
      "An alignment constraint covers a request with count > 1 or allocationMode: All.",
      "Use one request per GPU and per NIC (count 1: gpu-0, nic-0, gpu-1, nic-1, ...) and one "
      "constraint per GPU/NIC pair. There is no automatic fix."},
     false},
    {{RuleId::kUnresolvedClaim, "unresolved-claim",
      "Referenced claim or template not in the audited input",
      "A pod references a ResourceClaim or ResourceClaimTemplate that is not in the audited "
      "input, so its GPU/NIC alignment could not be checked.",
      Action::kAudit, false, Severity::kLow,
      "A pod's alignment is judged from the claims and templates it references; one missing "
      "from the input cannot be checked.",
      "A pod references a ResourceClaim or ResourceClaimTemplate that is not in the audited "
      "input (audit only: the webhook sees one object at a time and judges the claim itself "
      "when it is created).",
      "Audit the claim or template together with the pod (one command, one input), or leave "
      "it: its default action is audit, so it fails no run by default."},
     false},
    {{RuleId::kUnsatisfiableAlignment, "unsatisfiable-alignment",
      "No node can satisfy the claim's alignment constraint",
      "Checked against the cluster's ResourceSlices as the scheduler's allocator would: no node "
      "can give every request its devices under one value of the alignment attribute, so pods "
      "using the claim (or the constraint topoguard's fix would add) would stay Pending.",
      Action::kWarn, false, Severity::kMedium,
      "A claim no node can satisfy leaves its pods Pending. Better to learn it before "
      "deploying, and before `topoguard fix` adds a constraint the cluster cannot meet.",
      "With `topoguard audit --cluster-state`: checked against the cluster's ResourceSlices as "
      "the scheduler's structured allocator would, no node can give every request its devices "
      "under one value of the alignment attribute, for a claim or template with an alignment "
      "constraint or for the constraint topoguard's fix would add (what-if). The message gives "
      "the reason per node (no shared root value, the attribute is missing, not enough "
      "devices it can have (taints, capacity, held by other claims), allocationMode: All takes "
      "a device the constraint rejects, distinct attributes, shared capacity or counters) and "
      "the closest node, and says when the claim cannot be met only now because ResourceClaims "
      "in the state hold the devices. It also fires, at the derived attribute, when a derived "
      "attribute's CEL expression (DRADerivedAttributes) fails on a device a request can get: "
      "that error aborts the allocation on every node. "
      "Unknown answers (selectors that cannot be evaluated exactly, incomplete slices, "
      "the search bound) never fire it.",
      "Ask for what one root of a node holds (`topoguard topology --cluster-state` lists the "
      "GPUs and NICs under each root and the aligned pairs per node), or add nodes that have "
      "it. There is no automatic fix."},
     false},
    {{RuleId::kAttributeNotPublished, "attribute-not-published",
      "A requested driver publishes no usable PCIe-root attribute",
      "A driver whose devices a constrained request can get publishes no alignment attribute on "
      "some or all nodes, or pcieRoot values not in the form pci<domain>:<bus> (the old "
      "dra-driver-sriov format), so the constraint can never be met there.",
      Action::kWarn, false, Severity::kMedium,
      "A constraint on an attribute a device does not publish, or publishes in another form, "
      "can never be met by that device: the claim stays Pending on those nodes.",
      "With `topoguard audit --cluster-state`: a driver whose devices a constrained request (or "
      "the fix's constraint) can get publishes no alignment attribute on some or all nodes, or "
      "resource.kubernetes.io/pcieRoot values not in the form pci<domain>:<bus> (the old "
      "dra-driver-sriov format, which never equals a GPU's root).",
      "Run a driver version that publishes resource.kubernetes.io/pcieRoot as pci<domain>:<bus> "
      "(dra-driver-sriov builds from November 2025 on), or constrain on an attribute the "
      "driver does publish and list it in the policy's alignment.acceptedAttributes. There is "
      "no automatic fix."},
     false},
    {{RuleId::kOverriddenAlignmentAttribute, "overridden-alignment-attribute",
      "A derived attribute replaces an alignment or NUMA attribute",
      "A request under a constraint defines a derived attribute (KEP-6080, DRADerivedAttributes) "
      "named like a PCIe-root or NUMA attribute whose expression is not exactly a read of that "
      "attribute, so the scheduler matches the expression's value instead of the device's "
      "topology and a constraint on that name no longer aligns anything.",
      Action::kDeny, false, Severity::kHigh,
      "A derived attribute's value replaces the driver's attribute of the same name when the "
      "scheduler matches constraints: a constant such as '\"any\"' on both requests makes a "
      "pcieRoot constraint hold for any GPU and NIC, so the claim looks aligned and is not.",
      "A request that a constraint covers has a derived attribute (requests[].exactly or "
      "firstAvailable[] derivedAttributes; gate DRADerivedAttributes, alpha in 1.37) named like "
      "one of the policy's alignment or NUMA attributes, whose CEL expression is not exactly a "
      "read of that attribute (device.attributes[\"resource.kubernetes.io\"].pcieRoot). Decided "
      "from the parsed expression, never its text.",
      "Remove the derived attribute, or give it a name of its own (for example root) that is "
      "exactly a read of the alignment attribute and constrain on that name. There is no "
      "automatic fix."},
     false},
}};

constexpr bool table_in_rule_order() {
  for (std::size_t i = 0; i < kRules.size(); ++i) {
    if (kRules[i].info.id != kAllRules[i]) {
      return false;
    }
  }
  return true;
}
static_assert(table_in_rule_order(), "kRules must list every rule in RuleId order");

constexpr std::array<std::string_view, 3> kSeverityNames{"high", "medium", "low"};

const RuleEntry& entry_of(RuleId rule) { return kRules[static_cast<std::size_t>(rule)]; }

}  // namespace

std::string_view severity_name(Severity severity) {
  return kSeverityNames[static_cast<std::size_t>(severity)];
}

const RuleInfo& rule_info(RuleId rule) { return entry_of(rule).info; }

std::string help_anchor(RuleId rule) { return "rule-" + std::string(rule_info(rule).name); }

std::string rule_help(RuleId rule, HelpFormat format) {
  const RuleEntry& entry = entry_of(rule);
  const RuleInfo& info = entry.info;
  const bool markdown = format == HelpFormat::kMarkdown;
  const auto section = [&](std::string_view heading, std::string_view text) {
    return "\n\n" + std::string(markdown ? "**" : "") + std::string(heading) +
           (markdown ? ".** " : ": ") + std::string(text);
  };
  std::string why(info.why);
  if (entry.about_the_path) {
    why += std::string(" ") + std::string(kMeasured);
  }
  const std::string text =
      std::string(markdown ? "**" : "") + std::string(info.name) + (markdown ? "**" : "") + ": " +
      std::string(info.title) + "\n\n" + "Default action: " +
      std::string(action_name(info.default_action)) +
      ". Severity: " + std::string(severity_name(info.severity)) +
      ". Automatic fix: " + (info.fixable ? "yes" : "no") + "." + section("Why", why) +
      section("Fires when", info.fires) + section("Fix", info.fix) + "\n";
  if (!markdown) {
    return text;
  }
  // Placeholders such as pci<domain>:<bus> would be read as HTML tags.
  std::string escaped;
  for (const char c : text) {
    escaped += c == '<' ? std::string("&lt;") : std::string(1, c);
  }
  return escaped;
}

}  // namespace topoguard::policy
