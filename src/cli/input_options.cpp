#include "input_options.h"

#include <algorithm>
#include <iostream>

#include "conventions.h"
#include "topoguard/policy/policy_loader.h"

namespace topoguard::cli {

std::vector<audit::ManifestPath> ManifestInputOptions::manifest_paths() const {
  std::vector<audit::ManifestPath> inputs;
  for (const std::string& path : filenames) {
    inputs.push_back(audit::ManifestPath{path, recursive});
  }
  for (const std::string& path : paths) {
    inputs.push_back(audit::ManifestPath{path, true});
  }
  return inputs;
}

void add_manifest_input_options(CLI::App& command, ManifestInputOptions& options,
                                const std::string& paths_help) {
  command
      .add_option("-f,--filename", options.filenames,
                  "Manifest file, folder or - for stdin, as in kubectl; repeat the flag for "
                  "more. A folder's subfolders are read only with -R (default: none)")
      ->type_name("PATH")
      ->allow_extra_args(false);
  command.add_flag("-R,--recursive", options.recursive,
                   "Also read the subfolders of the folders given with -f (positional folders "
                   "are always read whole; default: off)");
  command
      .add_option("--exclude", options.exclude,
                  "Leave out files and folders matching GLOB (fnmatch: `*` also matches `/`), "
                  "tried on the path below the folder given and on the name alone; repeat the "
                  "flag for more (e.g. --exclude 'charts' --exclude '*-patch.yaml'; default: "
                  "none)")
      ->type_name("GLOB")
      ->allow_extra_args(false);
  command.add_option("paths", options.paths, paths_help)->type_name("PATH");
}

bool stdin_read_once(std::string_view command, const std::vector<std::string>& policies,
                     const std::vector<audit::ManifestPath>& manifests) {
  const auto is_stdin = [](const std::string& path) { return path == "-"; };
  const std::size_t readers =
      static_cast<std::size_t>(std::count_if(policies.begin(), policies.end(), is_stdin)) +
      static_cast<std::size_t>(std::count_if(
          manifests.begin(), manifests.end(),
          [&](const audit::ManifestPath& input) { return is_stdin(input.path); }));
  if (readers > 1) {
    std::cerr << "topoguard " << command
              << ": standard input (-) is given more than once; it can be read only once: pass "
                 "the others as files\n";
  }
  return readers <= 1;
}

std::optional<policy::PolicySet> load_command_policies(std::string_view command,
                                                       const std::vector<std::string>& paths) {
  std::vector<policy::SkippedDocument> skipped;
  Result<policy::PolicySet> policies = policy::load_policies(paths, &skipped);
  if (!skipped.empty()) {
    note(command, "--policies: " + policy::skipped_documents_text(skipped));
  }
  if (!policies) {
    std::cerr << "topoguard " << command << ": " << policies.error().to_string() << '\n';
    return std::nullopt;
  }
  return std::move(*policies);
}

}  // namespace topoguard::cli
