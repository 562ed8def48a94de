// Subcommand registration. Each subcommand lives in its own file, parses its flags with CLI11,
// wires the modules and stores its exit code; main() only dispatches.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace topoguard::cli {

// Exit codes shared by every subcommand.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFindings = 1;  // a finding reached --fail-on (audit) or lint errors
inline constexpr int kExitUsage = 2;     // usage error, unreadable or invalid input

// Each adds its subcommand to `app`; when it runs, it writes its exit code to `exit_code`.
void add_policy_command(CLI::App& app, int& exit_code);
void add_audit_command(CLI::App& app, int& exit_code);
void add_fix_command(CLI::App& app, int& exit_code);
void add_serve_command(CLI::App& app, int& exit_code);
void add_review_command(CLI::App& app, int& exit_code);
void add_topology_command(CLI::App& app, int& exit_code);

// --policies PATH, one value per flag (repeat the flag for more), so that the manifest paths
// after it stay positional arguments instead of being read as policies.
inline CLI::Option* add_policies_option(CLI::App& command, std::vector<std::string>& paths) {
  return command
      .add_option("--policies", paths,
                  "Policy file or directory; repeat the flag for more. Replaces the built-in "
                  "policy; policies combine as policies/README.md describes")
      ->allow_extra_args(false)
      ->default_str("built-in policy");
}

}  // namespace topoguard::cli
