#include "topoguard/admission/json_reader.h"

#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <utility>
#include <vector>

namespace topoguard::admission {
namespace {

// Which container of the review the builder is in, as far as the filter below cares.
enum class Scope : std::uint8_t { kRoot, kRequest, kObject, kObjectMetadata, kOther };

// Whether the webhook ever reads `key` of a container in `scope`. The review is ~3.5 KB of which
// the API server's bookkeeping (resource, requestKind, userInfo, options, the object's
// managedFields) is a large part; building a tree of it only to free it again was the largest
// single cost of a request.
bool keeps(Scope scope, std::string_view key) {
  switch (scope) {
    case Scope::kRoot:
      return key == "apiVersion" || key == "kind" || key == "request";
    case Scope::kRequest:
      return key == "uid" || key == "kind" || key == "operation" || key == "namespace" ||
             key == "name" || key == "dryRun" || key == "object" || key == "oldObject";
    case Scope::kObjectMetadata:
      // Server-side apply bookkeeping; no rule looks at it and no patch touches it.
      return key != "managedFields";
    case Scope::kObject:
    case Scope::kOther:
      return true;
  }
  return true;
}

Scope child_scope(Scope scope, std::string_view key) {
  if (scope == Scope::kRoot && key == "request") {
    return Scope::kRequest;
  }
  if (scope == Scope::kRequest && key == "object") {
    return Scope::kObject;
  }
  if (scope == Scope::kObject && key == "metadata") {
    return Scope::kObjectMetadata;
  }
  return Scope::kOther;
}

// Deeper than Kubernetes objects usually nest: the reader's stacks are reserved this deep so that
// a request does not grow them step by step.
constexpr std::size_t kTypicalDepth = 16;
// As many elements as most arrays of a review have.
constexpr std::size_t kTypicalElements = 4;

// Builds the tree from the reader's events while dropping what keeps() rejects and refusing
// nesting deeper than a limit (counted over dropped parts too, so a 4 MiB run of "[" costs one
// pass and no allocation). Values are moved into their slots; a pointer into a container (or
// into an object's pending members) is only held while nothing is added to that container.
class TreeBuilder {
 public:
  TreeBuilder(int max_depth, JsonFilter filter)
      : max_depth_(max_depth), root_scope_(filter == JsonFilter::kNone ? Scope::kOther
                                                                       : Scope::kRoot) {
    stack_.reserve(kTypicalDepth);
    members_.reserve(kTypicalDepth);
  }

  bool null() { return scalar(nullptr); }
  bool boolean(bool value) { return scalar(value); }
  bool number_integer(Json::number_integer_t value) { return scalar(value); }
  bool number_unsigned(Json::number_unsigned_t value) { return scalar(value); }
  bool number_float(Json::number_float_t value) { return scalar(value); }
  // Copied, not moved: the reader's buffer keeps its capacity for the next string, and the copy
  // is one allocation of the exact size.
  bool string(const Json::string_t& value) { return scalar(value); }
  bool start_object(std::size_t /*size*/) { return open(Json::value_t::object); }
  bool end_object() { return close(); }
  bool start_array(std::size_t /*size*/) { return open(Json::value_t::array); }
  bool end_array() { return close(); }
  bool key(const Json::string_t& key) {
    if (skip_ > 0) {
      return true;
    }
    const Frame& top = stack_.back();
    if (!keeps(top.scope, key)) {
      drop_next_ = true;
      return true;
    }
    next_scope_ = child_scope(top.scope, key);
    slot_ = &members_[top.level].emplace_back(key, Json()).second;
    return true;
  }
  [[nodiscard]] bool too_deep() const { return too_deep_; }
  [[nodiscard]] Json& root() { return root_; }

 private:
  struct Frame {
    Json* value;
    Scope scope;
    std::size_t level;  // objects: their index into members_
  };
  using Members = std::vector<std::pair<std::string, Json>>;

  // Where the next value goes: the root, the end of the open array or the slot of the last key.
  Json* place(Json&& value) {
    if (stack_.empty()) {
      root_ = std::move(value);
      return &root_;
    }
    Json& top = *stack_.back().value;
    if (top.is_array()) {
      auto& elements = top.get_ref<Json::array_t&>();
      if (elements.empty()) {
        // Room for a few at once: growing 1, 2, 4 was a third of the reader's allocations.
        elements.reserve(kTypicalElements);
      }
      elements.push_back(std::move(value));
      return &elements.back();
    }
    *slot_ = std::move(value);
    return slot_;
  }

