#include "namespace_labels_options.h"

#include <iostream>

#include "topoguard/audit/namespace_labels.h"
#include "topoguard/common/printable_text.h"

namespace topoguard::cli {

std::string namespace_labels_how(std::string_view alternative) {
  return "--namespace-labels FILE (Namespace objects, as `kubectl get namespaces -o yaml` prints "
         "them, or a map name: {label: value})" +
         std::string(alternative);
}

CLI::Option* add_namespace_labels_option(CLI::App& command, std::string& path) {
  return command
      .add_option("--namespace-labels", path,
                  "Labels of the namespaces the input holds no Namespace object for, for "
                  "namespaceSelectors: Namespace objects (YAML or JSON, multi-document or a List, "
                  "as `kubectl get namespaces -o yaml` prints them) or a map name: {label: "
                  "value}; the input's own Namespace objects win (default: none; what needed "
                  "labels it did not have is said on stderr)")
      ->type_name("FILE");
}

CLI::Option* add_fail_on_unknown_option(CLI::App& command, bool& fail_on_unknown) {
  return command.add_flag(
      "--fail-on-unknown", fail_on_unknown,
      "Exit 1, as a finding reaching --fail-on does, also when a verdict was reached without the "
      "labels of a namespace (a namespaceSelector could not be evaluated, so the verdict may be "
      "too weak; see --namespace-labels) (default: off, a note on stderr)");
}

bool load_namespace_labels(std::string_view command, const std::string& path,
                           std::vector<Json>& namespaces) {
  if (path.empty()) {
    return true;
  }
  audit::NamespaceLabels labels = audit::read_namespace_labels(path);
  for (const Error& error : labels.errors) {
    std::cerr << "topoguard " << command << ": --namespace-labels: "
              << error.to_string() << '\n';
  }
  namespaces = std::move(labels.namespaces);
  return labels.errors.empty();
}

void say_unknown_labels(std::string_view command, const audit::AuditReport& report,
                        std::string_view how, bool failed) {
  const std::string note = audit::unknown_labels_note(report, how);
  if (note.empty()) {
    return;
  }
  std::cerr << "topoguard " << command << ": " << note
            << (failed ? "; --fail-on-unknown: exit 1\n"
                       : "; --fail-on-unknown makes this fail the run\n");
}

}  // namespace topoguard::cli
