// Runs the engine over a set of manifests, as the webhook would over each object, but with an
// inventory of the whole input so pods see the templates, claims, DeviceClasses and
// NetworkAttachmentDefinitions they reference. Pure: reading the input happens before.
#pragma once

#include <functional>
#include <vector>

#include "topoguard/audit/audit_report.h"
#include "topoguard/audit/manifest_reader.h"
#include "topoguard/cluster/shape_index.h"
#include "topoguard/engine/evaluate.h"
#include "topoguard/policy/policy_set.h"

namespace topoguard::audit {

struct ManifestEvaluation {
  const Manifest* manifest = nullptr;
  engine::Evaluation evaluation;
};

// Every evaluated manifest with its engine result (findings and enabled-fix patch), in input
// order, plus the counts of resources and skipped objects. Used by `audit` and `fix`.
// evaluations[i] is the manifest of report.resources[i].
struct AuditRun {
  std::vector<ManifestEvaluation> evaluations;
  AuditReport report;
};

struct RunOptions {
  // The manifests' ResourceSlices, DeviceClasses, DeviceTaintRules and claims make up a cluster
  // state: claims are also checked against its devices, its slices count as resources rather
  // than skipped objects, and objects it cannot read join the report's errors.
  bool cluster_state = false;
  // A cluster state already read (a cache snapshot's) and its node shapes, used instead of
  // reading one from the manifests: claims are checked against it. Both set, or neither.
  const cluster::ClusterState* known_state = nullptr;
  const cluster::NodeShapes* known_shapes = nullptr;
  // Each finding with an enabled fix carries its document's fix as a text edit (for SARIF).
  bool fix_edits = false;
  // Told after each manifest is evaluated: how many of how many (a progress line).
  std::function<void(std::size_t done, std::size_t total)> progress = nullptr;
  // Namespace objects known besides the input (--namespace-labels; not owned, must outlive the
  // run): namespaceSelectors read their labels, unless the input holds the same Namespace (what
  // is applied wins).
  const std::vector<Json>* namespaces = nullptr;
};

// The one entry of an audit: what `audit`, `fix` and the golden tests run.
[[nodiscard]] AuditRun run_audit(const ManifestSet& manifests, const policy::PolicySet& policies,
                                 const RunOptions& options = {});

}  // namespace topoguard::audit
