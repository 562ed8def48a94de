// --namespace-labels and --fail-on-unknown, and the stderr note on verdicts reached without the
// labels of a namespace, alike for audit, fix, review and policy test.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "topoguard/audit/audit_report.h"
#include "topoguard/common/json.h"

namespace topoguard::cli {

// How the notes say to give the labels, after "give the labels with ": --namespace-labels,
// then `alternative` (" or by putting the Namespace objects in the input").
[[nodiscard]] std::string namespace_labels_how(std::string_view alternative);
inline constexpr std::string_view kOrInTheInput =
    " or by putting the Namespace objects in the input";

CLI::Option* add_namespace_labels_option(CLI::App& command, std::string& path);
CLI::Option* add_fail_on_unknown_option(CLI::App& command, bool& fail_on_unknown);

// The Namespace objects of --namespace-labels FILE into `namespaces` (nothing when `path` is
// empty). False, each error said on stderr as `topoguard COMMAND: file:line: field: message`,
// when the file cannot be read or holds an error.
[[nodiscard]] bool load_namespace_labels(std::string_view command, const std::string& path,
                                         std::vector<Json>& namespaces);

// Says on stderr which resources of `report` were judged without the labels of their
// namespace, and `how` to give them; nothing when none was. `failed`: --fail-on-unknown made
// the run fail.
void say_unknown_labels(std::string_view command, const audit::AuditReport& report,
                        std::string_view how, bool failed);

}  // namespace topoguard::cli
