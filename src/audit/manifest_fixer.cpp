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

// Line of the last character of text[begin, end) that is not a line break; `first_line` is the
// line at `begin`.
int last_line_of(const std::string& text, int first_line, std::size_t begin, std::size_t end) {
  while (end > begin && (text[end - 1] == '\n' || text[end - 1] == '\r')) {
    --end;
  }
  int line = first_line;
  for (std::size_t i = begin; i < end; ++i) {
    line += text[i] == '\n' ? 1 : 0;
  }
  return line;
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
    FixedFile fixed{file.path, std::string(), std::move(changes[f]), {}};
    std::size_t cursor = 0;
    for (const auto& [index, value] : patched[f]) {
      const YamlDocument& document = file.stream.documents[index];
      if (document.text_begin < cursor) {
        continue;  // its chunk was already written with it
      }
      fixed.text.append(file.text, cursor, document.text_begin - cursor);
      const std::string_view header = chunk_header(file, document);
      fixed.text += header;
      // A chunk normally holds one document; re-render every document that shares it.
      FixedChunk chunk;
      for (std::size_t d = 0; d < file.stream.documents.size(); ++d) {
        const YamlDocument& sibling = file.stream.documents[d];
        if (sibling.text_begin != document.text_begin) {
          continue;
        }
        auto patched_sibling = patched[f].find(d);
        chunk.edit.text += chunk.documents.empty() ? "" : "---\n";
        chunk.edit.text += to_yaml(patched_sibling != patched[f].end() ? patched_sibling->second
                                                                       : sibling.value);
        chunk.documents.push_back(d);
      }
      fixed.text += chunk.edit.text;
      chunk.edit.first_line = document.first_line;
      chunk.edit.last_line = last_line_of(file.text, document.first_line,
                                          document.text_begin + header.size(), document.text_end);
      while (!chunk.edit.text.empty() && chunk.edit.text.back() == '\n') {
        chunk.edit.text.pop_back();
      }
      fixed.chunks.push_back(std::move(chunk));
      cursor = document.text_end;
    }
    fixed.text.append(file.text, cursor, std::string::npos);
    outcome.files.push_back(std::move(fixed));
  }
  return outcome;
}

void attach_fix_edits(const ManifestSet& manifests, AuditRun& run) {
  FixOutcome outcome = apply_fixes(manifests, run);
  // (file, document) -> the edit of its chunk
  std::map<std::pair<std::size_t, std::size_t>, std::shared_ptr<const SourceEdit>> edits;
  for (std::size_t f = 0; f < outcome.files.size(); ++f) {
    for (FixedChunk& chunk : outcome.files[f].chunks) {
      auto edit = std::make_shared<const SourceEdit>(std::move(chunk.edit));
      for (std::size_t document : chunk.documents) {
        edits.emplace(std::make_pair(f, document), edit);
      }
    }
  }
  for (ReportedFinding& reported : run.report.findings) {
    if (!reported.finding.fix_enabled) {
      continue;
    }
    const Manifest& manifest = *run.evaluations[reported.resource].manifest;
    if (auto edit = edits.find({manifest.file, manifest.document}); edit != edits.end()) {
      reported.fix_edit = edit->second;
    }
  }
  run.report.errors.insert(run.report.errors.end(), outcome.errors.begin(), outcome.errors.end());
}

}  // namespace topoguard::audit
