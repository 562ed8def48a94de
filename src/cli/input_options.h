// What the commands that read manifests and policies share about their input: -f/--filename,
// -R/--recursive and --exclude beside the positional paths, "-" read once, and policies loaded
// with what was skipped said on stderr.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "topoguard/audit/manifest_reader.h"
#include "topoguard/policy/policy_set.h"

namespace topoguard::cli {

struct ManifestInputOptions {
  std::vector<std::string> paths;      // positional: folders walked recursively, as always
  std::vector<std::string> filenames;  // -f: a folder's subfolders only with -R, as in kubectl
  bool recursive = false;
  std::vector<std::string> exclude;

  [[nodiscard]] bool given() const { return !paths.empty() || !filenames.empty(); }
  // -f paths first, then the positional ones.
  [[nodiscard]] std::vector<audit::ManifestPath> manifest_paths() const;
};

// Adds -f/--filename, -R/--recursive, --exclude and the positional PATH... (`paths_help`).
void add_manifest_input_options(CLI::App& command, ManifestInputOptions& options,
                                const std::string& paths_help);

// False, after saying so on stderr, when standard input ("-") is named more than once among
// `policies` and `manifests` (the first reader would leave nothing to the next).
[[nodiscard]] bool stdin_read_once(std::string_view command,
                                   const std::vector<std::string>& policies,
                                   const std::vector<audit::ManifestPath>& manifests);

// --policies (the built-in policy when none): the set, with the documents skipped as no
// policies told on stderr; nullopt after printing the error.
[[nodiscard]] std::optional<policy::PolicySet> load_command_policies(
    std::string_view command, const std::vector<std::string>& paths);

}  // namespace topoguard::cli
