#include "topoguard/common/yaml_document.h"

#include <charconv>
#include <cmath>
#include <exception>
#include <limits>
#include <optional>
#include <sstream>

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

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

class Converter {
 public:
  Converter(const ParseLimits& limits, int line_offset, std::size_t offset, LineIndex& lines)
      : limits_(limits), line_offset_(line_offset), offset_(offset), lines_(lines) {}

  Json convert(const YAML::Node& node, const std::string& pointer, int depth) {
    if (++nodes_ > limits_.max_nodes) {
      fail(ErrorCode::kTooLarge,
           "document has more than " + std::to_string(limits_.max_nodes) +
               " nodes (after alias expansion)",
           node, pointer);
    }
    lines_.record(pointer, line_of(node));
    switch (node.Type()) {
      case YAML::NodeType::Undefined:
      case YAML::NodeType::Null:
        return Json(nullptr);
      case YAML::NodeType::Scalar:
        return convert_scalar(node);
      case YAML::NodeType::Sequence:
        record_mark(node, pointer);
        return convert_sequence(node, pointer, depth);
      case YAML::NodeType::Map:
        record_mark(node, pointer);
        return convert_map(node, pointer, depth);
    }
    return Json(nullptr);
  }

  struct Failure {
    Error error;
  };

 private:
  int line_of(const YAML::Node& node) const { return node.Mark().line + 1 + line_offset_; }

  void record_mark(const YAML::Node& node, const std::string& pointer) {
    const YAML::Mark mark = node.Mark();
    if (mark.pos >= 0) {
      lines_.record_mark(pointer, NodeMark{offset_ + static_cast<std::size_t>(mark.pos),
                                           mark.column,
                                           node.Style() == YAML::EmitterStyle::Flow});
    }
  }

  [[noreturn]] void fail(ErrorCode code, std::string message, const YAML::Node& node,
                         const std::string& pointer) const {
    throw Failure{Error{code, std::move(message), SourceLocation{"", line_of(node), pointer}}};
  }

  void check_depth(int depth, const YAML::Node& node, const std::string& pointer) const {
    if (depth >= limits_.max_depth) {
      fail(ErrorCode::kTooDeep,
           "document nests deeper than " + std::to_string(limits_.max_depth) + " levels", node,
           pointer);
    }
  }

  static Json convert_scalar(const YAML::Node& node) {
    const std::string& tag = node.Tag();
    if (tag == "!" || tag == kStrTag) {
      return Json(node.Scalar());
    }
    return resolve_plain_scalar(node.Scalar());
  }

  Json convert_sequence(const YAML::Node& node, const std::string& pointer, int depth) {
    check_depth(depth, node, pointer);
    Json array = Json::array();
    std::size_t index = 0;
    for (const auto& item : node) {
      array.push_back(convert(item, append_pointer(pointer, index), depth + 1));
      ++index;
    }
    return array;
  }

  Json convert_map(const YAML::Node& node, const std::string& pointer, int depth) {
    check_depth(depth, node, pointer);
    Json object = Json::object();
    std::vector<YAML::Node> merges;
    for (const auto& entry : node) {
      const YAML::Node& key = entry.first;
      if (!key.IsScalar()) {
        fail(ErrorCode::kInvalidYaml, "mapping keys must be scalars", key, pointer);
      }
      const std::string& name = key.Scalar();
      if (name == "<<" && key.Tag() == "?") {
        merges.push_back(entry.second);
        continue;
      }
      std::string child_pointer = append_pointer(pointer, name);
      if (object.contains(name)) {
        fail(ErrorCode::kDuplicateKey, "duplicate key \"" + name + "\"", key, child_pointer);
      }
      lines_.record(child_pointer, line_of(key));
      Json value = convert(entry.second, child_pointer, depth + 1);
      object[name] = std::move(value);
      // The key's line is more useful than the value's for block values.
      lines_.record(child_pointer, line_of(key));
    }
    for (const YAML::Node& merge : merges) {
      apply_merge(object, merge, pointer, depth);
    }
    return object;
  }

