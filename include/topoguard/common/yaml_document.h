// YAML (and JSON) text -> Json documents with a line for every JSON pointer. The only yaml-cpp
// user. A stream is split into documents first, so one broken document is reported with its
// file and line while the others are still returned.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "topoguard/common/json.h"
#include "topoguard/common/result.h"

namespace topoguard {

// Where a mapping or sequence starts in the stream text, for writers that insert into the text
// instead of re-rendering it (`topoguard fix`).
struct NodeMark {
  std::size_t offset = 0;  // byte offset in the stream: the '{' or '[' of a flow collection (JSON
                           // included), the first key or '-' of a block one
  int column = 0;          // 0-based column of that byte
  bool flow = false;
};

// Maps JSON pointers of a document to the 1-based line of the node in the source text (of its
// key, for a member), and mappings and sequences to their NodeMark. The first record wins.
class LineIndex {
 public:
  void record(std::string pointer, int line) {
    lines_.try_emplace(std::move(pointer), Entry{line, false, NodeMark{}});
  }
  void record_mark(const std::string& pointer, NodeMark mark);
  // Line of `pointer`, or of its deepest recorded ancestor; 0 when nothing is known.
  [[nodiscard]] int line_of(std::string_view pointer) const;
  // The mark of the mapping or sequence at exactly `pointer`; nullopt for anything else.
  [[nodiscard]] std::optional<NodeMark> mark_of(const std::string& pointer) const;

 private:
  struct Entry {
    int line = 0;
    bool has_mark = false;
    NodeMark mark;
  };
  std::unordered_map<std::string, Entry> lines_;
};

struct YamlDocument {
  Json value;
  LineIndex lines;
  int index = 0;             // 0-based position of the document in its stream
  int first_line = 1;        // 1-based line where the document's content starts
  std::size_t text_begin = 0;  // byte range of the document's text in the stream, so that
  std::size_t text_end = 0;    // writers can copy unchanged documents verbatim
};

struct YamlStream {
  std::vector<YamlDocument> documents;  // non-empty documents in stream order
  std::vector<Error> errors;            // one per document that failed to parse
};

struct ParseLimits {
  int max_depth = 256;                  // nesting of mappings and sequences
  std::size_t max_nodes = 500'000;      // per document, after alias expansion
};

// Parses a multi-document YAML stream (JSON is accepted as YAML). Plain scalars resolve with the
// YAML 1.2 core schema (null, bool, int, float); quoted ones stay strings; `<<` merge keys are
// expanded; duplicate keys are errors. Never throws.
[[nodiscard]] YamlStream parse_yaml_stream(std::string_view text, const std::string& file_name,
                                           const ParseLimits& limits = {});

// Renders a value as a block-style YAML document (no leading "---"). Strings that would read
// back as another type are quoted, so parse_yaml_stream(to_yaml(v)) == v.
[[nodiscard]] std::string to_yaml(const Json& value);

}  // namespace topoguard
