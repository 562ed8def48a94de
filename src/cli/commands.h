// Subcommand registration. Each subcommand lives in its own file, parses its flags with CLI11,
// wires the modules and stores its exit code; main() only dispatches.
#pragma once

#include <chrono>
#include <iostream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "topoguard/common/duration.h"
#include "topoguard/kube/client_config.h"

namespace topoguard::cli {

// Exit codes shared by every subcommand.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFindings = 1;  // a finding reached --fail-on (audit) or lint errors
inline constexpr int kExitUsage = 2;     // usage error, unreadable or invalid input

// --help shows what to write for each option (FILE, N, {text,json}, ...) rather than CLI11's
// C++ types and checks. Subcommands added after it is set take it from the app.
[[nodiscard]] std::shared_ptr<CLI::Formatter> make_help_formatter();

// Each adds its subcommand to `app`; when it runs, it writes its exit code to `exit_code`.
void add_policy_command(CLI::App& app, int& exit_code);
// `policy compile`, a subcommand of `policy`.
void add_policy_compile_command(CLI::App& policy, int& exit_code);
void add_audit_command(CLI::App& app, int& exit_code);
void add_explain_command(CLI::App& app, int& exit_code);
void add_fix_command(CLI::App& app, int& exit_code);
void add_serve_command(CLI::App& app, int& exit_code);
void add_review_command(CLI::App& app, int& exit_code);
void add_topology_command(CLI::App& app, int& exit_code);
// `inventory`: the node's GPUs and RDMA NICs from sysfs (src/hardware).
void add_inventory_command(CLI::App& app, int& exit_code);
// `ab`: claim templates and Jobs for an aligned and two misaligned GPU-NIC pairs on one node.
void add_ab_command(CLI::App& app, int& exit_code);
// `evidence`: a live claim's allocation with its devices' attributes and a verdict.
void add_evidence_command(CLI::App& app, int& exit_code);
// `version`: build information. `completion`: shell completion scripts from the command tree
// `app` holds when it runs (so it is added last).
void add_version_command(CLI::App& app, int& exit_code);
void add_completion_command(CLI::App& app, int& exit_code);

// --policies PATH, one value per flag (repeat the flag for more), so that the manifest paths
// after it stay positional arguments instead of being read as policies.
inline CLI::Option* add_policies_option(
    CLI::App& command, std::vector<std::string>& paths,
    const std::string& use = "policies combine as policies/README.md describes") {
  return command
      .add_option("--policies", paths,
                  "Policy file or directory, or - for stdin; repeat the flag for more. Documents "
                  "that are not policies (tests, manifests) are skipped with a note. Replaces "
                  "the built-in policy; " + use + " (default: the built-in policy)")
      ->type_name("PATH")
      ->allow_extra_args(false);
}

// --fail-on for audit and fix, so both read it alike (audit::parse_fail_on, default deny).
inline CLI::Option* add_fail_on_option(CLI::App& command, std::string& fail_on,
                                       const std::string& which_findings) {
  return command
      .add_option("--fail-on", fail_on,
                  "Exit 1 when " + which_findings + " reaches this action: deny, warn, audit or "
                  "never")
      ->check(CLI::IsMember({"deny", "warn", "audit", "never"}))
      ->capture_default_str();
}

// --kubeconfig and --context, for every subcommand that reads a cluster, into the options
// kube::load_client_config takes; `use` opens their help ("With --cluster: ").
inline void add_kube_options(CLI::App& command, kube::LoadOptions& options,
                             const std::string& use) {
  command
      .add_option("--kubeconfig", options.kubeconfig,
                  use + "the kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)")
      ->type_name("FILE");
  command
      .add_option("--context", options.context,
                  use + "the kubeconfig context (default: current-context)")
      ->type_name("NAME");
  command
      .add_option_function<std::string>(
          "--exec-timeout",
          [&options](const std::string& text) {
            options.exec_timeout =
                std::chrono::duration_cast<std::chrono::milliseconds>(*parse_duration(text));
          },
          use + "how long an exec credential plugin may run before it is killed (default: " +
              format_duration(kube::kDefaultExecTimeout) + "; a kubeconfig cannot change it)")
      ->check([](const std::string& text) {
        const Result<std::chrono::nanoseconds> parsed = parse_duration(text);
        if (!parsed) {
          return parsed.error().message;
        }
        return *parsed < std::chrono::milliseconds(1) ? std::string("must be at least 1ms")
                                                      : std::string();
      })
      ->type_name("DURATION");
}

// audit and fix say alike that they were given nothing to read; `alternative` names another
// input the command takes. False (after saying so on stderr) when nothing was given.
inline bool input_given(std::string_view command, bool given, std::string_view alternative = "") {
  if (!given) {
    std::cerr << "topoguard " << command
              << ": no input: give manifest files, directories or - for stdin" << alternative
              << '\n';
  }
  return given;
}

}  // namespace topoguard::cli
