// `topoguard audit`: flags -> load policies -> read manifests -> run -> write report -> exit code.
#include <iostream>
#include <optional>

#include "commands.h"
#include "topoguard/audit/audit_runner.h"
#include "topoguard/audit/cluster_state_loader.h"
#include "topoguard/audit/manifest_fixer.h"
#include "topoguard/audit/manifest_reader.h"
#include "topoguard/audit/report_writer.h"
#include "topoguard/policy/policy_loader.h"

namespace topoguard::cli {

namespace {

struct AuditOptions {
  std::vector<std::string> policies;
  std::string format = "text";
  std::string fail_on = "deny";
  bool show_exempted = false;
  std::vector<std::string> paths;
  std::vector<std::string> cluster_state;
};

int run_audit_command(const AuditOptions& options) {
  auto format = audit::parse_report_format(options.format);
  auto fail_on = audit::parse_fail_on(options.fail_on);
  for (const Error* error : {format ? nullptr : &format.error(),
                             fail_on ? nullptr : &fail_on.error()}) {
    if (error != nullptr) {
      std::cerr << "topoguard audit: " << error->message << '\n';
      return kExitUsage;
    }
  }
  auto policies = policy::load_policies(options.policies);
  if (!policies) {
    std::cerr << "topoguard audit: " << policies.error().to_string() << '\n';
    return kExitUsage;
  }
  if (options.paths.empty() && options.cluster_state.empty()) {
    std::cerr << "topoguard audit: nothing to audit: give manifest paths or --cluster-state\n";
    return kExitUsage;
  }
  // The cluster's own claims, templates and DeviceClasses are audited with the manifests; its
  // ResourceSlices (and any in the manifests) make up the cluster state.
  std::vector<std::string> paths = options.cluster_state;
  paths.insert(paths.end(), options.paths.begin(), options.paths.end());
  const audit::ManifestSet manifests = audit::read_manifests(paths, std::cin);
  std::optional<audit::LoadedClusterState> cluster;
  if (!options.cluster_state.empty()) {
    cluster = audit::load_cluster_state(manifests);
  }
  audit::AuditRun run =
      audit::run_audit(manifests, *policies, cluster ? &cluster->state : nullptr);
  if (cluster) {
    // The set's own read errors are already in the report; add the unreadable slices.
    run.report.errors.insert(
        run.report.errors.end(),
        cluster->errors.begin() + static_cast<std::ptrdiff_t>(manifests.errors.size()),
        cluster->errors.end());
  }
  if (*format == audit::ReportFormat::kSarif) {
    audit::attach_fix_edits(manifests, run);  // SARIF results carry fixes as text edits
  }
  audit::make_report_writer(*format, audit::ReportOptions{options.show_exempted})
      ->write(run.report, std::cout, std::cerr);
  return audit::exit_code(run.report, *fail_on);
}

}  // namespace

void add_audit_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<AuditOptions>();
  CLI::App* command = app.add_subcommand(
      "audit", "Report GPU/NIC PCIe-alignment findings for manifests (files, dirs, - for stdin)");
  add_policies_option(*command, options->policies);
  command->add_option("--format", options->format,
                      "Output format: text, json, sarif (code scanning), openreports or "
                      "policyreport (report CRDs as a List), junit (CI test reports)")
      ->check(CLI::IsMember(
          std::vector<std::string>(audit::kReportFormatNames.begin(), audit::kReportFormatNames.end())))
      ->capture_default_str();
  command->add_option("--fail-on", options->fail_on,
                      "Exit 1 when a finding reaches this action: deny, warn, audit or never")
      ->check(CLI::IsMember({"deny", "warn", "audit", "never"}))
      ->capture_default_str();
  command->add_flag("--show-exempted", options->show_exempted,
                    "Text: also list the findings that policy exceptions waive (JSON always "
                    "lists them, marked \"exempted\"; default: off)");
  command->add_option("--cluster-state", options->cluster_state,
                      "kubectl get resourceslices,deviceclasses,resourceclaimtemplates,"
                      "resourceclaims,networkattachmentdefinitions -A -o yaml|json output (files, "
                      "dirs, - for stdin): audited too, and claims are checked against its devices "
                      "(default: none, no feasibility check)")
      ->expected(1, -1);
  command->add_option("paths", options->paths,
                      "Manifest files, directories, or - for stdin (optional with --cluster-state)");
  command->callback([options, &exit_code] { exit_code = run_audit_command(*options); });
}

}  // namespace topoguard::cli
