// `topoguard policy lint PATH...`, `topoguard policy show [--effective] PATH...` and `topoguard
// policy show-default`: flags and exit codes only; the work is policy::lint_policy_files(),
// policy::policy_to_json() and policy::builtin_policy_text().
#include <iostream>
#include <string>
#include <vector>

#include "commands.h"
#include "topoguard/common/yaml_document.h"
#include "topoguard/policy/policy_json.h"
#include "topoguard/policy/policy_loader.h"

namespace topoguard::cli {

namespace {

std::string counted(std::size_t count, const char* singular, const char* plural) {
  return std::to_string(count) + " " + (count == 1 ? singular : plural);
}

int run_lint(const std::vector<std::string>& paths) {
  const policy::PolicyLintReport report = policy::lint_policy_files(paths);
  for (const Error& error : report.errors) {
    std::cout << error.to_string() << '\n';
  }
  for (const Error& warning : report.warnings) {
    const SourceLocation& where = warning.location;
    std::cout << where.file << ':' << where.line << ": "
              << (where.field.empty() ? "" : where.field + ": ") << "warning: " << warning.message
              << '\n';
  }
  std::cout << counted(report.files, "file", "files") << ", "
            << counted(report.valid_policies, "valid policy", "valid policies") << ", "
            << counted(report.errors.size(), "error", "errors") << ", "
            << counted(report.warnings.size(), "warning", "warnings") << std::endl;
  if (report.has_io_error()) {
    return kExitUsage;
  }
  return report.errors.empty() ? kExitOk : kExitFindings;
}

// Drops what `policy` inherits, leaving what its own document sets (`match` and `exceptions`
// always, as they are never inherited).
void drop_inherited(const policy::Policy& policy, Json& document) {
  Json& spec = document["spec"];
  for (const std::string& path : policy.inherited) {
    const std::size_t dot = path.find('.');
    Json& section = spec[path.substr(0, dot)];
    section.erase(path.substr(dot + 1));
    if (section.empty()) {
      spec.erase(path.substr(0, dot));
    }
  }
}

int run_show(const std::vector<std::string>& paths, bool effective) {
  auto policies = policy::load_policy_files(paths);
  if (!policies) {
    std::cerr << "topoguard policy show: " << policies.error().to_string() << std::endl;
    return kExitUsage;
  }
  bool first = true;
  for (const policy::Policy& policy : policies->policies()) {
    Json document = policy::policy_to_json(policy);
    std::cout << (first ? "" : "---\n") << "# policy \"" << policy.name << "\" from "
              << policy.origin.file << ':' << policy.origin.line << '\n';
    if (effective) {
      std::cout << "# effective: with what it inherits from the built-in policy:";
      for (const std::string& path : policy.inherited) {
        std::cout << ' ' << path;
      }
      std::cout << (policy.inherited.empty() ? " nothing\n" : "\n");
    } else {
      drop_inherited(policy, document);
    }
    std::cout << to_yaml(document);
    first = false;
  }
  std::cout << std::flush;
  return kExitOk;
}

}  // namespace

void add_policy_command(CLI::App& app, int& exit_code) {
  CLI::App* policy = app.add_subcommand("policy", "Check and show AlignmentPolicy files");
  policy->require_subcommand(1);

  CLI::App* lint = policy->add_subcommand(
      "lint",
      "Report every error in policy files (file:line: field: message [code]), and warnings for "
      "policies that can match nothing or change nothing relative to the built-in policy");
  auto paths = std::make_shared<std::vector<std::string>>();
  lint->add_option("paths", *paths, "Policy files or directories (*.yaml, *.yml, *.json)")
      ->required()
      ->type_name("PATH");
  lint->callback([paths, &exit_code] { exit_code = run_lint(*paths); });

  CLI::App* show = policy->add_subcommand(
      "show", "Print policies as topoguard reads them (sorted by name), one YAML document each");
  auto show_paths = std::make_shared<std::vector<std::string>>();
  auto effective = std::make_shared<bool>(false);
  show->add_flag("--effective", *effective,
                 "Also print what each policy inherits from the built-in policy (devices, "
                 "alignment, rules it leaves out; default: off)");
  show->add_option("paths", *show_paths, "Policy files or directories (*.yaml, *.yml, *.json)")
      ->required()
      ->type_name("PATH");
  show->callback([show_paths, effective, &exit_code] {
    exit_code = run_show(*show_paths, *effective);
  });

  CLI::App* show_default = policy->add_subcommand(
      "show-default", "Print the built-in default policy (copy it to start your own)");
  show_default->callback([&exit_code] {
    std::cout << policy::builtin_policy_text() << std::flush;
    exit_code = kExitOk;
  });
}

}  // namespace topoguard::cli
