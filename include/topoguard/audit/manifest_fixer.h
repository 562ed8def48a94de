// Applies the enabled fixes of an audit run to the source texts: documents with fixes are
// re-rendered as YAML, every other byte of the input (other documents, comments between them,
// documents that failed to parse) is kept verbatim.
#pragma once

#include <string>
#include <vector>

#include "topoguard/audit/audit_runner.h"
#include "topoguard/audit/manifest_reader.h"
#include "topoguard/common/result.h"

namespace topoguard::audit {

// One re-rendered chunk of a file: the documents it holds (indexes into the stream) and the
// edit that replaces their lines.
struct FixedChunk {
  std::vector<std::size_t> documents;
  SourceEdit edit;
};

struct FixedFile {
  std::string path;
  std::string text;                  // the whole new file content
  std::vector<std::string> changes;  // one human-readable line per applied fix
  std::vector<FixedChunk> chunks;    // the parts of the input that changed, in file order
  [[nodiscard]] bool changed() const { return !changes.empty(); }
};

struct FixOutcome {
  std::vector<FixedFile> files;  // one per input file, in input order
  std::vector<Error> errors;     // fixes that did not apply (never expected; reported)
};

[[nodiscard]] FixOutcome apply_fixes(const ManifestSet& manifests, const AuditRun& run);

// Sets fix_edit on every finding whose fix is enabled: the lines of its document and what
// `topoguard fix` writes there (for SARIF fixes). Errors of apply_fixes() join the report's.
void attach_fix_edits(const ManifestSet& manifests, AuditRun& run);

}  // namespace topoguard::audit