  // `<<: *anchor` or `<<: [*a, *b]`: keys not already present are copied in.
  void apply_merge(Json& object, const YAML::Node& merge, const std::string& pointer, int depth) {
    std::vector<YAML::Node> sources;
    if (merge.IsMap()) {
      sources.push_back(merge);
    } else if (merge.IsSequence()) {
      for (const auto& item : merge) {
        sources.push_back(item);
      }
    }
    for (const YAML::Node& source : sources) {
      if (!source.IsMap()) {
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

  const ParseLimits& limits_;
  int line_offset_;
  std::size_t offset_;  // of the chunk in the stream, so that marks are stream offsets
  LineIndex& lines_;
  std::size_t nodes_ = 0;
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

// yaml-cpp 0.7 never finishes some malformed streams ("- x\n, - y" among them, found by
// fuzzing): its parser emits events forever and LoadAll() builds nodes until memory runs out.
// Well-formed YAML emits at most a few events per byte, so a first pass counts the events of a
// chunk without building anything and stops at a bound no valid chunk reaches.
class EventBudget final : public YAML::EventHandler {
 public:
  struct Exceeded {};

  explicit EventBudget(std::size_t text_bytes) : budget_(4 * text_bytes + 64) {}

  void OnDocumentStart(const YAML::Mark& mark) override { spend(mark); }
  void OnDocumentEnd() override { spend(); }
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { spend(mark); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { spend(mark); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                const std::string&) override {
    spend(mark);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    spend(mark);
  }
  void OnSequenceEnd() override { spend(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    spend(mark);
  }
  void OnMapEnd() override { spend(); }

  // 0-based line of the last event with a position: where the parser stopped progressing.
  [[nodiscard]] int last_line() const { return last_line_; }

 private:
  void spend(const YAML::Mark& mark) {
    if (!mark.is_null()) {
      last_line_ = mark.line;
    }
    spend();
  }
  void spend() {
    if (++events_ > budget_) {
      throw Exceeded{};
    }
  }

  std::size_t budget_;
  std::size_t events_ = 0;
  int last_line_ = 0;
};

// The 0-based line where the parser runs away on `text`, or nullopt when it terminates (syntax
// errors are left to LoadAll() to report).
std::optional<int> runaway_line(const std::string& text) {
  std::istringstream input(text);
  YAML::Parser parser(input);
  EventBudget budget(text.size());
  try {
    while (parser.HandleNextDocument(budget)) {
    }
  } catch (const EventBudget::Exceeded&) {
    return budget.last_line();
  } catch (const std::exception&) {
    return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

YamlStream parse_yaml_stream(std::string_view text, const std::string& file_name,
                             const ParseLimits& limits) {
  YamlStream stream;
  int index = 0;
  for (const Chunk& chunk : split_documents(text)) {
    std::string chunk_text(text.substr(chunk.begin, chunk.end - chunk.begin));
    const int line_offset = chunk.first_line - 1;
    if (const std::optional<int> line = runaway_line(chunk_text)) {
      stream.errors.push_back(Error{ErrorCode::kInvalidYaml,
                                    "YAML: malformed stream (the YAML parser does not terminate on it)",
                                    {file_name, *line + 1 + line_offset, ""}});
      ++index;
      continue;
    }
    try {
      std::vector<YAML::Node> nodes = YAML::LoadAll(chunk_text);
      for (const YAML::Node& node : nodes) {
        if (!node.IsDefined() || node.IsNull()) {
          continue;  // an empty document (comments only, or a bare separator)
        }
        YamlDocument document;
        document.index = index++;
        document.first_line = node.Mark().line + 1 + line_offset;
        document.text_begin = chunk.begin;
        document.text_end = chunk.end;
        Converter converter(limits, line_offset, chunk.begin, document.lines);
        document.value = converter.convert(node, "", 0);
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
      if (text.find('\n') != std::string::npos) {
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
