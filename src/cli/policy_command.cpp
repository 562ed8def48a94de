// `topoguard policy lint PATH...`, `topoguard policy show [--effective] PATH...`, `topoguard
// policy test PATH...` and `topoguard policy show-default`: flags, files and exit codes only; the
// work is policy::lint_policy_files(), policy::policy_to_json(), the policytest module and
// policy::builtin_policy_text().
#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "commands.h"
#include "conventions.h"
#include "namespace_labels_options.h"
#include "topoguard/common/printable_text.h"
#include "topoguard/common/text_file.h"
#include "topoguard/common/yaml_document.h"
#include "topoguard/policy/policy_json.h"
#include "topoguard/policy/policy_loader.h"
#include "topoguard/policytest/policy_test.h"

namespace topoguard::cli {

namespace {

std::string counted(std::size_t count, const char* singular, const char* plural) {
  return std::to_string(count) + " " + (count == 1 ? singular : plural);
}

int run_lint(const std::vector<std::string>& paths) {
  const policy::PolicyLintReport report = policy::lint_policy_files(paths);
  if (!report.skipped.empty()) {
    note("policy lint", policy::skipped_documents_text(report.skipped));
  }
  for (const Error& error : report.errors) {
    std::cout << error.to_string() << '\n';
  }
  for (const Error& warning : report.warnings) {
    const SourceLocation& where = warning.location;
    std::cout << printable(where.file) << ':' << where.line << ": "
              << (where.field.empty() ? "" : printable(where.field) + ": ")
              << "warning: " << printable(warning.message) << '\n';
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
    std::cout << (first ? "" : "---\n") << "# policy \"" << printable(policy.name) << "\" from "
              << printable(policy.origin.file) << ':' << policy.origin.line << '\n';
    if (effective) {
      std::cout << "# effective: with what it inherits from the built-in policy:";
      for (const std::string& path : policy.inherited) {
        std::cout << ' ' << path;
      }
      std::cout << (policy.inherited.empty() ? " nothing\n" : "\n");
    } else {
      drop_inherited(policy, document);
    }
    // The YAML emitter escapes C0 and C1 controls but passes bidi overrides and line separators.
    std::cout << printable_lines(to_yaml(document));
    first = false;
  }
  std::cout << std::flush;
  return kExitOk;
}

struct TestOptions {
  std::vector<std::string> paths;
  std::string root = ".";
  std::vector<std::string> names;
  std::string format = "text";
  bool update = false;
  std::string namespace_labels;
};

std::vector<policytest::TestResult> run_tests(const policytest::ParsedTests& parsed,
                                              const std::vector<std::string>& names,
                                              const std::vector<Json>& namespaces) {
  std::vector<policytest::TestResult> results;
  for (const policytest::PolicyTest& test : parsed.tests) {
    if (names.empty() || std::find(names.begin(), names.end(), test.name) != names.end()) {
      results.push_back(policytest::run_or_fail(test, namespaces));
    }
  }
  return results;
}

bool any_error(const policytest::ParsedTests& parsed,
               const std::vector<policytest::TestResult>& results) {
  return !parsed.errors.empty() ||
         std::any_of(results.begin(), results.end(),
                     [](const policytest::TestResult& result) { return !result.errors.empty(); });
}

// --update: what the run observed written into the test files (and `patched` files). Returns
// false when a file could not be written.
bool write_updates(const std::vector<policytest::TestResult>& results,
                   const policytest::PathRoot& root) {
  std::vector<std::string> files;  // of failed tests, in run order
  std::set<std::string> seen;
  for (const policytest::TestResult& result : results) {
    if (!result.passed() && seen.insert(result.test->file).second) {
      files.push_back(result.test->file);
    }
  }
  bool ok = true;
  // Paths were checked when the tests were read; again here, as the tree may have changed since.
  const auto write_inside_root = [&ok, &root](const std::string& path, const std::string& text) {
    const Status written =
        root.contains(path)
            ? write_text_file(path, text)
            : Status(Error{ErrorCode::kIo, "not written: outside the root " + root.string(),
                           SourceLocation{path, 0, ""}});
    if (!written) {
      std::cerr << "topoguard policy test --update: " << written.error().to_string() << '\n';
      ok = false;
    }
  };
  for (const std::string& file : files) {
    Result<std::string> text = read_text_file(file, policytest::kMaxTestFileBytes);
    Result<policytest::FileUpdate> update = text
                                                ? policytest::update_test_file(file, *text, results)
                                                : Result<policytest::FileUpdate>(text.error());
    if (!update) {
      std::cerr << "topoguard policy test --update: " << update.error().to_string() << '\n';
      ok = false;
      continue;
    }
    for (const std::string& note : update->notes) {
      std::cerr << "topoguard policy test --update: " << printable(file) << ": " << note << '\n';
    }
    for (const auto& [patched, object] : update->patched_files) {
      write_inside_root(patched, to_yaml(object));
    }
    if (update->text != *text) {
      write_inside_root(file, update->text);
    }
  }
  return ok;
}

// Exit 0 when every test passes, 1 when one fails, 2 on an input error. With --update the
// tests run again after the files are written, and that run decides.
int run_test(const TestOptions& options) {
  const Result<policytest::PathRoot> root = policytest::PathRoot::open(options.root);
  if (!root) {
    std::cerr << "topoguard policy test: " << root.error().message << '\n';
    return kExitUsage;
  }
  std::vector<Json> namespaces;
  if (!load_namespace_labels("policy test", options.namespace_labels, namespaces)) {
    return kExitUsage;
  }
  policytest::ParsedTests parsed = policytest::read_policy_tests(options.paths, *root);
  std::vector<policytest::TestResult> results = run_tests(parsed, options.names, namespaces);
  if (parsed.errors.empty() && !options.names.empty() && results.empty()) {
    std::cerr << "topoguard policy test: no test is named " << printable(options.names.front())
              << '\n';
    return kExitUsage;
  }
  if (options.update && !any_error(parsed, results)) {
    if (!write_updates(results, *root)) {
      return kExitUsage;
    }
    parsed = policytest::read_policy_tests(options.paths, *root);
    results = run_tests(parsed, options.names, namespaces);
  }
  if (options.format == "junit") {
    policytest::write_junit(parsed.errors, results, std::cout);
  } else {
    policytest::write_text(parsed.errors, results, std::cout, color_enabled(STDOUT_FILENO));
  }
  std::cout.flush();
  if (any_error(parsed, results)) {
    return kExitUsage;
  }
  const bool passed =
      std::all_of(results.begin(), results.end(),
                  [](const policytest::TestResult& result) { return result.passed(); });
  return passed ? kExitOk : kExitFindings;
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

  CLI::App* test = policy->add_subcommand(
      "test", "Run AlignmentPolicyTest files: what policies must decide for given manifests");
  auto test_options = std::make_shared<TestOptions>();
  test->add_option("paths", test_options->paths, "Test files or directories (*.yaml, *.yml)")
      ->required()
      ->type_name("PATH");
  test->add_option("--run", test_options->names, "Run only the tests of this name (repeatable)")
      ->type_name("NAME");
  add_output_option(*test, test_options->format, {"text", "junit"}, "Output: text or junit");
  test->add_option("--root", test_options->root,
                   "Every path a test file names (policies, resources, clusterState, "
                   "namespaces, patched) "
                   "must resolve inside this folder, symlinks resolved; --update writes only "
                   "there (default: the current directory)")
      ->type_name("DIR");
  test->add_flag("--update", test_options->update,
                 "Write what the run observed into the failing test files (and patched files), "
                 "keeping comments and order; then run again");
  add_namespace_labels_option(*test, test_options->namespace_labels);
  test->callback([test_options, &exit_code] { exit_code = run_test(*test_options); });

  add_policy_compile_command(*policy, exit_code);

  CLI::App* show_default = policy->add_subcommand(
      "show-default", "Print the built-in default policy (copy it to start your own)");
  show_default->callback([&exit_code] {
    std::cout << policy::builtin_policy_text() << std::flush;
    exit_code = kExitOk;
  });
}

}  // namespace topoguard::cli
