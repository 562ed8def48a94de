#include "topoguard/policy/rule_info.h"

namespace topoguard::policy {

namespace {

// In RuleId order (checked at compile time below).
constexpr std::array<RuleInfo, kRuleCount> kRuleInfos{{
    {RuleId::kMissingPcieAlignment, "missing-pcie-alignment",
     "GPU and NIC requests not tied to one PCIe root",
     "A claim or template requests a GPU and an RDMA NIC without a constraint whose "
     "matchAttribute is a PCIe-root attribute, so the scheduler may place them under different "
     "roots and GPUDirect RDMA traffic crosses the CPU.",
     Action::kDeny, true, Severity::kHigh},
    {RuleId::kNumaOnlyAlignment, "numa-only-alignment",
     "GPU and NIC tied only by NUMA node",
     "The GPU and NIC requests share only a NUMA-node attribute (or CEL selectors pinning one), "
     "which still allows different PCIe roots on the same socket.",
     Action::kDeny, true, Severity::kHigh},
    {RuleId::kDevicePluginPairing, "device-plugin-pairing",
     "GPU and NIC from device plugins cannot be aligned",
     "A pod gets its GPU or NIC from an extended resource (device plugin or Multus network), "
     "which cannot express PCIe alignment; move both to one DRA claim with a constraint.",
     Action::kWarn, false, Severity::kMedium},
    {RuleId::kSplitClaims, "split-claims",
     "GPU and NIC in different ResourceClaims",
     "A pod's GPU and NIC come from different ResourceClaims; constraints never span claims, "
     "so nothing can keep them on one PCIe root.",
     Action::kDeny, false, Severity::kHigh},
    {RuleId::kMultiDeviceAlignment, "multi-device-alignment",
     "Alignment constraint over several devices of one request",
     "An alignment constraint covers a request with count > 1 or allocationMode All: every "
     "covered device must share one PCIe root, which typical servers cannot satisfy.",
     Action::kWarn, false, Severity::kMedium},
    {RuleId::kUnresolvedClaim, "unresolved-claim",
     "Referenced claim or template not in the audited input",
     "A pod references a ResourceClaim or ResourceClaimTemplate that is not in the audited "
     "input, so its GPU/NIC alignment could not be checked.",
     Action::kAudit, false, Severity::kLow},
    {RuleId::kUnsatisfiableAlignment, "unsatisfiable-alignment",
     "No node can satisfy the claim's alignment constraint",
     "Checked against the cluster's ResourceSlices as the scheduler's allocator would: no node "
     "can give every request its devices under one value of the alignment attribute, so pods "
     "using the claim (or the constraint topoguard's fix would add) would stay Pending.",
     Action::kWarn, false, Severity::kMedium},
    {RuleId::kAttributeNotPublished, "attribute-not-published",
     "A requested driver publishes no usable PCIe-root attribute",
     "A driver whose devices a constrained request can get publishes no alignment attribute on "
     "some or all nodes, or pcieRoot values not in the form pci<domain>:<bus> (the old "
     "dra-driver-sriov format), so the constraint can never be met there.",
     Action::kWarn, false, Severity::kMedium},
    {RuleId::kOverriddenAlignmentAttribute, "overridden-alignment-attribute",
     "A derived attribute replaces an alignment or NUMA attribute",
     "A request under a constraint defines a derived attribute (KEP-6080, DRADerivedAttributes) "
     "named like a PCIe-root or NUMA attribute whose expression is not exactly a read of that "
     "attribute, so the scheduler matches the expression's value instead of the device's "
     "topology and a constraint on that name no longer aligns anything.",
     Action::kDeny, false, Severity::kHigh},
}};

constexpr bool table_in_rule_order() {
  for (std::size_t i = 0; i < kRuleInfos.size(); ++i) {
    if (kRuleInfos[i].id != kAllRules[i]) {
      return false;
    }
  }
  return true;
}
static_assert(table_in_rule_order(), "kRuleInfos must list every rule in RuleId order");

constexpr std::array<std::string_view, 3> kSeverityNames{"high", "medium", "low"};

}  // namespace

std::string_view severity_name(Severity severity) {
  return kSeverityNames[static_cast<std::size_t>(severity)];
}

const RuleInfo& rule_info(RuleId rule) { return kRuleInfos[static_cast<std::size_t>(rule)]; }

std::string help_anchor(RuleId rule) { return "rule-" + std::string(rule_info(rule).name); }

}  // namespace topoguard::policy
