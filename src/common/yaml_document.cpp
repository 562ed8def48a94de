#include "topoguard/common/yaml_document.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <exception>
#include <limits>
#include <optional>
#include <sstream>
#include <unordered_map>
#include <vector>

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include "topoguard/common/printable_text.h"

namespace topoguard {

int LineIndex::line_of(std::string_view pointer) const {
  std::string key(pointer);
  while (true) {
    auto it = lines_.find(key);
    if (it != lines_.end()) {
      return it->second.line;
    }
    if (key.empty()) {
      return 0;
    }
    key.resize(key.rfind('/'));
  }
}

void LineIndex::record_mark(const std::string& pointer, NodeMark mark) {
  Entry& entry = lines_[pointer];
  if (!entry.has_mark) {
    entry.has_mark = true;
    entry.mark = mark;
  }
}

std::optional<NodeMark> LineIndex::mark_of(const std::string& pointer) const {
  auto it = lines_.find(pointer);
  if (it == lines_.end() || !it->second.has_mark) {
    return std::nullopt;
  }
  return it->second.mark;
}

namespace {

constexpr std::string_view kStrTag = "tag:yaml.org,2002:str";

std::optional<Json> resolve_integer(std::string_view text) {
  std::string_view digits = text;
  bool negative = false;
  if (!digits.empty() && (digits.front() == '-' || digits.front() == '+')) {
    negative = digits.front() == '-';
    digits.remove_prefix(1);
  }
  int base = 10;
  if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'o')) {
    if (text.front() == '-' || text.front() == '+') {
      return std::nullopt;  // the core schema has no signed hex or octal
    }
    base = digits[1] == 'x' ? 16 : 8;
    digits.remove_prefix(2);
  }
  if (digits.empty()) {
    return std::nullopt;
  }
  std::uint64_t magnitude = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), magnitude, base);
  if (end != digits.data() + digits.size()) {
    return std::nullopt;
  }
  if (ec == std::errc::result_out_of_range) {
    return std::nullopt;  // falls through to float, as Kubernetes' decoder does
  }
  if (!negative) {
    if (magnitude <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      return Json(static_cast<std::int64_t>(magnitude));
    }
    return Json(magnitude);
  }
  if (magnitude <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) + 1) {
    return Json(static_cast<std::int64_t>(0 - magnitude));
  }
  return std::nullopt;
}

std::optional<Json> resolve_float(std::string_view text) {
  if (text == ".inf" || text == ".Inf" || text == ".INF" || text == "+.inf" || text == "+.Inf" ||
      text == "+.INF") {
    return Json(std::numeric_limits<double>::infinity());
  }
  if (text == "-.inf" || text == "-.Inf" || text == "-.INF") {
    return Json(-std::numeric_limits<double>::infinity());
  }
  if (text == ".nan" || text == ".NaN" || text == ".NAN") {
    return Json(std::numeric_limits<double>::quiet_NaN());
  }
  // [-+]? ( \. [0-9]+ | [0-9]+ ( \. [0-9]* )? ) ( [eE] [-+]? [0-9]+ )?
  std::size_t i = 0;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) {
    ++i;
  }
  std::size_t integer_digits = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) != 0) {
    ++i;
    ++integer_digits;
  }
  std::size_t fraction_digits = 0;
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) != 0) {
      ++i;
      ++fraction_digits;
    }
  }
  if (integer_digits == 0 && fraction_digits == 0) {
    return std::nullopt;
  }
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '-' || text[i] == '+')) {
      ++i;
    }
    std::size_t exponent_digits = 0;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) != 0) {
      ++i;
      ++exponent_digits;
    }
    if (exponent_digits == 0) {
      return std::nullopt;
    }
  }
  if (i != text.size()) {
    return std::nullopt;
  }
  double value = 0;
  std::string_view number = text.front() == '+' ? text.substr(1) : text;
  auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (end != number.data() + number.size() || ec == std::errc::invalid_argument) {
    return std::nullopt;
  }
  return Json(value);
}

// YAML 1.2 core schema resolution of a plain (unquoted, untagged) scalar.
Json resolve_plain_scalar(const std::string& text) {
  if (text.empty() || text == "~" || text == "null" || text == "Null" || text == "NULL") {
    return Json(nullptr);
  }
  if (text == "true" || text == "True" || text == "TRUE") {
    return Json(true);
  }
  if (text == "false" || text == "False" || text == "FALSE") {
    return Json(false);
  }
  const char first = text.front();
  if ((first >= '0' && first <= '9') || first == '-' || first == '+' || first == '.') {
    if (auto integer = resolve_integer(text)) {
      return *std::move(integer);
    }
    if (auto real = resolve_float(text)) {
      return *std::move(real);
    }
  }
  return Json(text);
}

