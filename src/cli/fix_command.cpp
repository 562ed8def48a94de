// `topoguard fix`: flags -> load policies -> read manifests -> apply enabled fixes -> write ->
// say what it could not fix -> exit code by --fail-on over those findings, as audit's.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "commands.h"
#include "input_options.h"
#include "conventions.h"
#include "namespace_labels_options.h"
#include "topoguard/audit/audit_runner.h"
#include "topoguard/audit/manifest_fixer.h"
#include "topoguard/audit/manifest_reader.h"
#include "topoguard/audit/report_writer.h"
#include "topoguard/common/printable_text.h"
#include "topoguard/common/text_file.h"
#include "topoguard/policy/policy_loader.h"

namespace topoguard::cli {

namespace {

namespace fs = std::filesystem;

struct FixOptions {
  std::vector<std::string> policies;
  std::string output_dir;
  bool in_place = false;
  bool diff = false;
  std::string fail_on = "deny";
  ManifestInputOptions input;
  bool fail_on_unknown = false;
  std::string namespace_labels;
};

// Where a file's output goes under --output-dir DIR: its path relative to the current directory when it
// lies below it, else its file name; stdin becomes "stdin.yaml".
fs::path output_path(const std::string& output_dir, const std::string& input) {
  if (input == "-") {
    return fs::path(output_dir) / "stdin.yaml";
  }
  const fs::path relative = fs::path(input).lexically_normal();
  const bool escapes = relative.is_absolute() || relative.begin()->string() == "..";
  return fs::path(output_dir) / (escapes ? relative.filename() : relative);
}

// What the fixes leave: the findings of the fixed output, audited as the input was (so a
// workload whose claim template a fix aligned no longer counts).
audit::AuditReport audit_fixed(const audit::FixOutcome& outcome,
                               const policy::PolicySet& policies,
                               const audit::RunOptions& options) {
  std::vector<std::pair<std::string, std::string>> texts;
  texts.reserve(outcome.files.size());
  for (const audit::FixedFile& file : outcome.files) {
    texts.emplace_back(file.path, file.text);
  }
  return audit::run_audit(audit::parse_manifests(std::move(texts)), policies, options).report;
}

// "left 4 findings unfixed: split-claims 1 (deny), device-plugin-pairing 3 (warn)": per rule,
// with the most severe action among its findings.
std::string unfixed_text(const audit::AuditReport& left) {
  std::map<policy::RuleId, std::pair<std::size_t, policy::Action>> per_rule;
  for (const audit::ReportedFinding& reported : left.findings) {
    auto [entry, inserted] =
        per_rule.try_emplace(reported.finding.rule, 0, reported.finding.action);
    ++entry->second.first;
    entry->second.second = std::min(entry->second.second, reported.finding.action);
  }
  const std::size_t total = left.findings.size();
  std::string text = "left " + std::to_string(total) + (total == 1 ? " finding" : " findings") +
                     " unfixed";
  const char* separator = ": ";
  for (const auto& [rule, count_and_action] : per_rule) {
    text += separator + std::string(policy::rule_name(rule)) + " " +
            std::to_string(count_and_action.first) + " (" +
            std::string(policy::action_name(count_and_action.second)) + ")";
    separator = ", ";
  }
  return text;
}

int run_fix_command(const FixOptions& options) {
  if (options.in_place && !options.output_dir.empty()) {
    std::cerr << "topoguard fix: use either --output-dir DIR or --in-place, not both\n";
    return kExitUsage;
  }
  if (!input_given("fix", options.input.given())) {
    return kExitUsage;
  }
  auto fail_on = audit::parse_fail_on(options.fail_on);
  if (!fail_on) {
    std::cerr << "topoguard fix: " << printable(fail_on.error().message) << '\n';
    return kExitUsage;
  }
  const std::vector<audit::ManifestPath> paths = options.input.manifest_paths();
  if (!stdin_read_once("fix", options.policies, paths)) {
    return kExitUsage;
  }
  const std::optional<policy::PolicySet> policies = load_command_policies("fix", options.policies);
  if (!policies) {
    return kExitUsage;
  }
  std::vector<Json> namespaces;
  if (!load_namespace_labels("fix", options.namespace_labels, namespaces)) {
    return kExitUsage;
  }
  const audit::RunOptions run_options{.namespaces = &namespaces};
  const audit::ManifestSet manifests =
      audit::read_manifests(paths, std::cin, audit::ReadOptions{{}, options.input.exclude});
  const audit::AuditRun run = audit::run_audit(manifests, *policies, run_options);
  audit::write_skipped_inputs(run.report.skipped_inputs, std::cerr);
  const audit::FixOutcome outcome = audit::apply_fixes(manifests, run);
  int exit_code = kExitOk;
  for (const Error& error : run.report.errors) {
    std::cerr << error.to_string() << '\n';
    exit_code = kExitUsage;
  }
  for (const Error& error : outcome.errors) {
    std::cerr << error.to_string() << '\n';
    exit_code = kExitUsage;
  }
  std::size_t fixes = 0;
  std::size_t changed = 0;
  for (const audit::FixedFile& file : outcome.files) {
    for (const std::string& change : file.changes) {
      if (!output_settings().quiet) {
        std::cerr << printable(change) << '\n';
      }
      ++fixes;
    }
    changed += file.changed() ? 1 : 0;
    if (options.diff) {
      // outcome.files is parallel to manifests.files.
      const audit::SourceFile& source = manifests.files[static_cast<std::size_t>(&file - outcome.files.data())];
      std::cout << audit::unified_diff(file.path, source.text, file.edits);
    }
    if (options.in_place) {
      if (file.changed() && (file.path == "-" || !write_text_file(file.path, file.text))) {
        std::cerr << printable(file.path) << ": cannot write the fixed file in place\n";
        exit_code = kExitUsage;
      }
    } else if (!options.output_dir.empty()) {
      if (!write_text_file(output_path(options.output_dir, file.path).string(), file.text)) {
        std::cerr << printable(output_path(options.output_dir, file.path).string())
                  << ": cannot write\n";
        exit_code = kExitUsage;
      }
    } else if (!options.diff) {
      std::cout << file.text;
      if (!file.text.empty() && file.text.back() != '\n') {
        std::cout << '\n';
      }
      if (&file != &outcome.files.back()) {
        std::cout << "---\n";
      }
    }
  }
  note("fix", "applied " + std::to_string(fixes) + (fixes == 1 ? " fix" : " fixes") +
                  ", changed " + std::to_string(changed) + " of " +
                  std::to_string(outcome.files.size()) +
                  (outcome.files.size() == 1 ? " file" : " files"));
  const audit::AuditReport left = fixes == 0 ? run.report : audit_fixed(outcome, *policies, run_options);
  if (!left.findings.empty()) {
    std::cerr << "topoguard fix: " << unfixed_text(left)
              << "; `topoguard audit` on the output lists them\n";
  }
  // Of what the fixes leave, as --fail-on: a fix the labels would have asked for is missing.
  say_unknown_labels("fix", left, namespace_labels_how(kOrInTheInput),
                     options.fail_on_unknown && exit_code == kExitOk && left.errors.empty());
  return exit_code != kExitOk ? exit_code
                              : audit::exit_code(left, *fail_on, options.fail_on_unknown);
}

}  // namespace

void add_fix_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<FixOptions>();
  CLI::App* command = app.add_subcommand(
      "fix",
      "Write manifests with every enabled fix applied (stdout, --output-dir DIR or --in-place)");
  add_policies_option(*command, options->policies);
  command
      ->add_option_function<std::string>(
          "-o,--output",
          [command, options](const std::string& value) {
            if (value == "diff") {
              options->diff = true;
            } else if (value != "yaml") {
              say_deprecated(*command, "-o DIR", "--output-dir " + printable(value));
              options->output_dir = value;
            }
          },
          "Output: yaml (the fixed manifests as a YAML stream) or diff (a unified diff, as "
          "--diff). Formerly the output directory: a value that is no output format (yaml, "
          "json, diff, ...) is still read as --output-dir, with a deprecation note (default: "
          "yaml)")
      ->transform(without_equals_sign())
      ->check(CLI::Validator(
          [](const std::string& value) {
            return !is_known_format(value) || value == "yaml" || value == "diff"
                       ? std::string()
                       : "fix writes the manifests (yaml) or a diff (diff), not " + value +
                             "; for a directory of that name: --output-dir " + value;
          },
          "{yaml,diff}"));
  command->add_option("--output-dir", options->output_dir,
                      "Write fixed files under DIR, at their paths relative to the current "
                      "directory (default: all files to stdout)")
      ->type_name("DIR");
  command->add_flag("--in-place", options->in_place,
                    "Rewrite changed files in place (default: off)");
  command->add_flag("--diff", options->diff,
                    "Print a unified diff of the changes to stdout (instead of the fixed files "
                    "when neither --output-dir nor --in-place is given; default: off)");
  add_fail_on_option(*command, options->fail_on, "a finding the fixes leave");
  add_fail_on_unknown_option(*command, options->fail_on_unknown);
  add_namespace_labels_option(*command, options->namespace_labels);
  add_manifest_input_options(*command, options->input,
                             "Manifest files, directories (read whole), or - for stdin");
  command->callback([options, &exit_code] { exit_code = run_fix_command(*options); });
}

}  // namespace topoguard::cli
