#include "topoguard/audit/manifest_fixer.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <utility>

#include "topoguard/common/json_writer.h"
#include "topoguard/common/printable_text.h"
#include "topoguard/common/yaml_document.h"
#include "topoguard/engine/json_patch.h"
#include "topoguard/k8s/object.h"

namespace topoguard::audit {

namespace {

// Prefixes every operation path with `base` (the List item a manifest came from).
engine::JsonPatch rebase(const engine::JsonPatch& patch, const std::string& base) {
  engine::JsonPatch rebased = patch;
  for (engine::PatchOperation& operation : rebased) {
    operation.path.insert(0, base);
  }
  return rebased;
}

std::string describe(const engine::Finding& finding, const std::string& file, int line) {
  std::string text = file + ":" + std::to_string(line) + ": fixed " +
                     std::string(policy::rule_name(finding.rule)) + " " + finding.resource.kind +
                     " " + k8s::effective_namespace(finding.resource) + "/" +
                     finding.resource.name + ":";
  for (const engine::PatchOperation& operation : finding.fix) {
    text += " add " + operation.path + " " + to_json_text(operation.value);
  }
  return text;
}

// Equal as JSON values, whatever the order of object members (sorted, not searched, so that a
// large object costs n log n).
bool same_value(const Json& a, const Json& b) {
  if (a.is_object() && b.is_object()) {
    if (a.size() != b.size()) {
      return false;
    }
    using Member = std::pair<std::string_view, const Json*>;
    auto sorted = [](const Json& object) {
      std::vector<Member> members;
      members.reserve(object.size());
      for (const auto& [key, value] : object.items()) {
        members.emplace_back(key, &value);
      }
      std::sort(members.begin(), members.end(),
                [](const Member& x, const Member& y) { return x.first < y.first; });
      return members;
    };
    const std::vector<Member> left = sorted(a);
    const std::vector<Member> right = sorted(b);
    for (std::size_t i = 0; i < left.size(); ++i) {
      if (left[i].first != right[i].first || !same_value(*left[i].second, *right[i].second)) {
        return false;
      }
    }
    return true;
  }
  if (a.is_array() && b.is_array()) {
    if (a.size() != b.size()) {
      return false;
    }
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (!same_value(a[i], b[i])) {
        return false;
      }
    }
    return true;
  }
  return a == b;
}

// One-line JSON with a space after ',' and ':', e.g. [{"requests": ["gpu", "nic"]}].
std::string flow_json(const Json& value) {
  std::string text;
  if (value.is_object()) {
    text += '{';
    for (const auto& [key, item] : value.items()) {
      text += text.size() > 1 ? ", " : "";
      text += to_json_text(Json(key)) + ": " + flow_json(item);
    }
    return text + '}';
  }
  if (value.is_array()) {
    text += '[';
    for (const Json& item : value) {
      text += text.size() > 1 ? ", " : "";
      text += flow_json(item);
    }
    return text + ']';
  }
  return to_json_text(value);
}

// `text` with `indent` spaces before every line (a trailing newline gets none after it).
std::string indented(std::string_view text, std::size_t indent) {
  const std::string spaces(indent, ' ');
  std::string out;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    end = end == std::string_view::npos ? text.size() : end + 1;
    out += spaces;
    out += text.substr(start, end - start);
    start = end;
  }
  return out;
}

// A YAML mapping key as written: plain when it is a simple name, else as a JSON string.
std::string yaml_key(const std::string& key) {
  const bool plain = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '-' || c == '.' || c == '/';
  });
  return plain ? key : to_json_text(Json(key));
}

// The text of one file and the bounds of the document being fixed.
struct Source {
  std::string_view text;
  std::size_t limit = 0;  // end of the document's chunk: scans never cross it

