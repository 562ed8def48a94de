#include "topoguard/audit/input_classifier.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <filesystem>

#include "topoguard/common/location_text.h"
#include "topoguard/common/printable_text.h"

namespace topoguard::audit {

namespace {

bool is_identifier_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}

// `word` at `text[at]`, not followed by more of an identifier.
bool word_at(std::string_view text, std::size_t at, std::string_view word) {
  return text.substr(at, word.size()) == word &&
         (at + word.size() == text.size() || !is_identifier_char(text[at + word.size()]));
}

// One action's text, between `{{` (and its trim marker) and `}}`.
bool reads_the_chart(std::string_view action) {
  constexpr std::array<std::string_view, 4> kFirstWords{"include", "template", "define", "tpl"};
  const std::size_t first = action.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) {
    return false;
  }
  if (std::any_of(kFirstWords.begin(), kFirstWords.end(),
                  [&](std::string_view word) { return word_at(action, first, word); })) {
    return true;
  }
  constexpr std::array<std::string_view, 6> kBuiltins{".Values",       ".Release", ".Chart",
                                                      ".Capabilities", ".Files",   ".Template"};
  for (std::string_view builtin : kBuiltins) {
    for (std::size_t at = action.find(builtin); at != std::string_view::npos;
         at = action.find(builtin, at + 1)) {
      // `.Values` itself, or `$.Values`, never the tail of `x.Values`.
      const bool starts_path = at == 0 || !(is_identifier_char(action[at - 1]) ||
                                            action[at - 1] == '.');
      if (starts_path && word_at(action, at + 1, builtin.substr(1))) {
        return true;
      }
    }
  }
  return false;
}

}  // namespace

std::string_view not_an_object_description(NotAnObject reason) {
  switch (reason) {
    case NotAnObject::kJsonPatch:
      return "a JSON patch (an array of {op, path} operations, as kustomize patches are), not a "
             "Kubernetes object";
    case NotAnObject::kKustomization:
      return "a kustomization; to audit what it builds: kubectl kustomize DIR | topoguard audit -";
    case NotAnObject::kKustomizePatch:
      return "a patch a kustomization names; to audit what it builds: kubectl kustomize DIR | "
             "topoguard audit -";
    case NotAnObject::kHelmChart:
      return "part of a Helm chart (a folder with Chart.yaml); to audit what it renders: helm "
             "template CHART | topoguard audit -";
    case NotAnObject::kTemplate:
      return "a template ({{ ... }}), not YAML yet; to audit what it renders: helm template "
             "CHART | topoguard audit -";
    case NotAnObject::kNoKind:
      return "no apiVersion or kind in the file: configuration (Helm values, say), not "
             "Kubernetes objects";
  }
  return "";
}

std::string_view not_an_object_name(NotAnObject reason) {
  switch (reason) {
    case NotAnObject::kJsonPatch:
      return "json-patch";
    case NotAnObject::kKustomization:
      return "kustomization";
    case NotAnObject::kKustomizePatch:
      return "kustomize-patch";
    case NotAnObject::kHelmChart:
      return "helm-chart";
    case NotAnObject::kTemplate:
      return "template";
    case NotAnObject::kNoKind:
      return "no-kind";
  }
  return "";
}

std::string skipped_input_text(const SkippedInput& skipped) {
  std::string text = printable(location_text(skipped.file, skipped.line)) +
                     ": skipped, not a Kubernetes object: ";
  const std::string folder = std::filesystem::path(skipped.file).parent_path().string();
  if (skipped.reason == NotAnObject::kKustomization && skipped.line == 0 && !folder.empty()) {
    // The command that audits what it builds, ready to paste.
    return text + "a kustomization; to audit what it builds: kubectl kustomize " +
           printable(folder) + " | topoguard audit -";
  }
  return text + std::string(not_an_object_description(skipped.reason));
}

bool is_kustomization_file_name(std::string_view file_name) {
  return file_name == "kustomization.yaml" || file_name == "kustomization.yml" ||
         file_name == "Kustomization";
}

bool holds_helm_template_action(std::string_view text) {
  for (std::size_t open = text.find("{{"); open != std::string_view::npos;
       open = text.find("{{", open + 2)) {
    std::size_t begin = open + 2;
    if (begin < text.size() && text[begin] == '-') {
      ++begin;  // a trim marker
    }
    const std::size_t close = text.find("}}", begin);
    if (close == std::string_view::npos) {
      return false;
    }
    if (reads_the_chart(text.substr(begin, close - begin))) {
      return true;
    }
  }
  return false;
}

bool holds_template_braces(std::string_view text) {
  return text.find("{{") != std::string_view::npos;
}

bool is_json_patch(const Json& document) {
  return document.is_array() && !document.empty() &&
         std::all_of(document.begin(), document.end(), [](const Json& operation) {
           const Json* op = operation.is_object() ? member(operation, "op") : nullptr;
           const Json* path = operation.is_object() ? member(operation, "path") : nullptr;
           return op != nullptr && op->is_string() && path != nullptr && path->is_string();
         });
}

bool is_kustomize_object(const Json& document) {
  return document.is_object() &&
         string_member_view(document, "apiVersion").starts_with("kustomize.config.k8s.io/");
}

bool names_api_version_or_kind(const Json& document) {
  return document.is_object() &&
         (member(document, "apiVersion") != nullptr || member(document, "kind") != nullptr);
}

std::vector<std::string> kustomization_patch_paths(const Json& kustomization) {
  std::vector<std::string> paths;
  if (!kustomization.is_object()) {
    return paths;
  }
  for (std::string_view field : {"patches", "patchesJson6902"}) {
    const Json* entries = member(kustomization, field);
    if (entries == nullptr || !entries->is_array()) {
      continue;
    }
    for (const Json& entry : *entries) {
      if (entry.is_object() && !string_member_view(entry, "path").empty()) {
        paths.push_back(string_member(entry, "path"));
      }
    }
  }
  // Entries are file names, or (since kustomize v3) patches written inline: those span lines.
  if (const Json* entries = member(kustomization, "patchesStrategicMerge");
      entries != nullptr && entries->is_array()) {
    for (const Json& entry : *entries) {
      if (entry.is_string() && entry.get_ref<const std::string&>().find('\n') == std::string::npos) {
        paths.push_back(entry.get<std::string>());
      }
    }
  }
  return paths;
}

}  // namespace topoguard::audit
