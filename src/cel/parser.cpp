#include "parser.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "topoguard/cel/cel.h"

namespace topoguard::cel {

namespace {

enum class TokenKind { kIdent, kLiteral, kPunct, kEnd };

struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::string_view text;  // the source text (punctuation and identifiers compare on it)
  Position position;
  Literal literal;             // kLiteral
  bool unsigned_magnitude = false;  // kLiteral int: the magnitude as lexed is in `magnitude`
  std::uint64_t magnitude = 0;  // kLiteral decimal/hex int without suffix, before sign
};

// Thrown inside the parser only, caught by parse(): one syntax error ends parsing.
struct SyntaxError {
  Position position;
  std::string message;
};

[[noreturn]] void fail(const Position& position, std::string message) {
  throw SyntaxError{position, std::move(message)};
}

constexpr std::array<std::string_view, 17> kReserved = {
    "as",      "break",     "const",  "continue", "else",  "for", "function", "if",    "import",
    "let",     "loop",      "package", "namespace", "return", "var", "void",   "while"};

bool is_reserved(std::string_view word) {
  return std::find(kReserved.begin(), kReserved.end(), word) != kReserved.end();
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_ident_part(char c) { return is_ident_start(c) || is_digit(c); }
int hex_value(char c) {
  if (is_digit(c)) {
    return c - '0';
  }
  return (c | 0x20) - 'a' + 10;
}

void append_utf8(std::string& out, std::uint32_t code_point) {
  if (code_point < 0x80) {
    out.push_back(static_cast<char>(code_point));
  } else if (code_point < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (code_point >> 6)));
    out.push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else if (code_point < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (code_point >> 12)));
    out.push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (code_point >> 18)));
    out.push_back(static_cast<char>(0x80 | ((code_point >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  }
}

// Offset of the first byte that is not valid UTF-8, or npos.
std::size_t invalid_utf8_at(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    const auto byte = static_cast<unsigned char>(text[i]);
    std::size_t length = 0;
    std::uint32_t code_point = 0;
    if (byte < 0x80) {
      ++i;
      continue;
    }
    if ((byte & 0xE0) == 0xC0) {
      length = 2;
      code_point = byte & 0x1F;
    } else if ((byte & 0xF0) == 0xE0) {
      length = 3;
      code_point = byte & 0x0F;
    } else if ((byte & 0xF8) == 0xF0) {
      length = 4;
      code_point = byte & 0x07;
    } else {
      return i;
    }
    if (i + length > text.size()) {
      return i;
    }
    for (std::size_t k = 1; k < length; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xC0) != 0x80) {
        return i;
      }
      code_point = (code_point << 6) | (next & 0x3F);
    }
    const bool overlong = (length == 2 && code_point < 0x80) ||
                          (length == 3 && code_point < 0x800) ||
                          (length == 4 && code_point < 0x10000);
    if (overlong || code_point > 0x10FFFF || (code_point >= 0xD800 && code_point <= 0xDFFF)) {
      return i;
    }
    i += length;
  }
  return std::string_view::npos;
}

class Lexer {
 public:
  explicit Lexer(std::string_view text) : text_(text) {}

  std::vector<Token> tokens() {
    std::vector<Token> tokens;
    for (;;) {
      skip_space_and_comments();
      Token token;
      token.position = position();
      if (at_ >= text_.size()) {
        tokens.push_back(token);
        return tokens;
      }
      lex(token);
      tokens.push_back(std::move(token));
    }
  }

 private:
  Position position() const { return Position{at_, line_, column_}; }

  char peek(std::size_t ahead = 0) const {
    return at_ + ahead < text_.size() ? text_[at_ + ahead] : '\0';
  }