// One node of a document as yaml-cpp's parser reports it. Nodes live in one vector per chunk and
// link to their first child and next sibling by index, so building a document costs no
// allocation per node beyond its scalar text. Mapping children alternate key, value.
struct EventNode {
  enum class Kind : std::uint8_t { kNull, kScalar, kSequence, kMap, kAlias };
  // Only what conversion needs of the tag: plain scalars resolve with the core schema and a
  // plain "<<" key merges; quoted ("!") and !!str scalars stay strings.
  enum class Tag : std::uint8_t { kNonSpecific, kString, kOther };
  static constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

  Kind kind = Kind::kNull;
  Tag tag = Tag::kOther;
  bool flow = false;  // a flow ("{...}" or "[...]") mapping or sequence
  int line = 0;       // 0-based within the chunk
  int column = 0;     // 0-based
  int pos = -1;       // byte offset within the chunk
  std::uint32_t first_child = kNone;
  std::uint32_t next_sibling = kNone;
  std::uint32_t target = kNone;  // the anchored node an alias stands for
  std::string scalar;
};

// Builds EventNodes from parser events in the same single pass that bounds the number of
// events: yaml-cpp 0.7 never finishes some malformed streams ("- x\n, - y" among them, found by
// fuzzing) and emits events forever. Well-formed YAML emits at most a few events per byte, so
// a chunk whose events exceed a bound no valid chunk reaches is reported as runaway.
class ChunkBuilder final : public YAML::EventHandler {
 public:
  struct EventBudgetExceeded {};

  explicit ChunkBuilder(std::size_t text_bytes) : event_budget_(4 * text_bytes + 64) {}

  void OnDocumentStart(const YAML::Mark& mark) override {
    spend(mark);
    roots_.push_back(EventNode::kNone);
    anchors_.clear();  // anchors are scoped to their document
  }
  void OnDocumentEnd() override { spend(); }

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    spend(mark);
    add(EventNode::Kind::kNull, mark, EventNode::Tag::kOther, anchor);
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    spend(mark);
    const std::uint32_t alias =
        add(EventNode::Kind::kAlias, mark, EventNode::Tag::kOther, YAML::NullAnchor);
    // The parser rejects aliases to unknown anchors before reporting them.
    nodes_[alias].target = anchors_.at(anchor);
  }
  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    spend(mark);
    EventNode::Tag kind = EventNode::Tag::kOther;
    if (tag == "?") {
      kind = EventNode::Tag::kNonSpecific;
    } else if (tag == "!" || tag == kStrTag) {
      kind = EventNode::Tag::kString;
    }
    nodes_[add(EventNode::Kind::kScalar, mark, kind, anchor)].scalar = value;
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value style) override {
    open(EventNode::Kind::kSequence, mark, anchor, style);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value style) override {
    open(EventNode::Kind::kMap, mark, anchor, style);
  }
  void OnMapEnd() override { close(); }

  [[nodiscard]] const std::vector<EventNode>& nodes() const { return nodes_; }
  // The root of each document of the chunk, kNone for a document without content.
  [[nodiscard]] const std::vector<std::uint32_t>& roots() const { return roots_; }
  // 0-based line of the last event with a position: where the parser stopped progressing.
  [[nodiscard]] int last_line() const { return last_line_; }

 private:
  struct OpenCollection {
    std::uint32_t node;
    std::uint32_t last_child;
  };

  std::uint32_t add(EventNode::Kind kind, const YAML::Mark& mark, EventNode::Tag tag,
                    YAML::anchor_t anchor) {
    const auto index = static_cast<std::uint32_t>(nodes_.size());
    EventNode& node = nodes_.emplace_back();
    node.kind = kind;
    node.tag = tag;
    node.line = mark.line;
    node.column = mark.column;
    node.pos = mark.pos;
    if (open_.empty()) {
      roots_.back() = index;
    } else {
      OpenCollection& parent = open_.back();
      if (parent.last_child == EventNode::kNone) {
        nodes_[parent.node].first_child = index;
      } else {
        nodes_[parent.last_child].next_sibling = index;
      }
      parent.last_child = index;
    }
    if (anchor != YAML::NullAnchor) {
      anchors_[anchor] = index;  // registered before its content, as yaml-cpp's NodeBuilder does
    }
    return index;
  }

  void open(EventNode::Kind kind, const YAML::Mark& mark, YAML::anchor_t anchor,
            YAML::EmitterStyle::value style) {
    spend(mark);
    const std::uint32_t index = add(kind, mark, EventNode::Tag::kOther, anchor);
    nodes_[index].flow = style == YAML::EmitterStyle::Flow;
    open_.push_back({index, EventNode::kNone});
  }
  void close() {
    spend();
    open_.pop_back();
  }

  void spend(const YAML::Mark& mark) {
    if (!mark.is_null()) {
      last_line_ = mark.line;
    }
    spend();
  }
  void spend() {
    if (++events_ > event_budget_) {
      throw EventBudgetExceeded{};
    }
  }

  std::size_t event_budget_;
  std::size_t events_ = 0;
  int last_line_ = 0;
  std::vector<EventNode> nodes_;
  std::vector<std::uint32_t> roots_;
  std::vector<OpenCollection> open_;
  std::unordered_map<YAML::anchor_t, std::uint32_t> anchors_;
};