  std::size_t line_start(std::size_t position) const {
    const std::size_t newline = text.rfind('\n', position == 0 ? 0 : position - 1);
    return position == 0 || newline == std::string_view::npos ? 0 : newline + 1;
  }
  std::size_t next_line(std::size_t position) const {
    const std::size_t newline = text.find('\n', position);
    return newline == std::string_view::npos || newline >= limit ? limit : newline + 1;
  }
  std::size_t indentation(std::size_t start) const {
    std::size_t i = start;
    while (i < limit && text[i] == ' ') {
      ++i;
    }
    return i - start;
  }

  // Where the block mapping (keys at `column`) or block sequence ('-' at `column`) that starts
  // on the line of `start` ends: after its last line of content. Blank lines and comments at or
  // left of `column` are not content; a line left of `column`, a document marker, or (for a
  // sequence) a line at `column` that is not an item ends it.
  std::size_t block_end(std::size_t start, std::size_t column, bool sequence) const {
    std::size_t end = next_line(start);
    for (std::size_t line = end; line < limit;) {
      const std::size_t next = next_line(line);
      const std::size_t indent = indentation(line);
      const std::size_t content = line + indent;
      if (content >= next || text[content] == '\n' || text[content] == '\r' ||
          (text[content] == '#' && indent <= column)) {
        line = next;
        continue;
      }
      const std::string_view rest = text.substr(content, next - content);
      const bool item = rest.starts_with("- ") || rest.starts_with("-\n") || rest == "-" ||
                        rest.starts_with("-\r");
      if (indent < column || (indent == 0 && (rest.starts_with("---") || rest.starts_with("..."))) ||
          (sequence && indent == column && !item)) {
        break;
      }
      end = next;
      line = next;
    }
    return end;
  }
};

// One `add` written into the text, and the operation that reads back from it: the same, except
// that an element added to a flow sequence is written first (index 0), which keeps a multi-line
// JSON array's other lines untouched.
struct PlannedEdit {
  TextEdit edit;
  engine::PatchOperation read_back;
  std::size_t document = 0;  // index in the stream
};

// An insertion right after the '{' or '[' at `open` of a flow collection: `member` is the new
// member or element as one line of JSON, `pretty` the same laid out from a given indentation.
template <typename Pretty>
std::optional<TextEdit> flow_insertion(const Source& source, std::size_t open,
                                       const std::string& member, Pretty&& pretty) {
  std::size_t after = open + 1;
  std::size_t i = after;
  while (i < source.limit && (source.text[i] == ' ' || source.text[i] == '\t')) {
    ++i;
  }
  if (i >= source.limit) {
    return std::nullopt;
  }
  const char next = source.text[i];
  if (next == '}' || next == ']') {
    return TextEdit{after, after, member};
  }
  if (next != '\n' && next != '\r') {
    return next == '#' ? std::nullopt : std::optional<TextEdit>(TextEdit{after, after, member + ", "});
  }
  // One member per line: the new one goes on a line of its own, indented like the next one.
  std::size_t line = source.next_line(i);
  while (line < source.limit) {
    const std::size_t content = line + source.indentation(line);
    if (content < source.limit && source.text[content] != '\n' && source.text[content] != '\r') {
      break;
    }
    line = source.next_line(line);
  }
  const std::size_t indent = source.indentation(line);
  const std::size_t content = line + indent;
  if (content >= source.limit || source.text[content] == '#') {
    return std::nullopt;
  }
  if (source.text[content] == '}' || source.text[content] == ']') {
    return TextEdit{after, after, member};
  }
  const std::size_t outer = source.indentation(source.line_start(open));
  const std::size_t step = indent > outer ? indent - outer : 2;
  // Inserted at the start of that line, so the bracket's line stays as it is.
  return TextEdit{line, line, std::string(indent, ' ') + pretty(indent, step) + ",\n"};
}