  void advance(std::size_t count = 1) {
    for (std::size_t i = 0; i < count && at_ < text_.size(); ++i) {
      const char c = text_[at_++];
      if (c == '\n') {
        ++line_;
        column_ = 1;
      } else if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) {
        ++column_;
      }
    }
  }

  void skip_space_and_comments() {
    for (;;) {
      const char c = peek();
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f') {
        advance();
      } else if (c == '/' && peek(1) == '/') {
        while (at_ < text_.size() && peek() != '\n') {
          advance();
        }
      } else {
        return;
      }
    }
  }

  void lex(Token& token) {
    const char c = peek();
    const std::size_t start = at_;
    if (is_ident_start(c)) {
      std::size_t end = at_;
      while (end < text_.size() && is_ident_part(text_[end])) {
        ++end;
      }
      const std::string_view word = text_.substr(at_, end - at_);
      const char after = end < text_.size() ? text_[end] : '\0';
      if ((after == '"' || after == '\'') && string_prefix(word)) {
        string_literal(token, word);
        return;
      }
      advance(word.size());
      token.kind = TokenKind::kIdent;
      token.text = word;
      return;
    }
    if (c == '"' || c == '\'') {
      string_literal(token, {});
      return;
    }
    if (is_digit(c) || (c == '.' && is_digit(peek(1)))) {
      number(token);
      return;
    }
    static constexpr std::array<std::string_view, 6> kTwoChar = {"==", "!=", "<=", ">=", "&&", "||"};
    for (std::string_view op : kTwoChar) {
      if (text_.substr(at_, 2) == op) {
        advance(2);
        token.kind = TokenKind::kPunct;
        token.text = text_.substr(start, 2);
        return;
      }
    }
    static constexpr std::string_view kOneChar = "<>!?:.,[](){}+-*/%";
    if (kOneChar.find(c) != std::string_view::npos) {
      advance();
      token.kind = TokenKind::kPunct;
      token.text = text_.substr(start, 1);
      return;
    }
    fail(position(), std::string("unexpected character '") + (c == '\0' ? std::string("\\0") : std::string(1, c)) + "'");
  }

  static bool string_prefix(std::string_view word) {
    if (word.empty() || word.size() > 2) {
      return false;
    }
    bool raw = false;
    bool bytes = false;
    for (char c : word) {
      if ((c == 'r' || c == 'R') && !raw) {
        raw = true;
      } else if ((c == 'b' || c == 'B') && !bytes) {
        bytes = true;
      } else {
        return false;
      }
    }
    return true;
  }

  void number(Token& token) {
    const Position start_position = position();
    const std::size_t start = at_;
    token.kind = TokenKind::kLiteral;
    if (peek() == '0' && (peek(1) == 'x' || peek(1) == 'X') && is_hex(peek(2))) {
      advance(2);
      std::uint64_t value = 0;
      bool overflow = false;
      while (is_hex(peek())) {
        const auto digit = static_cast<std::uint64_t>(hex_value(peek()));
        overflow = overflow || value > (std::numeric_limits<std::uint64_t>::max() - digit) / 16;
        value = value * 16 + digit;
        advance();
      }
      integer_suffix(token, value, overflow, start_position);
      token.text = text_.substr(start, at_ - start);
      return;
    }
    bool is_double = false;
    while (is_digit(peek())) {
      advance();
    }
    if (peek() == '.' && is_digit(peek(1))) {
      is_double = true;
      advance();
      while (is_digit(peek())) {
        advance();
      }
    }
    if ((peek() == 'e' || peek() == 'E') &&
        (is_digit(peek(1)) || ((peek(1) == '+' || peek(1) == '-') && is_digit(peek(2))))) {
      is_double = true;
      advance(2);
      while (is_digit(peek())) {
        advance();
      }
    }
    token.text = text_.substr(start, at_ - start);
    if (is_double) {
      const std::string digits(token.text);
      errno = 0;
      const double value = std::strtod(digits.c_str(), nullptr);
      if (errno == ERANGE && (value == HUGE_VAL || value == -HUGE_VAL)) {
        fail(start_position, "invalid double literal");
      }
      token.literal = value;
      return;
    }
    std::uint64_t value = 0;
    bool overflow = false;
    for (char c : token.text) {
      const auto digit = static_cast<std::uint64_t>(c - '0');
      overflow = overflow || value > (std::numeric_limits<std::uint64_t>::max() - digit) / 10;
      value = value * 10 + digit;
    }
    integer_suffix(token, value, overflow, start_position);
    token.text = text_.substr(start, at_ - start);
  }

  void integer_suffix(Token& token, std::uint64_t value, bool overflow, const Position& start) {
    if (peek() == 'u' || peek() == 'U') {
      advance();
      if (overflow) {
        fail(start, "invalid uint literal");
      }
      token.literal = value;
      return;
    }
    if (overflow || value > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) + 1) {
      fail(start, "invalid int literal");
    }
    // The sign is the parser's: -9223372036854775808 is a valid literal.
    token.unsigned_magnitude = true;
    token.magnitude = value;
    token.literal = std::int64_t{0};
  }

  void string_literal(Token& token, std::string_view prefix) {
    const Position start_position = position();
    const std::size_t start = at_;
    const bool raw = prefix.find_first_of("rR") != std::string_view::npos;
    const bool bytes = prefix.find_first_of("bB") != std::string_view::npos;
    advance(prefix.size());
    const char quote = peek();
    const bool triple = peek(1) == quote && peek(2) == quote;
    advance(triple ? 3 : 1);
    std::string value;
    for (;;) {
      if (at_ >= text_.size()) {
        fail(start_position, "unterminated string literal");
      }
      const char c = peek();
      if (c == quote && (!triple || (peek(1) == quote && peek(2) == quote))) {
        advance(triple ? 3 : 1);
        break;
      }
      if (!triple && (c == '\n' || c == '\r')) {
        fail(start_position, "unterminated string literal");
      }
      if (c == '\\' && !raw) {
        escape(value, bytes);
        continue;
      }
      value.push_back(c);
      advance();
    }
    token.kind = TokenKind::kLiteral;
    token.text = text_.substr(start, at_ - start);
    if (bytes) {
      token.literal = Bytes{std::move(value)};
    } else {
      token.literal = std::move(value);
    }
  }

  void escape(std::string& out, bool bytes) {
    const Position escape_position = position();
    const char kind = peek(1);
    const auto simple = [&](char value) {
      out.push_back(value);
      advance(2);
    };
    switch (kind) {
      case 'a': return simple('\a');
      case 'b': return simple('\b');
      case 'f': return simple('\f');
      case 'n': return simple('\n');
      case 'r': return simple('\r');
      case 't': return simple('\t');
      case 'v': return simple('\v');
      case '\\': return simple('\\');
      case '\'': return simple('\'');
      case '"': return simple('"');
      case '`': return simple('`');
      case '?': return simple('?');
      default: break;
    }
    std::uint32_t code_point = 0;
    std::size_t digits = 0;
    int base = 16;
    if (kind == 'x' || kind == 'X') {
      digits = 2;
    } else if (kind == 'u' || kind == 'U') {
      if (bytes) {
        fail(escape_position, "unicode escape in a bytes literal");
      }
      digits = kind == 'u' ? 4 : 8;
    } else if (kind >= '0' && kind <= '3') {
      base = 8;
      digits = 3;
    } else {
      fail(escape_position, "invalid escape sequence");
    }
    const std::size_t first = base == 8 ? 1 : 2;
    for (std::size_t i = 0; i < digits; ++i) {
      const char digit = peek(first + i);
      const bool valid = base == 8 ? (digit >= '0' && digit <= '7') : is_hex(digit);
      if (!valid) {
        fail(escape_position, "invalid escape sequence");
      }
      code_point = code_point * static_cast<std::uint32_t>(base) +
                   static_cast<std::uint32_t>(hex_value(digit));
    }
    advance(first + digits);
    if (bytes || ((kind == 'x' || kind == 'X' || base == 8) && bytes)) {
      out.push_back(static_cast<char>(code_point));
      return;
    }
    if (code_point > 0x10FFFF || (code_point >= 0xD800 && code_point <= 0xDFFF)) {
      fail(escape_position, "invalid unicode code point");
    }
    append_utf8(out, code_point);
  }

  std::string_view text_;
  std::size_t at_ = 0;
  int line_ = 1;
  int column_ = 1;
};