  // Whether the value that starts now is dropped; consumes a pending member drop.
  bool drops_value() {
    if (skip_ > 0) {
      return true;
    }
    if (drop_next_) {
      drop_next_ = false;
      return true;
    }
    return false;
  }

  // The Json is only made for values that are kept.
  template <typename T>
  bool scalar(const T& value) {
    if (!drops_value()) {
      place(Json(value));
    }
    return true;
  }

  bool open(Json::value_t type) {
    if (++depth_ > max_depth_) {
      too_deep_ = true;
      return false;
    }
    if (drops_value()) {
      ++skip_;
      return true;
    }
    const Scope scope = stack_.empty() ? root_scope_
                        : stack_.back().value->is_array() ? Scope::kOther
                                                           : next_scope_;
    std::size_t level = 0;
    if (type == Json::value_t::object) {
      // An object's members wait in members_[level] (one vector per open object, reused) until
      // it closes: ordered_json keeps members in a vector of pair<const string, Json>, which
      // copies every key each time it grows, and looks each key up as it is inserted.
      level = objects_open_++;
      if (members_.size() < objects_open_) {
        members_.emplace_back();
      }
    }
    stack_.push_back({place(Json(type)), scope, level});
    return true;
  }

  bool close() {
    --depth_;
    if (skip_ > 0) {
      --skip_;
      return true;
    }
    const Frame& top = stack_.back();
    if (top.value->is_object()) {
      Members& members = members_[top.level];
      auto& map = top.value->get_ref<Json::object_t&>();
      map.reserve(members.size());
      for (auto& [key, value] : members) {
        // A repeated key keeps its first position and its last value, as in nlohmann's parser.
        if (auto existing = map.find(key); existing != map.end()) {
          existing->second = std::move(value);
        } else {
          static_cast<Json::object_t::Container&>(map).emplace_back(std::move(key),
                                                                    std::move(value));
        }
      }
      members.clear();
      --objects_open_;
    }
    stack_.pop_back();
    return true;
  }

  int max_depth_;
  int depth_ = 0;
  int skip_ = 0;  // > 0: inside a dropped container, this many levels deep
  bool drop_next_ = false;
  bool too_deep_ = false;
  Scope root_scope_;
  Scope next_scope_ = Scope::kOther;
  Json* slot_ = nullptr;
  std::vector<Frame> stack_;
  std::vector<Members> members_;  // moving this vector keeps its elements' buffers in place
  std::size_t objects_open_ = 0;
  Json root_;
};

// Byte classes for the string scanner: 0 = copied as is, 1 = ends the run ('"', '\\', control
// characters, non-ASCII).
constexpr std::array<std::uint8_t, 256> kStringStops = [] {
  std::array<std::uint8_t, 256> table{};
  for (std::size_t c = 0; c < 256; ++c) {
    table[c] = (c < 0x20 || c == '"' || c == '\\' || c >= 0x80) ? 1 : 0;
  }
  return table;
}();

// The high bit of each byte of `word` (eight bytes of input, first byte lowest) that ends a run
// (the kStringStops bytes), by the "has a zero byte" / "has a byte less than n" bit tricks. Those
// can also flag a byte above a flagged one, never below: the lowest flag is exact.
constexpr std::uint64_t stop_bits(std::uint64_t word) {
  constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
  constexpr std::uint64_t kHighBits = 0x8080808080808080ULL;
  const auto zero_bytes = [](std::uint64_t x) { return (x - kOnes) & ~x & kHighBits; };
  const std::uint64_t control = (word - kOnes * 0x20U) & ~word & kHighBits;
  const std::uint64_t quote = zero_bytes(word ^ (kOnes * static_cast<std::uint8_t>('"')));
  const std::uint64_t backslash = zero_bytes(word ^ (kOnes * static_cast<std::uint8_t>('\\')));
  return control | quote | backslash | (word & kHighBits);
}

// The first byte at or after `p` that ends a run of plain string characters, or `end`. Eight
// bytes at a time where bytes load little-endian: the byte loop alone was a tenth of a request.
const char* plain_run_end(const char* p, const char* end) {
  if constexpr (std::endian::native == std::endian::little) {
    while (end - p >= 8) {
      std::uint64_t word = 0;
      std::memcpy(&word, p, sizeof(word));
      if (const std::uint64_t stops = stop_bits(word); stops != 0) {
        return p + std::countr_zero(stops) / 8;
      }
      p += 8;
    }
  }
  while (p != end && kStringStops[static_cast<unsigned char>(*p)] == 0) {
    ++p;
  }
  return p;
}

void append_utf8(std::string& out, std::uint32_t code_point) {
  if (code_point < 0x80) {
    out += static_cast<char>(code_point);
  } else if (code_point < 0x800) {
    out += static_cast<char>(0xC0U | (code_point >> 6U));
    out += static_cast<char>(0x80U | (code_point & 0x3FU));
  } else if (code_point < 0x10000) {
    out += static_cast<char>(0xE0U | (code_point >> 12U));
    out += static_cast<char>(0x80U | ((code_point >> 6U) & 0x3FU));
    out += static_cast<char>(0x80U | (code_point & 0x3FU));
  } else {
    out += static_cast<char>(0xF0U | (code_point >> 18U));
    out += static_cast<char>(0x80U | ((code_point >> 12U) & 0x3FU));
    out += static_cast<char>(0x80U | ((code_point >> 6U) & 0x3FU));
    out += static_cast<char>(0x80U | (code_point & 0x3FU));
  }
}

// Room for most strings of a review (annotations can be longer) so the buffer rarely grows.
constexpr std::size_t kTypicalStringSize = 256;

// The recursive-descent grammar of RFC 8259 without recursion: an explicit stack of open
// containers, so nesting costs no native stack.
class Reader {
 public:
  Reader(std::string_view text, TreeBuilder& builder)
      : begin_(text.data()), p_(text.data()), end_(text.data() + text.size()),
        builder_(builder) {
    open_.reserve(kTypicalDepth);
    buffer_.reserve(kTypicalStringSize);
  }