// Plans one RFC 6902 operation of a fix as an insertion into the document's text; nullopt when
// it is not an `add` into a mapping or sequence whose place in the text is known.
// `inserted_first` counts the elements already planned at the front of each flow sequence, so
// the next one reads back after them.
std::optional<PlannedEdit> plan_operation(const Source& source, const YamlDocument& document,
                                          const engine::PatchOperation& operation,
                                          std::map<std::string, std::size_t>& inserted_first) {
  const std::string& path = operation.path;
  const Json& value = operation.value;
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) {
    return std::nullopt;
  }
  const std::string parent = path.substr(0, slash);
  const std::string key = unescape_pointer_token(std::string_view(path).substr(slash + 1));
  const Json* container = find_at(document.value, parent);
  const std::optional<NodeMark> mark = document.lines.mark_of(parent);
  if (container == nullptr || !mark || mark->offset >= source.limit) {
    return std::nullopt;
  }
  PlannedEdit planned{TextEdit{}, operation};
  const std::size_t open = mark->offset;
  const auto column = static_cast<std::size_t>(mark->column);

  if (container->is_array() && key == "-") {
    if (mark->flow) {
      if (source.text[open] != '[') {
        return std::nullopt;
      }
      auto edit = flow_insertion(source, open, flow_json(value), [&](std::size_t indent, std::size_t step) {
        return indented(to_json_text(value, static_cast<int>(step)), indent).substr(indent);
      });
      if (!edit) {
        return std::nullopt;
      }
      planned.edit = std::move(*edit);
      planned.read_back.path = append_pointer(parent, inserted_first[parent]++);
      return planned;
    }
    if (source.text[open] != '-') {
      return std::nullopt;
    }
    const std::size_t end = source.block_end(open, column, true);
    Json items = Json::array();
    items.push_back(value);
    planned.edit = TextEdit{end, end, indented(to_yaml(items), column)};
  } else if (container->is_object() && !container->contains(key)) {
    if (mark->flow) {
      if (source.text[open] != '{') {
        return std::nullopt;
      }
      const std::string name = to_json_text(Json(key));
      auto edit = flow_insertion(source, open, name + ": " + flow_json(value),
                                 [&](std::size_t indent, std::size_t step) {
                                   return name + ": " +
                                          indented(to_json_text(value, static_cast<int>(step)),
                                                   indent)
                                              .substr(indent);
                                 });
      if (!edit) {
        return std::nullopt;
      }
      planned.edit = std::move(*edit);
      return planned;
    }
    // The key goes after the mapping's last line, at the column of its keys; a sequence value
    // takes its items' indentation from a sibling sequence (compact `- ` or indented).
    const std::size_t key_line = source.line_start(open);
    const std::string_view before = source.text.substr(key_line, open - key_line);
    if (before.find_first_not_of(" -") != std::string_view::npos) {
      return std::nullopt;
    }
    const std::size_t end = source.block_end(open, column, false);
    std::string text = std::string(column, ' ') + yaml_key(key) + ":";
    if (value.is_array() && !value.empty()) {
      std::size_t item_column = column;
      for (const auto& [sibling, sibling_value] : container->items()) {
        const std::optional<NodeMark> sibling_mark =
            document.lines.mark_of(append_pointer(parent, sibling));
        if (sibling_value.is_array() && sibling_mark && !sibling_mark->flow &&
            static_cast<std::size_t>(sibling_mark->column) >= column) {
          item_column = static_cast<std::size_t>(sibling_mark->column);
          break;
        }
      }
      text += "\n" + indented(to_yaml(value), item_column);
    } else if (value.is_object() && !value.empty()) {
      text += "\n" + indented(to_yaml(value), column + 2);
    } else {
      text += " " + flow_json(value) + "\n";
    }
    planned.edit = TextEdit{end, end, std::move(text)};
  } else {
    return std::nullopt;
  }
  // A last line without a newline gets one before the insertion.
  if (planned.edit.begin > 0 && planned.edit.begin == source.limit &&
      source.text[planned.edit.begin - 1] != '\n') {
    planned.edit.text.insert(0, "\n");
  }
  return planned;
}

// `text` with `edits` (sorted, not overlapping, offsets relative to `base`) applied.
std::string apply_edits(std::string_view text, const std::vector<TextEdit>& edits,
                        std::size_t base = 0) {
  std::string out;
  out.reserve(text.size());
  std::size_t cursor = 0;
  for (const TextEdit& edit : edits) {
    out.append(text.substr(cursor, edit.begin - base - cursor));
    out += edit.text;
    cursor = edit.end - base;
  }
  out.append(text.substr(cursor));
  return out;
}

