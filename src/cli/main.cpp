// topoguard: one binary, subcommands dispatched with CLI11. No logic lives here.
#include <iostream>
#include <string>
#include <vector>

#include "commands.h"
#include "conventions.h"
#include "topoguard/common/printable_text.h"

namespace {

std::string subcommand_names(CLI::App& app) {
  std::string names;
  for (CLI::App* subcommand : app.get_subcommands([](CLI::App*) { return true; })) {
    names += (names.empty() ? "" : ", ") + subcommand->get_name();
  }
  return names;
}

// CLI11 reports a mistyped subcommand, and a missing one, as "A subcommand is required".
// Following the leading words down the subcommand tree, this names the first word that is no
// subcommand where one is expected, or says that one is needed when the words end there, with
// the subcommands there are. False when neither happened.
bool reported_subcommand_error(CLI::App& app, int argc, char** argv) {
  CLI::App* current = &app;
  std::string path = "topoguard";
  int i = 1;
  for (; i < argc && argv[i][0] != '-'; ++i) {
    if (current->get_subcommands([](CLI::App*) { return true; }).empty()) {
      return false;
    }
    const std::string word = argv[i];
    CLI::App* next = nullptr;
    for (CLI::App* subcommand : current->get_subcommands([](CLI::App*) { return true; })) {
      next = subcommand->check_name(word) ? subcommand : next;
    }
    if (next == nullptr) {
      std::cerr << path << ": unknown subcommand \"" << topoguard::printable(word)
                << "\"; the subcommands are: "
                << subcommand_names(*current) << "\nRun with --help for more information.\n";
      return true;
    }
    current = next;
    path += " " + next->get_name();
  }
  if (i == argc && current->get_require_subcommand_min() > 0) {
    std::cerr << path << ": a subcommand is needed: " << subcommand_names(*current)
              << "\nRun with --help for more information.\n";
    return true;
  }
  return false;
}

// After CLI11 refused words it did not expect: for the first that looks like an option the
// command does not have, a hint naming the one it most likely meant. False when there is none.
bool suggested_for_unknown_option(CLI::App& app, int argc, char** argv) {
  CLI::App* command = &app;
  while (!command->get_subcommands().empty()) {
    command = command->get_subcommands().front();
  }
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word.size() < 2 || word[0] != '-') {
      continue;
    }
    const std::string name = word.substr(0, word.find('='));
    bool known = false;
    for (const CLI::App* level = command; level != nullptr; level = level->get_parent()) {
      known = known || level->get_option_no_throw(name) != nullptr;
    }
    if (!known) {
      return topoguard::cli::suggested_option(*command, name);
    }
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"topoguard: keep each GPU and its RDMA NIC on the same PCIe root"};
  app.formatter(topoguard::cli::make_help_formatter());
  app.require_subcommand(1);
  app.set_version_flag("--version", "topoguard " + std::string(TOPOGUARD_VERSION),
                       "Print \"topoguard VERSION\" and exit (`topoguard version` tells more)");
  int exit_code = topoguard::cli::kExitOk;
  topoguard::cli::add_audit_command(app, exit_code);
  topoguard::cli::add_fix_command(app, exit_code);
  topoguard::cli::add_explain_command(app, exit_code);
  topoguard::cli::add_policy_command(app, exit_code);
  topoguard::cli::add_serve_command(app, exit_code);
  topoguard::cli::add_review_command(app, exit_code);
  topoguard::cli::add_topology_command(app, exit_code);
  topoguard::cli::add_inventory_command(app, exit_code);
  topoguard::cli::add_ab_command(app, exit_code);
  topoguard::cli::add_evidence_command(app, exit_code);
  topoguard::cli::add_version_command(app, exit_code);
  topoguard::cli::add_completion_command(app, exit_code);
  topoguard::cli::add_output_settings_options(app);

  if (reported_subcommand_error(app, argc, argv)) {
    return topoguard::cli::kExitUsage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    // Words left over, or no subcommand because the option before it was not known
    // ("topoguard --verison"): an unknown option among them gets a hint.
    const bool unexpected_words = dynamic_cast<const CLI::ExtrasError*>(&error) != nullptr ||
                                  dynamic_cast<const CLI::RequiredError*>(&error) != nullptr;
    if (unexpected_words && suggested_for_unknown_option(app, argc, argv)) {
      return topoguard::cli::kExitUsage;
    }
    const int code = app.exit(error);
    return code == 0 ? topoguard::cli::kExitOk : topoguard::cli::kExitUsage;
  }
  return exit_code;
}