class Converter {
 public:
  Converter(const std::vector<EventNode>& nodes, const ParseLimits& limits, int line_offset,
            std::size_t offset, LineIndex& lines)
      : nodes_(nodes), limits_(limits), line_offset_(line_offset), offset_(offset), lines_(lines) {}

  Json convert(std::uint32_t index, const std::string& pointer, int depth) {
    const EventNode& node = resolve(index);
    if (++converted_ > limits_.max_nodes) {
      fail(ErrorCode::kTooLarge,
           "document has more than " + std::to_string(limits_.max_nodes) +
               " nodes (after alias expansion)",
           node, pointer);
    }
    lines_.record(pointer, line_of(node));
    switch (node.kind) {
      case EventNode::Kind::kNull:
      case EventNode::Kind::kAlias:
        return Json(nullptr);
      case EventNode::Kind::kScalar:
        return convert_scalar(node);
      case EventNode::Kind::kSequence:
        record_mark(node, pointer);
        return convert_sequence(node, pointer, depth);
      case EventNode::Kind::kMap:
        record_mark(node, pointer);
        return convert_map(node, pointer, depth);
    }
    return Json(nullptr);
  }

  struct Failure {
    Error error;
  };

 private:
  // An alias is its anchored node (expanded at every use), with that node's position.
  [[nodiscard]] const EventNode& resolve(std::uint32_t index) const {
    const EventNode& node = nodes_[index];
    return node.kind == EventNode::Kind::kAlias ? nodes_[node.target] : node;
  }

  [[nodiscard]] int line_of(const EventNode& node) const { return node.line + 1 + line_offset_; }

  void record_mark(const EventNode& node, const std::string& pointer) {
    if (node.pos >= 0) {
      lines_.record_mark(
          pointer, NodeMark{offset_ + static_cast<std::size_t>(node.pos), node.column, node.flow});
    }
  }

  [[noreturn]] void fail(ErrorCode code, std::string message, const EventNode& node,
                         const std::string& pointer) const {
    throw Failure{Error{code, std::move(message), SourceLocation{"", line_of(node), pointer}}};
  }

  void check_depth(int depth, const EventNode& node, const std::string& pointer) const {
    if (depth >= limits_.max_depth) {
      fail(ErrorCode::kTooDeep,
           "document nests deeper than " + std::to_string(limits_.max_depth) + " levels", node,
           pointer);
    }
  }

  static Json convert_scalar(const EventNode& node) {
    if (node.tag == EventNode::Tag::kString) {
      return Json(node.scalar);
    }
    return resolve_plain_scalar(node.scalar);
  }

  Json convert_sequence(const EventNode& node, const std::string& pointer, int depth) {
    check_depth(depth, node, pointer);
    Json array = Json::array();
    std::size_t index = 0;
    for (std::uint32_t item = node.first_child; item != EventNode::kNone;
         item = nodes_[item].next_sibling) {
      array.push_back(convert(item, append_pointer(pointer, index), depth + 1));
      ++index;
    }
    return array;
  }

  Json convert_map(const EventNode& node, const std::string& pointer, int depth) {
    check_depth(depth, node, pointer);
    Json object = Json::object();
    std::vector<std::uint32_t> merges;
    for (std::uint32_t key_index = node.first_child; key_index != EventNode::kNone;) {
      const std::uint32_t value_index = nodes_[key_index].next_sibling;
      const EventNode& key = resolve(key_index);
      if (key.kind != EventNode::Kind::kScalar) {
        fail(ErrorCode::kInvalidYaml, "mapping keys must be scalars", key, pointer);
      }
      key_index = nodes_[value_index].next_sibling;
      const std::string& name = key.scalar;
      if (name == "<<" && key.tag == EventNode::Tag::kNonSpecific) {
        merges.push_back(value_index);
        continue;
      }
      std::string child_pointer = append_pointer(pointer, name);
      if (object.contains(name)) {
        fail(ErrorCode::kDuplicateKey, "duplicate key \"" + name + "\"", key, child_pointer);
      }
      lines_.record(child_pointer, line_of(key));
      Json value = convert(value_index, child_pointer, depth + 1);
      object[name] = std::move(value);
      // The key's line is more useful than the value's for block values.
      lines_.record(child_pointer, line_of(key));
    }
    for (const std::uint32_t merge : merges) {
      apply_merge(object, merge, pointer, depth);
    }
    return object;
  }