  // false on a syntax error (error_offset()) or when the builder stopped (too deep).
  bool read() {
    // nlohmann skips a UTF-8 byte order mark (and rejects a partial one).
    if (p_ != end_ && static_cast<unsigned char>(*p_) == 0xEF) {
      if (end_ - p_ < 3 || static_cast<unsigned char>(p_[1]) != 0xBB ||
          static_cast<unsigned char>(p_[2]) != 0xBF) {
        return fail();
      }
      p_ += 3;
    }
    while (true) {
      const Step step = value();
      if (step == Step::kFailed) {
        return false;
      }
      if (step == Step::kOpened) {
        continue;  // the first element or member value comes next
      }
      // After a complete value: close containers, or go on to the next member/element.
      bool next = false;
      while (!next) {
        skip_whitespace();
        if (open_.empty()) {
          return p_ == end_ ? true : fail();
        }
        if (p_ == end_) {
          return fail();
        }
        const char c = *p_;
        const bool in_object = open_.back() == '{';
        if (c == ',') {
          ++p_;
          if (in_object && !member_key()) {
            return false;
          }
          next = true;
        } else if (c == (in_object ? '}' : ']')) {
          ++p_;
          open_.pop_back();
          if (!(in_object ? builder_.end_object() : builder_.end_array())) {
            return false;
          }
        } else {
          return fail();
        }
      }
    }
  }

  [[nodiscard]] std::size_t error_offset() const {
    return static_cast<std::size_t>(p_ - begin_);
  }

 private:
  static bool fail() { return false; }

  void skip_whitespace() {
    while (p_ != end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) {
      ++p_;
    }
  }

  enum class Step { kFailed, kDone, kOpened };