// The documents of one chunk of a file (normally one) and the fixes of those that have any.
struct ChunkFix {
  std::size_t first_document = 0;  // index in the stream
  std::size_t document_count = 0;
  std::vector<std::pair<std::size_t, engine::JsonPatch>> patches;  // document -> combined patch
};

class FileFixer {
 public:
  FileFixer(const SourceFile& file, FixedFile& fixed, std::vector<Error>& errors)
      : file_(file), fixed_(fixed), errors_(errors) {}

  void fix(const ChunkFix& chunk) {
    const YamlDocument& first = file_.stream.documents[chunk.first_document];
    const Source source{file_.text, first.text_end};
    std::vector<std::pair<std::size_t, Json>> patched;  // document -> patched value
    std::vector<PlannedEdit> planned;
    bool surgical = true;
    for (const auto& [index, patch] : chunk.patches) {
      const YamlDocument& document = file_.stream.documents[index];
      auto result = engine::apply_patch(document.value, patch);
      if (!result) {
        Error error = result.error();
        error.location = SourceLocation{file_.path, document.first_line, ""};
        errors_.push_back(std::move(error));
        continue;
      }
      patched.emplace_back(index, std::move(result).value());
      std::map<std::string, std::size_t> inserted_first;
      for (const engine::PatchOperation& operation : patch) {
        auto edit = plan_operation(source, document, operation, inserted_first);
        surgical = surgical && edit.has_value();
        if (edit) {
          edit->document = index;
          planned.push_back(std::move(*edit));
        }
      }
    }
    if (patched.empty()) {
      return;
    }
    // In text order; insertions at one place keep the order of their operations.
    std::vector<TextEdit> edits;
    for (const PlannedEdit& edit : planned) {
      edits.push_back(edit.edit);
    }
    std::stable_sort(edits.begin(), edits.end(),
                     [](const TextEdit& a, const TextEdit& b) { return a.begin < b.begin; });
    FixedChunk fixed_chunk{{}, fixed_.edits.size(), 0};
    for (std::size_t d = 0; d < chunk.document_count; ++d) {
      fixed_chunk.documents.push_back(chunk.first_document + d);
    }
    if (surgical && reads_back(chunk, first, edits, planned)) {
      std::move(edits.begin(), edits.end(), std::back_inserter(fixed_.edits));
    } else {
      fixed_.edits.push_back(rerender(chunk, first, patched));
    }
    fixed_chunk.edit_count = fixed_.edits.size() - fixed_chunk.first_edit;
    fixed_.chunks.push_back(std::move(fixed_chunk));
  }

 private:
  // Whether the chunk with `edits` parses into exactly the patched documents: the insertions
  // read back as planned, every other value unchanged.
  bool reads_back(const ChunkFix& chunk, const YamlDocument& first,
                  const std::vector<TextEdit>& edits,
                  const std::vector<PlannedEdit>& planned) const {
    const std::string_view original =
        std::string_view(file_.text).substr(first.text_begin, first.text_end - first.text_begin);
    YamlStream stream = parse_yaml_stream(apply_edits(original, edits, first.text_begin), "");
    if (!stream.errors.empty() || stream.documents.size() != chunk.document_count) {
      return false;
    }
    for (std::size_t d = 0; d < chunk.document_count; ++d) {
      const std::size_t index = chunk.first_document + d;
      engine::JsonPatch read_back;
      for (const PlannedEdit& edit : planned) {
        if (edit.document == index) {
          read_back.push_back(edit.read_back);
        }
      }
      auto expected = engine::apply_patch(file_.stream.documents[index].value, read_back);
      if (!expected || !same_value(stream.documents[d].value, *expected)) {
        return false;
      }
    }
    return true;
  }

