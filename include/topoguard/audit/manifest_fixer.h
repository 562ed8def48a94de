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

struct FixedFile {
  std::string path;
  std::string text;                  // the whole new file content
  std::vector<std::string> changes;  // one human-readable line per applied fix
  [[nodiscard]] bool changed() const { return !changes.empty(); }
};

struct FixOutcome {
  std::vector<FixedFile> files;  // one per input file, in input order
  std::vector<Error> errors;     // fixes that did not apply (never expected; reported)
};

[[nodiscard]] FixOutcome apply_fixes(const ManifestSet& manifests, const AuditRun& run);

}  // namespace topoguard::audit
