// Runs the audit over inline manifests with the built-in policy (helpers for the audit tests).
#pragma once

#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "topoguard/audit/audit_runner.h"
#include "topoguard/audit/manifest_reader.h"
#include "topoguard/audit/report_writer.h"
#include "topoguard/policy/policy_loader.h"

namespace topoguard::audit::testing {

inline const policy::PolicySet& builtin_policies() {
  static const policy::PolicySet set = [] {
    auto loaded = policy::load_builtin_policies();
    EXPECT_TRUE(loaded) << loaded.error().to_string();
    return loaded ? *loaded : policy::PolicySet();
  }();
  return set;
}

// Unaligned v1 template in namespace ml: `missing-pcie-alignment` at line 9 (devices) with a
// fix that adds the constraints array.
inline const std::string kUnalignedTemplate = R"(apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: gpu-nic
  namespace: ml
spec:
  spec:
    # the devices
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu.nvidia.com}
      - name: nic
        exactly: {deviceClassName: dranet}
)";

// A Pod pairing device-plugin resources: `device-plugin-pairing` (warn) at line 10.
inline const std::string kPluginPod = R"(apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  containers:
  - name: main
    resources:
      limits:
        nvidia.com/gpu: "1"
        rdma/ib: "1"
)";

inline const std::string kConfigMap =
    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {a: b}\n";

// Template (findings at line 9), pod (line 26), ConfigMap (skipped).
inline AuditReport sample_report() {
  const ManifestSet set = parse_manifests(
      {{"in.yaml", kUnalignedTemplate + "---\n" + kPluginPod + "---\n" + kConfigMap}});
  EXPECT_TRUE(set.errors.empty());
  return run_audit(set, builtin_policies()).report;
}

// sample_report() with its deny finding (the template's missing-pcie-alignment) waived by an
// exception, as run_audit reports it: in `exempted`, counted there, no enabled fix.
inline AuditReport exempted_sample_report() {
  AuditReport report = sample_report();
  ReportedFinding waived = report.findings[0];
  report.findings.erase(report.findings.begin());
  waived.finding.exception = "team-a-legacy";
  waived.finding.exception_reason = "validated by hand (TICKET-42)";
  waived.finding.fix_enabled = false;
  report.exempted.push_back(waived);
  report.summary.deny = 0;
  report.summary.exempted = 1;
  return report;
}

// What the writer of `format` prints to its output stream.
inline std::string render(ReportFormat format, const AuditReport& report,
                          ReportOptions options = {}) {
  std::ostringstream out;
  std::ostringstream errors;
  make_report_writer(format, std::move(options))->write(report, out, errors);
  return out.str();
}

}  // namespace topoguard::audit::testing
