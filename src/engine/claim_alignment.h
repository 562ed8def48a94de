// The alignment verdict of one claim spec under one policy: are its GPU and NIC requests tied by
// an alignment constraint, only by NUMA, or not at all; does an alignment constraint cover
// multi-device requests; and the JSONPatch that fixes an unaligned claim when the pairing is
// unambiguous. Used for claims and templates directly and for pods that reference them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "device_roles.h"
#include "topoguard/common/json.h"
#include "topoguard/engine/json_patch.h"
#include "topoguard/k8s/claim_view.h"
#include "topoguard/policy/policy.h"

namespace topoguard::engine {

struct ClaimFinding {
  policy::RuleId rule = policy::RuleId::kMissingPcieAlignment;
  std::string pointer;
  std::string message;
  JsonPatch fix;  // empty when not fixable
  // numa-only-alignment when the cluster state shows the alignment attribute impossible on every
  // node that could hold the claim: the rule's whenAlignmentImpossible action applies.
  bool alignment_impossible = false;
};

struct ClaimVerdict {
  Roles roles;  // the claim holds GPU and/or NIC requests
  // kMissingPcieAlignment or kNumaOnlyAlignment when GPU and NIC are not tied by an alignment
  // constraint.
  std::optional<policy::RuleId> misalignment;
  // Indexes of spec.constraints that tie devices by the alignment attribute, directly or through
  // derived attributes that read it (`matchAttribute: root`).
  std::vector<std::size_t> alignment_constraints;
  std::vector<ClaimFinding> findings;
};

[[nodiscard]] ClaimVerdict analyze_claim(const k8s::ClaimSpec& spec, const DeviceRoles& roles,
                                         const policy::Policy& policy);

}  // namespace topoguard::engine