  // Replaces the content of the chunk (after its "---" line and leading comments) with the
  // rendering of its documents, patched where they have fixes: as JSON when the chunk was JSON.
  TextEdit rerender(const ChunkFix& chunk, const YamlDocument& first,
                    const std::vector<std::pair<std::size_t, Json>>& patched) {
    const std::size_t content = line_offset(first.text_begin, first.first_line);
    const std::size_t start = file_.text.find_first_not_of(" \t", content);
    const bool json = start < first.text_end && (file_.text[start] == '{' || file_.text[start] == '[');
    std::string text;
    for (std::size_t d = 0; d < chunk.document_count; ++d) {
      const std::size_t index = chunk.first_document + d;
      const Json* value = &file_.stream.documents[index].value;
      for (const auto& [patched_index, patched_value] : patched) {
        value = patched_index == index ? &patched_value : value;
      }
      text += d == 0 ? "" : "---\n";
      text += json ? to_json_text(*value, 2) + "\n" : to_yaml(*value);
    }
    return TextEdit{content, first.text_end, std::move(text)};
  }

  // Offset of the start of 1-based `line`, at or after `from`. Lines are counted from where the
  // previous call stopped, so a whole file costs one pass.
  std::size_t line_offset(std::size_t from, int line) {
    while (cursor_ < from) {
      cursor_line_ += file_.text[cursor_] == '\n' ? 1 : 0;
      ++cursor_;
    }
    while (cursor_line_ < line && cursor_ < file_.text.size()) {
      cursor_line_ += file_.text[cursor_] == '\n' ? 1 : 0;
      ++cursor_;
    }
    return cursor_;
  }

  const SourceFile& file_;
  FixedFile& fixed_;
  std::vector<Error>& errors_;
  std::size_t cursor_ = 0;
  int cursor_line_ = 1;
};

}  // namespace

FixOutcome apply_fixes(const ManifestSet& manifests, const AuditRun& run) {
  FixOutcome outcome;
  for (const SourceFile& file : manifests.files) {
    outcome.files.push_back(FixedFile{file.path, std::string(), {}, {}, {}});
  }
  // Evaluations come in input order: files, then documents, then List items. Group the patches
  // of each chunk of text (one document, or several sharing a chunk).
  std::vector<std::vector<ChunkFix>> chunks(manifests.files.size());
  for (const ManifestEvaluation& evaluated : run.evaluations) {
    if (evaluated.evaluation.patch.empty()) {
      continue;
    }
    const Manifest& manifest = *evaluated.manifest;
    const SourceFile& file = manifests.files[manifest.file];
    const auto& documents = file.stream.documents;
    std::vector<ChunkFix>& file_chunks = chunks[manifest.file];
    const std::size_t begin = documents[manifest.document].text_begin;
    if (file_chunks.empty() ||
        documents[file_chunks.back().first_document].text_begin != begin) {
      ChunkFix chunk;
      chunk.first_document = manifest.document;
      while (chunk.first_document > 0 && documents[chunk.first_document - 1].text_begin == begin) {
        --chunk.first_document;
      }
      while (chunk.first_document + chunk.document_count < documents.size() &&
             documents[chunk.first_document + chunk.document_count].text_begin == begin) {
        ++chunk.document_count;
      }
      file_chunks.push_back(std::move(chunk));
    }
    auto& patches = file_chunks.back().patches;
    if (patches.empty() || patches.back().first != manifest.document) {
      patches.emplace_back(manifest.document, engine::JsonPatch());
    }
    const engine::JsonPatch rebased = rebase(evaluated.evaluation.patch, manifest.base_pointer);
    patches.back().second.insert(patches.back().second.end(), rebased.begin(), rebased.end());
    // Policies that report the same fix (applied once) are told once.
    std::vector<std::string>& changes = outcome.files[manifest.file].changes;
    const std::size_t manifest_changes = changes.size();
    for (const engine::Finding& finding : evaluated.evaluation.findings) {
      if (finding.fix_enabled) {
        std::string change =
            describe(finding, file.path, manifests.line_of(manifest, finding.pointer));
        if (std::find(changes.begin() + static_cast<std::ptrdiff_t>(manifest_changes),
                      changes.end(), change) == changes.end()) {
          changes.push_back(std::move(change));
        }
      }
    }
  }
  for (std::size_t f = 0; f < manifests.files.size(); ++f) {
    FixedFile& fixed = outcome.files[f];
    FileFixer fixer(manifests.files[f], fixed, outcome.errors);
    for (const ChunkFix& chunk : chunks[f]) {
      fixer.fix(chunk);
    }
    fixed.text = apply_edits(manifests.files[f].text, fixed.edits);
  }
  return outcome;
}