struct Built {
  ExprPtr expr;
  int depth = 1;
};

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : tokens_(std::move(tokens)) {}

  ExprPtr parse_all() {
    Built root = expression();
    if (current().kind != TokenKind::kEnd) {
      fail(current().position, "unexpected '" + std::string(current().text) + "'");
    }
    return std::move(root.expr);
  }

 private:
  const Token& current() const { return tokens_[at_]; }
  const Token& ahead(std::size_t n) const {
    return tokens_[std::min(at_ + n, tokens_.size() - 1)];
  }
  bool is_punct(std::string_view text, std::size_t n = 0) const {
    return ahead(n).kind == TokenKind::kPunct && ahead(n).text == text;
  }
  bool accept(std::string_view text) {
    if (is_punct(text)) {
      ++at_;
      return true;
    }
    return false;
  }
  const Token& expect(std::string_view text) {
    if (!is_punct(text)) {
      const Token& got = current();
      fail(got.position, "expected '" + std::string(text) + "' but found " +
                             (got.kind == TokenKind::kEnd ? std::string("end of expression")
                                                          : "'" + std::string(got.text) + "'"));
    }
    return tokens_[at_++];
  }

  static Built make(const Position& position, auto node, int depth) {
    if (depth > kMaxNesting) {
      fail(position, "expression nests more than " + std::to_string(kMaxNesting) + " levels");
    }
    auto expr = std::make_unique<Expr>();
    expr->position = position;
    expr->node = std::move(node);
    return Built{std::move(expr), depth};
  }

  static Built call(const Position& position, std::string function, std::vector<Built> args,
                    Built* target = nullptr) {
    Call node;
    node.function = std::move(function);
    int depth = 0;
    if (target != nullptr) {
      depth = target->depth;
      node.target = std::move(target->expr);
    }
    for (Built& arg : args) {
      depth = std::max(depth, arg.depth);
      node.args.push_back(std::move(arg.expr));
    }
    return make(position, std::move(node), depth + 1);
  }

  // Guards the parser's own recursion (parentheses, lists, arguments).
  struct Nest {
    explicit Nest(Parser& parser) : parser_(parser) {
      if (++parser_.nesting_ > kMaxNesting) {
        fail(parser_.current().position,
             "expression nests more than " + std::to_string(kMaxNesting) + " levels");
      }
    }
    ~Nest() { --parser_.nesting_; }
    Nest(const Nest&) = delete;
    Nest& operator=(const Nest&) = delete;
    Parser& parser_;
  };

  Built expression() {
    Nest nest(*this);
    Built condition = logical("||");
    if (!is_punct("?")) {
      return condition;
    }
    const Position position = current().position;
    ++at_;
    Built when_true = logical("||");
    expect(":");
    Built when_false = expression();
    std::vector<Built> args;
    args.push_back(std::move(condition));
    args.push_back(std::move(when_true));
    args.push_back(std::move(when_false));
    return call(position, "_?_:_", std::move(args));
  }

  // A chain of || (or &&), built as a balanced tree as cel-go does, so long chains stay shallow.
  Built logical(std::string_view op) {
    std::vector<Built> terms;
    std::vector<Position> positions;
    terms.push_back(op == "||" ? logical("&&") : relation());
    while (is_punct(op)) {
      positions.push_back(current().position);
      ++at_;
      terms.push_back(op == "||" ? logical("&&") : relation());
    }
    const std::string function = op == "||" ? "_||_" : "_&&_";
    return balance(terms, positions, 0, terms.size(), function);
  }

  static Built balance(std::vector<Built>& terms, const std::vector<Position>& positions,
                       std::size_t begin, std::size_t end, const std::string& function) {
    if (end - begin == 1) {
      return std::move(terms[begin]);
    }
    const std::size_t middle = begin + (end - begin) / 2;
    std::vector<Built> args;
    args.push_back(balance(terms, positions, begin, middle, function));
    args.push_back(balance(terms, positions, middle, end, function));
    return call(positions[middle - 1], function, std::move(args));
  }

  static std::optional<std::string> relation_function(const Token& token) {
    if (token.kind == TokenKind::kIdent && token.text == "in") {
      return "@in";
    }
    if (token.kind != TokenKind::kPunct) {
      return std::nullopt;
    }
    static constexpr std::array<std::pair<std::string_view, std::string_view>, 6> kOps = {{
        {"==", "_==_"}, {"!=", "_!=_"}, {"<", "_<_"}, {"<=", "_<=_"}, {">", "_>_"}, {">=", "_>=_"}}};
    for (const auto& [text, function] : kOps) {
      if (token.text == text) {
        return std::string(function);
      }
    }
    return std::nullopt;
  }

  Built relation() {
    Built left = addition();
    while (auto function = relation_function(current())) {
      const Position position = current().position;
      ++at_;
      std::vector<Built> args;
      args.push_back(std::move(left));
      args.push_back(addition());
      left = call(position, *function, std::move(args));
    }
    return left;
  }

  Built addition() {
    Built left = multiplication();
    while (is_punct("+") || is_punct("-")) {
      const Position position = current().position;
      const std::string function = is_punct("+") ? "_+_" : "_-_";
      ++at_;
      std::vector<Built> args;
      args.push_back(std::move(left));
      args.push_back(multiplication());
      left = call(position, function, std::move(args));
    }
    return left;
  }

  Built multiplication() {
    Built left = unary();
    while (is_punct("*") || is_punct("/") || is_punct("%")) {
      const Position position = current().position;
      const std::string function = is_punct("*") ? "_*_" : is_punct("/") ? "_/_" : "_%_";
      ++at_;
      std::vector<Built> args;
      args.push_back(std::move(left));
      args.push_back(unary());
      left = call(position, function, std::move(args));
    }
    return left;
  }

  // `!`+ member and `-`+ member; an even count cancels out, as in cel-go. A `-` right before a
  // number literal is that literal's sign.
  Built unary() {
    const Position position = current().position;
    for (std::string_view op : {"!", "-"}) {
      std::size_t count = 0;
      while (is_punct(op, count)) {
        ++count;
      }
      if (count == 0) {
        continue;
      }
      if (op == "-" && ahead(count).kind == TokenKind::kLiteral && is_number(ahead(count))) {
        --count;  // the last '-' is the literal's sign
        at_ += count;
        Built operand = member();
        return count % 2 == 0 ? std::move(operand) : negate(position, std::move(operand), "-_");
      }
      at_ += count;
      Built operand = member();
      if (count % 2 == 0) {
        return operand;
      }
      return negate(position, std::move(operand), op == "!" ? "!_" : "-_");
    }
    return member();
  }

  static bool is_number(const Token& token) {
    return token.unsigned_magnitude || std::holds_alternative<double>(token.literal);
  }

  static Built negate(const Position& position, Built operand, const char* function) {
    std::vector<Built> args;
    args.push_back(std::move(operand));
    return call(position, function, std::move(args));
  }

  Built member() {
    Built operand = primary();
    for (;;) {
      const Position position = current().position;
      if (accept(".")) {
        const Token& name = current();
        if (name.kind != TokenKind::kIdent) {
          fail(name.position, "expected a field name after '.'");
        }
        ++at_;  // reserved words are valid field and method names after '.'
        if (is_punct("(")) {
          ++at_;
          std::vector<Built> args = arguments(")");
          operand = receiver_call(position, std::string(name.text), std::move(operand),
                                  std::move(args));
        } else {
          Select select;
          select.field = std::string(name.text);
          const int depth = operand.depth + 1;
          select.operand = std::move(operand.expr);
          operand = make(position, std::move(select), depth);
        }
      } else if (accept("[")) {
        std::vector<Built> args;
        args.push_back(std::move(operand));
        args.push_back(expression());
        expect("]");
        operand = call(position, "_[_]", std::move(args));
      } else if (is_punct("{") && qualified_name(*operand.expr)) {
        ++at_;
        operand = create_struct(position, *qualified_name(*operand.expr));
      } else {
        return operand;
      }
    }
  }

  // `a.b.c` as a message name, when the operand is just identifiers and selections.
  static std::optional<std::string> qualified_name(const Expr& expr) {
    if (const auto* ident = std::get_if<Ident>(&expr.node)) {
      return ident->name;
    }
    if (const auto* select = std::get_if<Select>(&expr.node)) {
      if (!select->test_only) {
        if (auto prefix = qualified_name(*select->operand)) {
          return *prefix + "." + select->field;
        }
      }
    }
    return std::nullopt;
  }

  static void check_identifier(const Token& token) {
    if (is_reserved(token.text) || token.text == "in") {
      fail(token.position, "reserved identifier '" + std::string(token.text) + "'");
    }
  }

  std::vector<Built> arguments(std::string_view close) {
    Nest nest(*this);
    std::vector<Built> args;
    if (accept(close)) {
      return args;
    }
    for (;;) {
      args.push_back(expression());
      if (accept(close)) {
        return args;
      }
      if (!is_punct(",")) {
        fail(current().position, "expected ',' or '" + std::string(close) + "'");
      }
      ++at_;
      if (close == "]" && accept(close)) {  // lists allow a trailing comma
        return args;
      }
    }
  }

  Built primary() {
    const Token& token = current();
    const Position position = token.position;
    if (token.kind == TokenKind::kLiteral) {
      ++at_;
      Literal literal = token.literal;
      if (token.unsigned_magnitude) {
        literal = signed_literal(token, false);
      }
      return make(position, std::move(literal), 1);
    }
    if (token.kind == TokenKind::kPunct && token.text == "-" &&
        ahead(1).kind == TokenKind::kLiteral && is_number(ahead(1))) {
      // A sign right before a number literal (see unary()), e.g. after '!': !-1.
      const Token& number = ahead(1);
      at_ += 2;
      Literal literal = number.unsigned_magnitude
                            ? signed_literal(number, true)
                            : Literal{-std::get<double>(number.literal)};
      return make(position, std::move(literal), 1);
    }
    if (token.kind == TokenKind::kIdent || (is_punct(".") && ahead(1).kind == TokenKind::kIdent)) {
      const bool leading_dot = is_punct(".");
      if (leading_dot) {
        ++at_;
      }
      const Token& name = current();
      if (!leading_dot) {
        if (name.text == "true" || name.text == "false") {
          ++at_;
          return make(position, Literal{name.text == "true"}, 1);
        }
        if (name.text == "null") {
          ++at_;
          return make(position, Literal{NullLiteral{}}, 1);
        }
      }
      check_identifier(name);
      ++at_;
      std::string identifier = (leading_dot ? "." : "") + std::string(name.text);
      if (accept("(")) {
        std::vector<Built> args = arguments(")");
        return global_call(position, std::move(identifier), std::move(args));
      }
      return make(position, Ident{std::move(identifier)}, 1);
    }
    if (accept("(")) {
      Built inner = expression();
      expect(")");
      return inner;
    }
    if (accept("[")) {
      std::vector<Built> elements = arguments("]");
      CreateList list;
      int depth = 0;
      for (Built& element : elements) {
        depth = std::max(depth, element.depth);
        list.elements.push_back(std::move(element.expr));
      }
      return make(position, std::move(list), depth + 1);
    }
    if (accept("{")) {
      return create_map(position);
    }
    if (token.kind == TokenKind::kEnd) {
      fail(position, "unexpected end of expression");
    }
    fail(position, "unexpected '" + std::string(token.text) + "'");
  }

  static Literal signed_literal(const Token& token, bool negative) {
    constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    if (negative) {
      if (token.magnitude == kMax + 1) {
        return std::numeric_limits<std::int64_t>::min();
      }
      return -static_cast<std::int64_t>(token.magnitude);
    }
    if (token.magnitude > kMax) {
      fail(token.position, "invalid int literal");
    }
    return static_cast<std::int64_t>(token.magnitude);
  }

  Built create_map(const Position& position) {
    Nest nest(*this);
    CreateMap map;
    int depth = 0;
    while (!accept("}")) {
      Built key = expression();
      expect(":");
      Built value = expression();
      depth = std::max({depth, key.depth, value.depth});
      map.entries.push_back(CreateMap::Entry{std::move(key.expr), std::move(value.expr)});
      if (!accept(",")) {
        expect("}");
        break;
      }
    }
    return make(position, std::move(map), depth + 1);
  }

  Built create_struct(const Position& position, std::string name) {
    Nest nest(*this);
    CreateStruct message;
    message.message_name = std::move(name);
    int depth = 0;
    while (!accept("}")) {
      const Token& field = current();
      if (field.kind != TokenKind::kIdent) {
        fail(field.position, "expected a field name");
      }
      check_identifier(field);
      ++at_;
      expect(":");
      Built value = expression();
      depth = std::max(depth, value.depth);
      message.fields.push_back(CreateStruct::Field{std::string(field.text), std::move(value.expr)});
      if (!accept(",")) {
        expect("}");
        break;
      }
    }
    return make(position, std::move(message), depth + 1);
  }

  static Built global_call(const Position& position, std::string function,
                           std::vector<Built> args) {
    if (function == "has" && args.size() == 1) {
      // The parser owns the node it just built, so it may take it apart.
      auto* select = std::get_if<Select>(&const_cast<Expr&>(*args[0].expr).node);
      if (select == nullptr) {
        fail(position, "invalid argument to has() macro");
      }
      Select test;
      test.operand = std::move(select->operand);
      test.field = std::move(select->field);
      test.test_only = true;
      return make(position, std::move(test), args[0].depth + 1);
    }
    return call(position, std::move(function), std::move(args));
  }

  static Built receiver_call(const Position& position, std::string function, Built target,
                             std::vector<Built> args) {
    static constexpr std::array<std::pair<std::string_view, MacroKind>, 5> kMacros = {{
        {"all", MacroKind::kAll},
        {"exists", MacroKind::kExists},
        {"exists_one", MacroKind::kExistsOne},
        {"map", MacroKind::kMap},
        {"filter", MacroKind::kFilter}}};
    for (const auto& [name, kind] : kMacros) {
      const bool arity = args.size() == 2 || (kind == MacroKind::kMap && args.size() == 3);
      if (function != name || !arity) {
        continue;
      }
      const auto* variable = std::get_if<Ident>(&args[0].expr->node);
      if (variable == nullptr || variable->name.starts_with(".")) {
        fail(args[0].expr->position, "argument must be a simple name");
      }
      Macro macro;
      macro.kind = kind;
      macro.variable = variable->name;
      int depth = target.depth;
      for (const Built& arg : args) {
        depth = std::max(depth, arg.depth);
      }
      macro.range = std::move(target.expr);
      if (kind == MacroKind::kMap) {
        if (args.size() == 3) {
          macro.filter = std::move(args[1].expr);
        }
        macro.transform = std::move(args.back().expr);
      } else {
        macro.filter = std::move(args[1].expr);
      }
      return make(position, std::move(macro), depth + 1);
    }
    return call(position, std::move(function), std::move(args), &target);
  }

  std::vector<Token> tokens_;
  std::size_t at_ = 0;
  int nesting_ = 0;
};

}  // namespace

Result<ExprPtr> parse(std::string_view text) {
  const auto syntax_error = [](const Position& position, const std::string& message) {
    return Error{ErrorCode::kInvalidValue,
                 "CEL syntax error at " + std::to_string(position.line) + ":" +
                     std::to_string(position.column) + ": " + message,
                 {}};
  };
  if (text.size() > kMaxExpressionSize) {
    return Error{ErrorCode::kTooLarge,
                 "CEL expression longer than " + std::to_string(kMaxExpressionSize) + " bytes",
                 {}};
  }
  if (const std::size_t bad = invalid_utf8_at(text); bad != std::string_view::npos) {
    return syntax_error(Position{bad, 1, 1}, "invalid UTF-8 at byte " + std::to_string(bad));
  }
  try {
    Lexer lexer(text);
    Parser parser(lexer.tokens());
    return parser.parse_all();
  } catch (const SyntaxError& error) {
    return syntax_error(error.position, error.message);
  }
}

}  // namespace topoguard::cel
