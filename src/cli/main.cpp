// topoguard: one binary, subcommands dispatched with CLI11. No logic lives here.
#include <iostream>

#include "commands.h"

int main(int argc, char** argv) {
  CLI::App app{"topoguard: keep each GPU and its RDMA NIC on the same PCIe root"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(TOPOGUARD_VERSION));
  int exit_code = topoguard::cli::kExitOk;
  topoguard::cli::add_audit_command(app, exit_code);
  topoguard::cli::add_fix_command(app, exit_code);
  topoguard::cli::add_policy_command(app, exit_code);
  topoguard::cli::add_serve_command(app, exit_code);
  topoguard::cli::add_review_command(app, exit_code);
  topoguard::cli::add_topology_command(app, exit_code);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    const int code = app.exit(error);
    return code == 0 ? topoguard::cli::kExitOk : topoguard::cli::kExitUsage;
  }
  return exit_code;
}