  // `<<: *anchor` or `<<: [*a, *b]`: keys not already present are copied in.
  void apply_merge(Json& object, std::uint32_t merge_index, const std::string& pointer, int depth) {
    const EventNode& merge = resolve(merge_index);
    std::vector<std::uint32_t> sources;
    if (merge.kind == EventNode::Kind::kMap) {
      sources.push_back(merge_index);
    } else if (merge.kind == EventNode::Kind::kSequence) {
      for (std::uint32_t item = merge.first_child; item != EventNode::kNone;
           item = nodes_[item].next_sibling) {
        sources.push_back(item);
      }
    }
    for (const std::uint32_t source_index : sources) {
      const EventNode& source = resolve(source_index);
      if (source.kind != EventNode::Kind::kMap) {
        fail(ErrorCode::kInvalidYaml, "merge key \"<<\" needs a mapping or a list of mappings",
             source, pointer);
      }
      Json merged = convert_map(source, pointer, depth);
      for (auto& [name, value] : merged.items()) {
        if (!object.contains(name)) {
          object[name] = value;
        }
      }
    }
  }

  const std::vector<EventNode>& nodes_;
  const ParseLimits& limits_;
  int line_offset_;
  std::size_t offset_;  // of the chunk in the stream, so that marks are stream offsets
  LineIndex& lines_;
  std::size_t converted_ = 0;
};

bool is_document_marker(std::string_view line, std::string_view marker) {
  if (line.substr(0, 3) != marker) {
    return false;
  }
  return line.size() == 3 || line[3] == ' ' || line[3] == '\t' || line[3] == '\r';
}

struct Chunk {
  std::size_t begin = 0;
  std::size_t end = 0;
  int first_line = 1;  // 1-based line of `begin`
};

// Splits a stream at "---" lines (and after "..." lines). Each chunk keeps its separator line
// so that yaml-cpp sees a well-formed document and its marks stay relative to the chunk.
std::vector<Chunk> split_documents(std::string_view text) {
  std::vector<Chunk> chunks;
  Chunk current;
  std::size_t position = 0;
  int line_number = 1;
  bool after_end_marker = false;
  while (position < text.size()) {
    std::size_t line_end = text.find('\n', position);
    std::size_t next = line_end == std::string_view::npos ? text.size() : line_end + 1;
    std::string_view line = text.substr(position, next - position);
    if (line.size() > 0 && line.back() == '\n') {
      line.remove_suffix(1);
    }
    if ((is_document_marker(line, "---") || after_end_marker) && position > current.begin) {
      current.end = position;
      chunks.push_back(current);
      current = Chunk{position, position, line_number};
    }
    after_end_marker = is_document_marker(line, "...");
    position = next;
    ++line_number;
  }
  current.end = text.size();
  if (current.end > current.begin) {
    chunks.push_back(current);
  }
  return chunks;
}

}  // namespace