  // One value, or the opening of a non-empty container (its first member key read).
  Step value() {
    skip_whitespace();
    if (p_ == end_) {
      return result(fail());
    }
    switch (*p_) {
      case '{':
        ++p_;
        if (!builder_.start_object(0)) {
          return Step::kFailed;
        }
        skip_whitespace();
        if (p_ != end_ && *p_ == '}') {
          ++p_;
          return result(builder_.end_object());
        }
        open_.push_back('{');
        return member_key() ? Step::kOpened : Step::kFailed;
      case '[':
        ++p_;
        if (!builder_.start_array(0)) {
          return Step::kFailed;
        }
        skip_whitespace();
        if (p_ != end_ && *p_ == ']') {
          ++p_;
          return result(builder_.end_array());
        }
        open_.push_back('[');
        return Step::kOpened;
      case '"':
        ++p_;
        return result(string() && builder_.string(buffer_));
      case 't':
        return result(literal("true") && builder_.boolean(true));
      case 'f':
        return result(literal("false") && builder_.boolean(false));
      case 'n':
        return result(literal("null") && builder_.null());
      default:
        return result(number());
    }
  }

  static Step result(bool ok) { return ok ? Step::kDone : Step::kFailed; }

  // `"key" :` of an object member; the value follows.
  bool member_key() {
    skip_whitespace();
    if (p_ == end_ || *p_ != '"') {
      return fail();
    }
    ++p_;
    if (!string() || !builder_.key(buffer_)) {
      return false;
    }
    skip_whitespace();
    if (p_ == end_ || *p_ != ':') {
      return fail();
    }
    ++p_;
    return true;  // the value is read by the loop in read()
  }

  bool literal(std::string_view word) {
    if (static_cast<std::size_t>(end_ - p_) < word.size() ||
        std::string_view(p_, word.size()) != word) {
      return fail();
    }
    p_ += word.size();
    return true;
  }

  // After the opening quote; the content, unescaped, in buffer_.
  bool string() {
    buffer_.clear();
    while (true) {
      const char* run = p_;
      p_ = plain_run_end(p_, end_);
      // append(pointer, size), not append(first, last): libstdc++ routes the iterator form
      // through the general _M_replace, which measured as a tenth of a request.
      buffer_.append(run, static_cast<std::size_t>(p_ - run));
      if (p_ == end_) {
        return fail();
      }
      const auto c = static_cast<unsigned char>(*p_);
      if (c == '"') {
        ++p_;
        return true;
      }
      if (c == '\\') {
        if (!escape()) {
          return false;
        }
      } else if (c < 0x20) {
        return fail();  // control characters must be escaped
      } else if (!utf8_sequence()) {
        return false;
      }
    }
  }

  bool hex4(std::uint32_t& out) {
    if (end_ - p_ < 4) {
      return fail();
    }
    out = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = *p_++;
      out <<= 4U;
      if (c >= '0' && c <= '9') {
        out |= static_cast<std::uint32_t>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        out |= static_cast<std::uint32_t>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        out |= static_cast<std::uint32_t>(c - 'A' + 10);
      } else {
        --p_;
        return fail();
      }
    }
    return true;
  }

  bool escape() {
    ++p_;  // the backslash
    if (p_ == end_) {
      return fail();
    }
    const char c = *p_++;
    switch (c) {
      case '"':
        buffer_ += '"';
        return true;
      case '\\':
        buffer_ += '\\';
        return true;
      case '/':
        buffer_ += '/';
        return true;
      case 'b':
        buffer_ += '\b';
        return true;
      case 'f':
        buffer_ += '\f';
        return true;
      case 'n':
        buffer_ += '\n';
        return true;
      case 'r':
        buffer_ += '\r';
        return true;
      case 't':
        buffer_ += '\t';
        return true;
      case 'u': {
        std::uint32_t code = 0;
        if (!hex4(code)) {
          return false;
        }
        if (code >= 0xDC00 && code <= 0xDFFF) {
          return fail();  // a low surrogate without its high one
        }
        if (code >= 0xD800 && code <= 0xDBFF) {
          std::uint32_t low = 0;
          if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u') {
            return fail();
          }
          p_ += 2;
          if (!hex4(low)) {
            return false;
          }
          if (low < 0xDC00 || low > 0xDFFF) {
            return fail();
          }
          code = 0x10000 + ((code - 0xD800) << 10U) + (low - 0xDC00);
        }
        append_utf8(buffer_, code);
        return true;
      }
      default:
        --p_;
        return fail();
    }
  }