namespace {

// Line starts of a text, for turning edits into line ranges.
class Lines {
 public:
  explicit Lines(std::string_view text) : text_(text) {
    starts_.push_back(0);
    for (std::size_t i = 0; i < text.size(); ++i) {
      if (text[i] == '\n' && i + 1 < text.size()) {
        starts_.push_back(i + 1);
      }
    }
  }
  [[nodiscard]] std::size_t count() const { return text_.empty() ? 0 : starts_.size(); }
  // 0-based index of the line holding `offset` (the last line for the end of the text).
  [[nodiscard]] std::size_t line_of(std::size_t offset) const {
    return static_cast<std::size_t>(std::upper_bound(starts_.begin(), starts_.end(), offset) -
                                    starts_.begin()) -
           1;
  }
  [[nodiscard]] std::size_t start(std::size_t line) const {
    return line < starts_.size() ? starts_[line] : text_.size();
  }
  [[nodiscard]] std::string_view line(std::size_t line) const {
    return text_.substr(start(line), start(line + 1) - start(line));
  }

 private:
  std::string_view text_;
  std::vector<std::size_t> starts_;
};

// Appends `line` to a hunk with its marker; a last line without a newline gets git's note.
void add_line(std::string& out, char marker, std::string_view line) {
  out += marker;
  out += line;
  if (line.empty() || line.back() != '\n') {
    out += "\n\\ No newline at end of file\n";
  }
}

// Splits `text` into lines, each with its newline (the last one may have none).
std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    end = end == std::string_view::npos ? text.size() : end + 1;
    lines.push_back(text.substr(start, end - start));
    start = end;
  }
  return lines;
}

// Edits that touch one run of whole lines: old lines [first, last) become `replacement`.
struct LineBlock {
  std::size_t first = 0;
  std::size_t last = 0;
  std::vector<TextEdit> edits;
};

}  // namespace