YamlStream parse_yaml_stream(std::string_view text, const std::string& file_name,
                             const ParseLimits& limits) {
  YamlStream stream;
  int index = 0;
  for (const Chunk& chunk : split_documents(text)) {
    std::string chunk_text(text.substr(chunk.begin, chunk.end - chunk.begin));
    const int line_offset = chunk.first_line - 1;
    try {
      // The whole chunk is parsed before any document of it is converted, so that a syntax error
      // or a runaway parser anywhere in it is the chunk's one error (as with yaml-cpp's LoadAll).
      ChunkBuilder builder(chunk_text.size());
      try {
        std::istringstream input(chunk_text);
        YAML::Parser parser(input);
        while (parser.HandleNextDocument(builder)) {
        }
      } catch (const ChunkBuilder::EventBudgetExceeded&) {
        stream.errors.push_back(
            Error{ErrorCode::kInvalidYaml,
                  "YAML: malformed stream (the YAML parser does not terminate on it)",
                  {file_name, builder.last_line() + 1 + line_offset, ""}});
        ++index;
        continue;
      }
      for (const std::uint32_t root : builder.roots()) {
        if (root == EventNode::kNone || builder.nodes()[root].kind == EventNode::Kind::kNull) {
          continue;  // an empty document (comments only, or a bare separator)
        }
        YamlDocument document;
        document.index = index++;
        document.first_line = builder.nodes()[root].line + 1 + line_offset;
        document.text_begin = chunk.begin;
        document.text_end = chunk.end;
        Converter converter(builder.nodes(), limits, line_offset, chunk.begin, document.lines);
        document.value = converter.convert(root, "", 0);
        stream.documents.push_back(std::move(document));
      }
    } catch (const Converter::Failure& failure) {
      Error error = failure.error;
      error.location.file = file_name;
      stream.errors.push_back(std::move(error));
      ++index;
    } catch (const YAML::Exception& exception) {
      int line = exception.mark.is_null() ? chunk.first_line : exception.mark.line + 1 + line_offset;
      ErrorCode code = dynamic_cast<const YAML::DeepRecursion*>(&exception) != nullptr
                           ? ErrorCode::kTooDeep
                           : ErrorCode::kInvalidYaml;
      stream.errors.push_back(Error{code, "YAML: " + exception.msg, {file_name, line, ""}});
      ++index;
    } catch (const std::exception& exception) {
      stream.errors.push_back(
          Error{ErrorCode::kInvalidYaml, exception.what(), {file_name, chunk.first_line, ""}});
      ++index;
    }
  }
  return stream;
}

namespace {

bool needs_quotes(const std::string& text) {
  if (text.empty()) {
    return true;
  }
  return !resolve_plain_scalar(text).is_string();
}

bool is_short_scalar_list(const Json& array) {
  std::size_t length = 0;
  for (const Json& item : array) {
    if (item.is_structured() || (item.is_string() && item.get_ref<const std::string&>().find(
                                                         '\n') != std::string::npos)) {
      return false;
    }
    length += item.is_string() ? item.get_ref<const std::string&>().size() + 2 : 8;
  }
  return length <= 60;
}

void emit(YAML::Emitter& out, const Json& value) {
  switch (value.type()) {
    case Json::value_t::object:
      if (value.empty()) {
        out << YAML::Flow << YAML::BeginMap << YAML::EndMap;
        return;
      }
      out << YAML::BeginMap;
      for (const auto& [key, item] : value.items()) {
        out << YAML::Key;
        if (needs_quotes(key)) {
          out << YAML::DoubleQuoted;
        }
        out << key << YAML::Value;
        emit(out, item);
      }
      out << YAML::EndMap;
      return;
    case Json::value_t::array:
      if (value.empty()) {
        out << YAML::Flow << YAML::BeginSeq << YAML::EndSeq;
        return;
      }
      if (is_short_scalar_list(value)) {
        out << YAML::Flow;  // [gpu, nic] reads better than one item per line
      }
      out << YAML::BeginSeq;
      for (const Json& item : value) {
        emit(out, item);
      }
      out << YAML::EndSeq;
      return;
    case Json::value_t::string: {
      const auto& text = value.get_ref<const std::string&>();
      if (printable_lines(text) != text) {
        // Control characters, bidi overrides or invalid UTF-8: escaped in a double-quoted
        // scalar, never written raw into a block (where YAML cannot carry them and a terminal
        // would act on them).
        out << YAML::EscapeNonAscii << YAML::DoubleQuoted << text;
      } else if (text.find('\n') != std::string::npos) {
        out << YAML::Literal << text;
      } else if (needs_quotes(text)) {
        out << YAML::DoubleQuoted << text;
      } else {
        out << text;
      }
      return;
    }
    case Json::value_t::boolean:
      out << value.get<bool>();
      return;
    case Json::value_t::number_integer:
      out << value.get<std::int64_t>();
      return;
    case Json::value_t::number_unsigned:
      out << value.get<std::uint64_t>();
      return;
    case Json::value_t::number_float: {
      const double number = value.get<double>();
      if (std::isnan(number)) {
        out << ".nan";
      } else if (std::isinf(number)) {
        out << (number > 0 ? ".inf" : "-.inf");
      } else {
        out << value.dump();
      }
      return;
    }
    case Json::value_t::null:
    case Json::value_t::binary:
    case Json::value_t::discarded:
      out << YAML::Null;
      return;
  }
}

}  // namespace

std::string to_yaml(const Json& value) {
  YAML::Emitter out;
  out.SetIndent(2);
  out.SetSeqFormat(YAML::Block);
  out.SetBoolFormat(YAML::TrueFalseBool);
  out.SetBoolFormat(YAML::LowerCase);
  emit(out, value);
  std::string text = out.c_str();
  text += '\n';
  return text;
}

}  // namespace topoguard
