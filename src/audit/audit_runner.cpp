#include "topoguard/audit/audit_runner.h"

#include <algorithm>
#include <optional>
#include <tuple>

#include "topoguard/audit/cluster_state_loader.h"
#include "topoguard/audit/manifest_fixer.h"
#include "topoguard/cluster/shape_index.h"
#include "topoguard/k8s/kinds.h"
#include "topoguard/k8s/object.h"

namespace topoguard::audit {

AuditRun run_audit(const ManifestSet& manifests, const policy::PolicySet& policies,
                   const RunOptions& options) {
  AuditRun run;
  AuditReport& report = run.report;
  report.errors = manifests.errors;
  report.skipped_inputs = manifests.skipped;
  std::optional<LoadedClusterState> loaded;
  if (options.cluster_state) {
    loaded = load_cluster_state(manifests);
    report.errors.insert(report.errors.end(), loaded->errors.begin(), loaded->errors.end());
  }
  const cluster::ClusterState* cluster_state = loaded ? &loaded->state : options.known_state;
  // Claims are checked once per group of nodes they cannot tell apart, not once per node.
  std::optional<cluster::NodeShapes> shapes;
  if (loaded) {
    shapes = cluster::NodeShapes::of(*cluster_state);
  }

  engine::Inventory inventory(engine::Inventory::Claims::kKnown);
  inventory.set_cluster_state(cluster_state, shapes ? &*shapes : options.known_shapes);
  if (options.namespaces != nullptr) {
    for (const Json& namespace_object : *options.namespaces) {
      inventory.add(namespace_object);
    }
  }
  std::vector<bool> indexed(manifests.manifests.size(), false);
  for (std::size_t i = 0; i < manifests.manifests.size(); ++i) {
    const Json& object = *manifests.manifests[i].object;
    indexed[i] = inventory.add(object) ||
                 (cluster_state != nullptr &&
                  k8s::resource_kind(object) == k8s::ResourceKind::kResourceSlice);
  }

  // One for the run: the documents of a bundle name the same DeviceClasses and selectors.
  engine::Evaluator evaluator(policies, inventory);
  const auto report_errors = [&](const Manifest& manifest, std::vector<Error> errors) {
    for (Error& error : errors) {
      error.location.file = manifests.path_of(manifest);
      error.location.line = manifests.line_of(manifest, error.location.field);
      report.errors.push_back(std::move(error));
    }
  };

  for (std::size_t i = 0; i < manifests.manifests.size(); ++i) {
    if (options.progress) {
      options.progress(i, manifests.manifests.size());
    }
    const Manifest& manifest = manifests.manifests[i];
    const bool evaluated = engine::is_evaluated_kind(*manifest.object);
    if (!evaluated) {
      ++(indexed[i] ? report.summary.resources : report.summary.skipped);
      report_errors(manifest, engine::device_class_errors(*manifest.object, !loaded));
      continue;
    }
    ++report.summary.resources;
    engine::Evaluation evaluation = evaluator.evaluate(*manifest.object);
    const std::string& file = manifests.path_of(manifest);
    const std::size_t resource = report.resources.size();
    report.resources.push_back(AuditedResource{k8s::object_ref(*manifest.object), file,
                                               manifests.line_of(manifest, ""),
                                               evaluation.checked, evaluation.unknown});
    report_errors(manifest, std::move(evaluation.errors));
    for (const engine::Finding& finding : evaluation.findings) {
      switch (finding.action) {
        case policy::Action::kDeny:
          ++report.summary.deny;
          break;
        case policy::Action::kWarn:
          ++report.summary.warn;
          break;
        case policy::Action::kAudit:
          ++report.summary.audit;
          break;
        case policy::Action::kOff:
          break;
      }
      report.findings.push_back(
          ReportedFinding{finding, file, manifests.line_of(manifest, finding.pointer), resource,
                          nullptr});
    }
    for (const engine::Finding& finding : evaluation.exempted) {
      ++report.summary.exempted;
      report.exempted.push_back(
          ReportedFinding{finding, file, manifests.line_of(manifest, finding.pointer), resource,
                          nullptr});
    }
    run.evaluations.push_back(ManifestEvaluation{&manifest, std::move(evaluation)});
  }

  for (std::vector<ReportedFinding>* list : {&report.findings, &report.exempted}) {
    std::stable_sort(list->begin(), list->end(),
                     [](const ReportedFinding& a, const ReportedFinding& b) {
                       return std::forward_as_tuple(a.file, a.line, a.finding.rule,
                                                    a.finding.policy) <
                              std::forward_as_tuple(b.file, b.line, b.finding.rule,
                                                    b.finding.policy);
                     });
  }
  if (options.fix_edits) {
    attach_fix_edits(manifests, run);
  }
  return run;
}

}  // namespace topoguard::audit
