// `topoguard policy lint PATH...` and `topoguard policy show-default`: flags and exit codes only;
// the work is policy::lint_policy_files() and policy::builtin_policy_text().
#include <iostream>
#include <string>
#include <vector>

#include "commands.h"
#include "topoguard/policy/policy_loader.h"

namespace topoguard::cli {

namespace {

int run_lint(const std::vector<std::string>& paths) {
  const policy::PolicyLintReport report = policy::lint_policy_files(paths);
  for (const Error& error : report.errors) {
    std::cout << error.to_string() << '\n';
  }
  std::cout << report.files << (report.files == 1 ? " file, " : " files, ") << report.valid_policies
            << (report.valid_policies == 1 ? " valid policy, " : " valid policies, ")
            << report.errors.size() << (report.errors.size() == 1 ? " error" : " errors")
            << std::endl;
  if (report.has_io_error()) {
    return kExitUsage;
  }
  return report.errors.empty() ? kExitOk : kExitFindings;
}

}  // namespace

void add_policy_command(CLI::App& app, int& exit_code) {
  CLI::App* policy = app.add_subcommand("policy", "Check and show AlignmentPolicy files");
  policy->require_subcommand(1);

  CLI::App* lint = policy->add_subcommand(
      "lint", "Report every error in policy files: file:line: field: message [code]");
  auto paths = std::make_shared<std::vector<std::string>>();
  lint->add_option("paths", *paths, "Policy files or directories (*.yaml, *.yml, *.json)")
      ->required();
  lint->callback([paths, &exit_code] { exit_code = run_lint(*paths); });

  CLI::App* show = policy->add_subcommand(
      "show-default", "Print the built-in default policy (copy it to start your own)");
  show->callback([&exit_code] {
    std::cout << policy::builtin_policy_text() << std::flush;
    exit_code = kExitOk;
  });
}

}  // namespace topoguard::cli
