// Applies the enabled fixes of an audit run to the source texts by inserting only what a fix
// adds: the `constraints` it adds are written into the original text at the indentation of
// their neighbours (block YAML), or as JSON into a flow mapping or sequence (a .json file stays
// JSON). Every other byte is kept: comments, formatting, other documents. Each fixed document is
// read back and compared with the patched object; a document where that fails (unusual YAML:
// anchors, odd indentation) is re-rendered whole instead, as JSON when it was JSON. Linear in
// the size of the input.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "topoguard/audit/audit_runner.h"
#include "topoguard/audit/manifest_reader.h"
#include "topoguard/common/result.h"

namespace topoguard::audit {

// Bytes [begin, end) of a text replaced by `text`; an insertion when begin == end.
struct TextEdit {
  std::size_t begin = 0;
  std::size_t end = 0;
  std::string text;
};

// One fixed chunk of a file: the documents it holds (indexes into the stream) and the edits
// that fix them (edits[first_edit, first_edit + edit_count) of its FixedFile).
struct FixedChunk {
  std::vector<std::size_t> documents;
  std::size_t first_edit = 0;
  std::size_t edit_count = 0;
};

struct FixedFile {
  std::string path;
  std::string text;                  // the whole new file content
  std::vector<std::string> changes;  // one human-readable line per applied fix
  std::vector<TextEdit> edits;       // what turns the input text into `text`, in text order
  std::vector<FixedChunk> chunks;    // the chunks those edits fix, in file order
  [[nodiscard]] bool changed() const { return !changes.empty(); }
};

struct FixOutcome {
  std::vector<FixedFile> files;  // one per input file, in input order
  std::vector<Error> errors;     // fixes that did not apply (never expected; reported)
};

[[nodiscard]] FixOutcome apply_fixes(const ManifestSet& manifests, const AuditRun& run);

// The unified diff (3 lines of context, "a/PATH" and "b/PATH" headers as `git diff` writes them,
// so `git apply` and `patch -p1` take it) of `edits` on `original`; empty without edits. Linear.
[[nodiscard]] std::string unified_diff(const std::string& path, std::string_view original,
                                       const std::vector<TextEdit>& edits);

// Sets fix_edit on every finding whose fix is enabled: the lines of its document's chunk that
// `topoguard fix` changes (from the first edited line to the last) and what it writes there
// (for SARIF fixes). Errors of apply_fixes() join the report's.
void attach_fix_edits(const ManifestSet& manifests, AuditRun& run);

}  // namespace topoguard::audit
