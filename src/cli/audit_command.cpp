// `topoguard audit`: flags -> load policies -> read manifests (and the cluster's objects with
// --cluster) -> run -> write report -> exit code.
#include <iostream>

#include "commands.h"
#include "namespace_labels_options.h"
#include "topoguard/audit/audit_runner.h"
#include "topoguard/audit/cluster_reader.h"
#include "topoguard/audit/manifest_reader.h"
#include "topoguard/audit/report_writer.h"
#include "topoguard/common/printable_text.h"
#include "topoguard/policy/policy_loader.h"

namespace topoguard::cli {

namespace {

struct AuditOptions {
  std::vector<std::string> policies;
  std::string format = "text";
  std::string fail_on = "deny";
  bool fail_on_unknown = false;
  std::string namespace_labels;
  bool show_exempted = false;
  std::string help_uri_base;
  std::vector<std::string> paths;
  std::vector<std::string> cluster_state;
  bool cluster = false;
  kube::LoadOptions kube;
  std::string namespace_;
};

// Appends `more`'s files, manifests and errors to `set` (manifests keep pointing into the moved
// files' documents).
void append_manifests(audit::ManifestSet& set, audit::ManifestSet&& more) {
  const std::size_t offset = set.files.size();
  for (audit::SourceFile& file : more.files) {
    set.files.push_back(std::move(file));
  }
  for (audit::Manifest& manifest : more.manifests) {
    manifest.file += offset;
    set.manifests.push_back(manifest);
  }
  set.errors.insert(set.errors.end(), more.errors.begin(), more.errors.end());
}

// --cluster: the cluster's objects, what it does not serve said on stderr. False (said on stderr)
// when the cluster cannot be read.
bool read_cluster_into(const AuditOptions& options, audit::ManifestSet& manifests) {
  auto config = kube::load_client_config(options.kube);
  if (!config) {
    std::cerr << "topoguard audit: --cluster: " << config.error().to_string() << '\n';
    return false;
  }
  auto client = kube::ApiClient::create(*config);
  if (!client) {
    std::cerr << "topoguard audit: --cluster: " << client.error().to_string() << '\n';
    return false;
  }
  auto read = audit::read_cluster(**client, {.namespace_ = options.namespace_});
  if (!read) {
    std::cerr << "topoguard audit: --cluster (" << printable(config->source) << ", context "
              << printable(config->context) << "): " << printable(read.error().message) << '\n';
    return false;
  }
  for (const kube::DiscoveredResource& skipped : read->not_served) {
    std::cerr << "topoguard audit: skipped " << printable(skipped.wanted.to_string())
              << ": the cluster does not serve it (" << printable(skipped.not_served) << ")\n";
  }
  append_manifests(manifests, std::move(read->manifests));
  return true;
}

int run_audit_command(const AuditOptions& options) {
  auto format = audit::parse_report_format(options.format);
  auto fail_on = audit::parse_fail_on(options.fail_on);
  for (const Error* error : {format ? nullptr : &format.error(),
                             fail_on ? nullptr : &fail_on.error()}) {
    if (error != nullptr) {
      std::cerr << "topoguard audit: " << printable(error->message) << '\n';
      return kExitUsage;
    }
  }
  auto policies = policy::load_policies(options.policies);
  if (!policies) {
    std::cerr << "topoguard audit: " << policies.error().to_string() << '\n';
    return kExitUsage;
  }
  if (!input_given("audit",
                   options.cluster || !options.paths.empty() || !options.cluster_state.empty(),
                   ", --cluster or --cluster-state")) {
    return kExitUsage;
  }
  std::vector<Json> namespaces;
  if (!load_namespace_labels("audit", options.namespace_labels, namespaces)) {
    return kExitUsage;
  }
  // The cluster's own claims, templates and DeviceClasses are audited with the manifests; its
  // ResourceSlices (and any in the manifests) make up the cluster state.
  std::vector<std::string> paths = options.cluster_state;
  paths.insert(paths.end(), options.paths.begin(), options.paths.end());
  audit::ManifestSet manifests = audit::read_manifests(paths, std::cin);
  if (options.cluster && !read_cluster_into(options, manifests)) {
    return kExitUsage;
  }
  // SARIF fixes edit files; the cluster's objects have none, so --cluster goes without.
  const audit::AuditRun run = audit::run_audit(
      manifests, *policies,
      audit::RunOptions{.cluster_state = options.cluster || !options.cluster_state.empty(),
                        .fix_edits = *format == audit::ReportFormat::kSarif && !options.cluster,
                        .namespaces = &namespaces});
  audit::make_report_writer(*format,
                            audit::ReportOptions{options.show_exempted, options.help_uri_base})
      ->write(run.report, std::cout, std::cerr);
  say_unknown_labels("audit", run.report, namespace_labels_how(kOrInTheInput),
                     options.fail_on_unknown && run.report.errors.empty());
  return audit::exit_code(run.report, *fail_on, options.fail_on_unknown);
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
  add_fail_on_option(*command, options->fail_on, "a finding");
  add_fail_on_unknown_option(*command, options->fail_on_unknown);
  add_namespace_labels_option(*command, options->namespace_labels);
  command->add_flag("--show-exempted", options->show_exempted,
                    "Text: also list the findings that policy exceptions waive (JSON always "
                    "lists them, marked \"exempted\"; default: off)");
  command
      ->add_option("--help-uri-base", options->help_uri_base,
                   "Where the rules are documented (e.g. your copy of the README's URL): reports "
                   "link each rule to URL#rule-<id>, SARIF as helpUri (default: none; reports "
                   "point to `topoguard explain RULE`)")
      ->type_name("URL")
      ->check([](const std::string& url) {
        return url.find("://") == std::string::npos
                   ? "must be an absolute URL such as https://git.example.com/README.md"
                   : std::string();
      });
  command->add_option("--cluster-state", options->cluster_state,
                      "kubectl get resourceslices,deviceclasses,resourceclaimtemplates,"
                      "resourceclaims,networkattachmentdefinitions -A -o yaml|json output (files, "
                      "dirs, - for stdin): audited too, and claims are checked against its devices "
                      "(default: none, no feasibility check)")
      ->expected(1, -1)
      ->type_name("FILE");
  command->add_flag("--cluster", options->cluster,
                    "Also audit what a live cluster holds: its DeviceClasses, ResourceSlices, "
                    "DeviceTaintRules, claims, templates, NetworkAttachmentDefinitions, Namespaces "
                    "and workloads, read through its API (kubeconfig or in-cluster), as the "
                    "cluster state (default: off)");
  add_kube_options(*command, options->kube, "With --cluster: ");
  command
      ->add_option("--namespace,-n", options->namespace_,
                   "With --cluster: namespaced resources of this namespace only; cluster-scoped "
                   "ones are read whole (default: every namespace)")
      ->type_name("NAME");
  command
      ->add_option("paths", options->paths,
                   "Manifest files, directories, or - for stdin (optional with --cluster or "
                   "--cluster-state)")
      ->type_name("PATH");
  command->callback([options, &exit_code] { exit_code = run_audit_command(*options); });
}

}  // namespace topoguard::cli