std::string unified_diff(const std::string& path, std::string_view original,
                         const std::vector<TextEdit>& edits) {
  if (edits.empty()) {
    return std::string();
  }
  constexpr std::size_t kContext = 3;
  const Lines lines(original);
  const std::size_t count = lines.count();
  std::vector<LineBlock> blocks;
  for (const TextEdit& edit : edits) {
    std::size_t first = lines.line_of(edit.begin);
    std::size_t last = first + 1;
    if (edit.begin == edit.end && edit.begin == lines.start(first)) {
      last = first;  // a whole-line insertion removes no line
    } else if (edit.begin == edit.end && edit.begin == original.size()) {
      // At the very end: after the last line when it ends with a newline, else on it.
      first = original.back() == '\n' ? count : first;
      last = count;
    } else if (edit.end > edit.begin) {
      last = lines.line_of(edit.end - 1) + 1;
    }
    if (!blocks.empty() && first < blocks.back().last) {
      blocks.back().last = std::max(blocks.back().last, last);
      blocks.back().edits.push_back(edit);
    } else {
      blocks.push_back(LineBlock{first, last, {edit}});
    }
  }

  // The path may come from a directory listing: escaped, the header stays two lines.
  std::string out = "--- a/" + printable(path) + "\n+++ b/" + printable(path) + "\n";
  std::ptrdiff_t shift = 0;  // lines added minus removed before the current hunk
  for (std::size_t b = 0; b < blocks.size();) {
    // A hunk: blocks less than two contexts apart, with context around them.
    std::size_t end_block = b + 1;
    while (end_block < blocks.size() &&
           blocks[end_block].first <= blocks[end_block - 1].last + 2 * kContext) {
      ++end_block;
    }
    const std::size_t from = blocks[b].first > kContext ? blocks[b].first - kContext : 0;
    const std::size_t to = std::min(count, blocks[end_block - 1].last + kContext);
    std::string body;
    std::size_t old_lines = 0;
    std::size_t new_lines = 0;
    std::size_t line = from;
    for (std::size_t k = b; k < end_block; ++k) {
      const LineBlock& block = blocks[k];
      for (; line < block.first; ++line, ++old_lines, ++new_lines) {
        add_line(body, ' ', lines.line(line));
      }
      for (; line < block.last; ++line, ++old_lines) {
        add_line(body, '-', lines.line(line));
      }
      const std::size_t base = lines.start(block.first);
      const std::string replacement = apply_edits(
          original.substr(base, lines.start(block.last) - base), block.edits, base);
      for (std::string_view added : split_lines(replacement)) {
        add_line(body, '+', added);
        ++new_lines;
      }
    }
    for (; line < to; ++line, ++old_lines, ++new_lines) {
      add_line(body, ' ', lines.line(line));
    }
    const std::size_t new_from = static_cast<std::size_t>(static_cast<std::ptrdiff_t>(from) + shift);
    auto range = [](std::size_t start, std::size_t length) {
      return std::to_string(length == 0 ? start : start + 1) + "," + std::to_string(length);
    };
    out += "@@ -" + range(from, old_lines) + " +" + range(new_from, new_lines) + " @@\n" + body;
    shift += static_cast<std::ptrdiff_t>(new_lines) - static_cast<std::ptrdiff_t>(old_lines);
    b = end_block;
  }
  return out;
}

void attach_fix_edits(const ManifestSet& manifests, AuditRun& run) {
  FixOutcome outcome = apply_fixes(manifests, run);
  // (file, document) -> the edit of its chunk
  std::map<std::pair<std::size_t, std::size_t>, std::shared_ptr<const SourceEdit>> edits;
  for (std::size_t f = 0; f < outcome.files.size(); ++f) {
    const FixedFile& fixed = outcome.files[f];
    const std::string_view original = manifests.files[f].text;
    const Lines lines(original);
    for (const FixedChunk& chunk : fixed.chunks) {
      if (chunk.edit_count == 0) {
        continue;
      }
      const auto first_edit = fixed.edits.begin() + static_cast<std::ptrdiff_t>(chunk.first_edit);
      const std::vector<TextEdit> chunk_edits(
          first_edit, first_edit + static_cast<std::ptrdiff_t>(chunk.edit_count));
      // The whole lines from the first edited one to the last, as the edits leave them.
      std::size_t begin = chunk_edits.front().begin;
      std::size_t end = begin;
      for (const TextEdit& edit : chunk_edits) {
        begin = std::min(begin, edit.begin);
        end = std::max(end, edit.end);
      }
      // Lines inserted before a line are the end of the line before them, when there is one.
      const TextEdit& first = chunk_edits.front();
      std::size_t first_line = lines.line_of(begin);
      if (first.begin == first.end && begin > 0 && begin == lines.start(first_line) &&
          first_line > 0) {
        --first_line;
      }
      const std::size_t last_line =
          std::max(first_line, end > begin ? lines.line_of(end - 1) : first_line);
      const std::size_t base = lines.start(first_line);
      SourceEdit edit;
      edit.first_line = static_cast<int>(first_line) + 1;
      edit.last_line = static_cast<int>(last_line) + 1;
      edit.text = apply_edits(original.substr(base, lines.start(last_line + 1) - base),
                              chunk_edits, base);
      while (!edit.text.empty() && (edit.text.back() == '\n' || edit.text.back() == '\r')) {
        edit.text.pop_back();
      }
      auto shared = std::make_shared<const SourceEdit>(std::move(edit));
      for (std::size_t document : chunk.documents) {
        edits.emplace(std::make_pair(f, document), shared);
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
