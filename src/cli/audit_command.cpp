// `topoguard audit`: flags -> load policies -> read manifests (and the cluster's objects with
// --cluster) -> run -> write report -> exit code.
#include <unistd.h>

#include <iostream>

#include "cluster_reader.h"
#include "commands.h"
#include "input_options.h"
#include "conventions.h"
#include "namespace_labels_options.h"
#include "topoguard/audit/audit_runner.h"
#include "topoguard/audit/manifest_reader.h"
#include "topoguard/audit/report_writer.h"
#include "topoguard/common/printable_text.h"
#include "topoguard/common/progress_line.h"
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
  ManifestInputOptions input;
  std::vector<std::string> cluster_state;
  bool cluster = false;
  kube::LoadOptions kube;
  std::string namespace_;
  // The options that only choose what --cluster reads, as given on the command line.
  std::vector<const CLI::Option*> cluster_only;
};

// -n, --context, --kubeconfig and --exec-timeout without --cluster would go unused: a user who
// gave them expects a cluster to be read. False (said on stderr) when one was given.
bool cluster_options_fit(const AuditOptions& options) {
  std::vector<std::string> given;
  for (const CLI::Option* option : options.cluster_only) {
    if (option->count() > 0) {
      given.push_back(option->get_name());
    }
  }
  if (options.cluster || given.empty()) {
    return true;
  }
  const bool one = given.size() == 1;
  std::cerr << "topoguard audit: ";
  for (const std::string& name : given) {
    std::cerr << (&name == &given.front() ? "" : ", ") << name;
  }
  std::cerr << (one ? " needs" : " need") << " --cluster: " << (one ? "it chooses" : "they choose")
            << " what is read from a live cluster; add --cluster, or leave "
            << (one ? "it" : "them") << " out to audit only the files given\n";
  return false;
}

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
  // One bounded burst (discovery, then a list per kind and its pages): kubectl's discovery
  // limits, 50 QPS and a burst of 300, instead of client-go's 5 QPS, which spent seconds on it.
  kube::ApiClientOptions client_options;
  client_options.user_agent = std::string("topoguard/") + TOPOGUARD_VERSION;
  client_options.rate_limit = {.qps = 50.0, .burst = 300};
  auto client = kube::ApiClient::create(*config, client_options);
  if (!client) {
    std::cerr << "topoguard audit: --cluster: " << client.error().to_string() << '\n';
    return false;
  }
  auto read = read_cluster(**client, {.namespace_ = options.namespace_});
  if (!read) {
    std::cerr << "topoguard audit: --cluster (" << printable(config->source) << ", context "
              << printable(config->context) << "): " << printable(read.error().message) << '\n';
    return false;
  }
  for (const kube::DiscoveredResource& skipped : read->not_served) {
    note("audit", "skipped " + printable(skipped.wanted.to_string()) +
                      ": the cluster does not serve it (" + printable(skipped.not_served) + ")");
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
  if (!input_given("audit",
                   options.cluster || options.input.given() || !options.cluster_state.empty(),
                   ", --cluster or --cluster-state")) {
    return kExitUsage;
  }
  // The cluster's own claims, templates and DeviceClasses are audited with the manifests; its
  // ResourceSlices (and any in the manifests) make up the cluster state.
  std::vector<audit::ManifestPath> paths;
  for (const std::string& path : options.cluster_state) {
    paths.push_back(audit::ManifestPath{path, true});
  }
  const std::vector<audit::ManifestPath> manifest_paths = options.input.manifest_paths();
  paths.insert(paths.end(), manifest_paths.begin(), manifest_paths.end());
  if (!cluster_options_fit(options) || !stdin_read_once("audit", options.policies, paths)) {
    return kExitUsage;
  }
  std::vector<Json> namespaces;
  if (!load_namespace_labels("audit", options.namespace_labels, namespaces)) {
    return kExitUsage;
  }
  const std::optional<policy::PolicySet> policies =
      load_command_policies("audit", options.policies);
  if (!policies) {
    return kExitUsage;
  }
  // The first second counts from here: reading a large input is part of the wait.
  ProgressLine progress(std::cerr, progress_enabled(), "topoguard audit: evaluated",
                        "resources");
  audit::ManifestSet manifests =
      audit::read_manifests(paths, std::cin, audit::ReadOptions{{}, options.input.exclude});
  if (options.cluster && !read_cluster_into(options, manifests)) {
    return kExitUsage;
  }
  // SARIF fixes edit files; the cluster's objects have none, so --cluster goes without.
  const audit::AuditRun run = audit::run_audit(
      manifests, *policies,
      audit::RunOptions{.cluster_state = options.cluster || !options.cluster_state.empty(),
                        .fix_edits = *format == audit::ReportFormat::kSarif && !options.cluster,
                        .progress = [&progress](std::size_t done, std::size_t total) {
                          progress.update(done, total);
                        },
                        .namespaces = &namespaces});
  progress.finish();
  audit::make_report_writer(*format,
                            audit::ReportOptions{.show_exempted = options.show_exempted,
                                                 .help_uri_base = options.help_uri_base,
                                                 .color = color_enabled(STDOUT_FILENO)})
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
  add_output_option(
      *command, options->format,
      std::vector<std::string>(audit::kReportFormatNames.begin(), audit::kReportFormatNames.end()),
      "Output format: text (coloured on a terminal), json, sarif (code scanning), openreports or "
      "policyreport (report CRDs as a List), junit (CI test reports); to a file: -o sarif > "
      "FILE");
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
  add_kube_options(*command, options->kube, "With --cluster (refused without it): ");
  const CLI::Option* namespace_option =
      command
          ->add_option("--namespace,-n", options->namespace_,
                       "With --cluster (refused without it): namespaced resources of this "
                       "namespace only; cluster-scoped ones are read whole (default: every "
                       "namespace)")
          ->type_name("NAME");
  options->cluster_only = {command->get_option("--kubeconfig"), command->get_option("--context"),
                           command->get_option("--exec-timeout"), namespace_option};
  add_manifest_input_options(*command, options->input,
                             "Manifest files, directories (read whole), or - for stdin "
                             "(optional with --cluster or --cluster-state)");
  command->callback([options, &exit_code] { exit_code = run_audit_command(*options); });
}

}  // namespace topoguard::cli
