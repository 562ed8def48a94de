#include "topoguard/audit/manifest_fixer.h"

#include <map>

#include "topoguard/engine/json_patch.h"
#include "topoguard/k8s/object.h"

namespace topoguard::audit {

namespace {

// Prefixes every operation path with `base` (the List item a manifest came from).
Json rebase(const Json& patch, const std::string& base) {
  if (base.empty()) {
    return patch;
  }
  Json rebased = patch;
  for (Json& operation : rebased) {
    operation["path"] = base + operation["path"].get<std::string>();
  }
  return rebased;
}

std::string describe(const engine::Finding& finding, const std::string& file, int line) {
  std::string text = file + ":" + std::to_string(line) + ": fixed " +
                     std::string(policy::rule_name(finding.rule)) + " " + finding.resource.kind +
                     " " + k8s::effective_namespace(finding.resource) + "/" +
                     finding.resource.name + ":";
  for (const Json& operation : finding.fix) {
    text += " " + operation.value("op", std::string()) + " " +
            operation.value("path", std::string()) + " " + operation["value"].dump();
  }
  return text;
}

// Text before the document's content in its chunk: the "---" line and leading comments.
std::string_view chunk_header(const SourceFile& file, const YamlDocument& document) {
  std::string_view chunk(file.text.data() + document.text_begin,
                         document.text_end - document.text_begin);
  // Lines before the document's first line are header lines.
  int line = 1;
  for (std::size_t i = 0; i < document.text_begin; ++i) {
    line += file.text[i] == '\n' ? 1 : 0;
  }
  std::size_t end = 0;
  while (line < document.first_line && end < chunk.size()) {
    const std::size_t newline = chunk.find('\n', end);
    if (newline == std::string_view::npos) {
      break;
    }
    end = newline + 1;
    ++line;
  }
  return chunk.substr(0, end);
}

}  // namespace

FixOutcome apply_fixes(const ManifestSet& manifests, const AuditRun& run) {
  FixOutcome outcome;
  // file -> document -> patched value
  std::vector<std::map<std::size_t, Json>> patched(manifests.files.size());
  std::vector<std::vector<std::string>> changes(manifests.files.size());
  for (const ManifestEvaluation& evaluated : run.evaluations) {
    if (evaluated.evaluation.patch.empty()) {
      continue;
    }
    const Manifest& manifest = *evaluated.manifest;
    const SourceFile& file = manifests.files[manifest.file];
    auto [it, inserted] = patched[manifest.file].try_emplace(
        manifest.document, file.stream.documents[manifest.document].value);
    auto result = engine::apply_patch(it->second, rebase(evaluated.evaluation.patch,
                                                         manifest.base_pointer));
    if (!result) {
      Error error = result.error();
      error.location = SourceLocation{file.path, manifests.line_of(manifest, ""), ""};
      outcome.errors.push_back(std::move(error));
      continue;
    }
    it->second = std::move(result).value();
    for (const engine::Finding& finding : evaluated.evaluation.findings) {
      if (finding.fix_enabled) {
        changes[manifest.file].push_back(
            describe(finding, file.path, manifests.line_of(manifest, finding.pointer)));
      }
    }
  }

  for (std::size_t f = 0; f < manifests.files.size(); ++f) {
    const SourceFile& file = manifests.files[f];
    FixedFile fixed{file.path, std::string(), std::move(changes[f])};
    std::size_t cursor = 0;
    for (const auto& [index, value] : patched[f]) {
      const YamlDocument& document = file.stream.documents[index];
      if (document.text_begin < cursor) {
        continue;  // its chunk was already written with it
      }
      fixed.text.append(file.text, cursor, document.text_begin - cursor);
      fixed.text += chunk_header(file, document);
      // A chunk normally holds one document; re-render every document that shares it.
      bool first = true;
      for (std::size_t d = 0; d < file.stream.documents.size(); ++d) {
        const YamlDocument& sibling = file.stream.documents[d];
        if (sibling.text_begin != document.text_begin) {
          continue;
        }
        auto patched_sibling = patched[f].find(d);
        fixed.text += first ? "" : "---\n";
        fixed.text += to_yaml(patched_sibling != patched[f].end() ? patched_sibling->second
                                                                  : sibling.value);
        first = false;
      }
      cursor = document.text_end;
    }
    fixed.text.append(file.text, cursor, std::string::npos);
    outcome.files.push_back(std::move(fixed));
  }
  return outcome;
}

}  // namespace topoguard::audit