  // One multi-byte UTF-8 character, checked as RFC 3629 (and nlohmann's lexer) require.
  bool utf8_sequence() {
    const auto lead = static_cast<unsigned char>(*p_);
    int continuation = 0;
    unsigned char low = 0x80;
    unsigned char high = 0xBF;
    if (lead >= 0xC2 && lead <= 0xDF) {
      continuation = 1;
    } else if (lead == 0xE0) {
      continuation = 2;
      low = 0xA0;
    } else if ((lead >= 0xE1 && lead <= 0xEC) || lead == 0xEE || lead == 0xEF) {
      continuation = 2;
    } else if (lead == 0xED) {
      continuation = 2;
      high = 0x9F;
    } else if (lead == 0xF0) {
      continuation = 3;
      low = 0x90;
    } else if (lead >= 0xF1 && lead <= 0xF3) {
      continuation = 3;
    } else if (lead == 0xF4) {
      continuation = 3;
      high = 0x8F;
    } else {
      return fail();
    }
    if (end_ - p_ <= continuation) {
      return fail();
    }
    for (int i = 1; i <= continuation; ++i) {
      const auto c = static_cast<unsigned char>(p_[i]);
      if (c < low || c > high) {
        p_ += i;
        return fail();
      }
      low = 0x80;
      high = 0xBF;
    }
    buffer_.append(p_, static_cast<std::size_t>(continuation) + 1);
    p_ += continuation + 1;
    return true;
  }

  static bool is_digit(char c) { return c >= '0' && c <= '9'; }

  // -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? as nlohmann types it: an integer that fits
  // int64 (negative) or uint64 (otherwise) stays one, anything else is a double (strtod).
  bool number() {
    const char* start = p_;
    bool negative = false;
    if (*p_ == '-') {
      negative = true;
      ++p_;
    }
    if (p_ == end_ || !is_digit(*p_)) {
      return fail();
    }
    if (*p_ == '0') {
      ++p_;
    } else {
      while (p_ != end_ && is_digit(*p_)) {
        ++p_;
      }
    }
    bool integer = true;
    if (p_ != end_ && *p_ == '.') {
      integer = false;
      ++p_;
      if (p_ == end_ || !is_digit(*p_)) {
        return fail();
      }
      while (p_ != end_ && is_digit(*p_)) {
        ++p_;
      }
    }
    if (p_ != end_ && (*p_ == 'e' || *p_ == 'E')) {
      integer = false;
      ++p_;
      if (p_ != end_ && (*p_ == '+' || *p_ == '-')) {
        ++p_;
      }
      if (p_ == end_ || !is_digit(*p_)) {
        return fail();
      }
      while (p_ != end_ && is_digit(*p_)) {
        ++p_;
      }
    }
    if (integer) {
      if (negative) {
        std::int64_t value = 0;
        const auto [end, ec] = std::from_chars(start, p_, value);
        if (ec == std::errc() && end == p_) {
          return builder_.number_integer(value);
        }
      } else {
        std::uint64_t value = 0;
        const auto [end, ec] = std::from_chars(start, p_, value);
        if (ec == std::errc() && end == p_) {
          return builder_.number_unsigned(value);
        }
      }
    }
    // strtod as nlohmann uses it: an underflow becomes 0, an overflow (+-inf) is an error.
    const std::string text(start, p_);
    const double value = std::strtod(text.c_str(), nullptr);
    if (!std::isfinite(value)) {
      return fail();
    }
    return builder_.number_float(value);
  }

  const char* begin_;
  const char* p_;
  const char* end_;
  TreeBuilder& builder_;
  std::vector<char> open_;  // '{' or '[' per open container
  std::string buffer_;
};

}  // namespace

Result<Json> read_json(std::string_view text, int max_depth, JsonFilter filter) {
  TreeBuilder builder(max_depth, filter);
  Reader reader(text, builder);
  bool ok = false;
  try {
    ok = reader.read();
  } catch (const std::exception& exception) {  // bad_alloc
    Error error;
    error.code = ErrorCode::kInternal;
    error.message = std::string("cannot read JSON: ") + exception.what();
    return error;
  }
  if (ok) {
    return std::move(builder.root());
  }
  Error error;
  if (builder.too_deep()) {
    error.code = ErrorCode::kTooDeep;
    error.message = "body nests deeper than " + std::to_string(max_depth) + " levels";
  } else {
    error.code = ErrorCode::kInvalidJson;
    error.message = "body is not valid JSON (at byte " + std::to_string(reader.error_offset()) + ")";
  }
  return error;
}

}  // namespace topoguard::admission
