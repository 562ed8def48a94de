// The syntax tree of a CEL expression, as the parser (cel.h: compile) builds it. Every node
// keeps the offset, line and column of the text it came from. Operators are calls with
// CEL's own operator names (`_&&_`, `_[_]`, `!_`, ...); macros are kept as macro nodes rather
// than expanded into comprehensions. Immutable once built; share it read-only.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace topoguard::cel {

struct Position {
  std::size_t offset = 0;  // byte offset into the expression
  int line = 1;            // 1-based
  int column = 1;          // 1-based, in code points
};

struct Expr;
using ExprPtr = std::unique_ptr<const Expr>;

struct NullLiteral {};
struct Bytes {
  std::string data;
  friend bool operator==(const Bytes&, const Bytes&) = default;
};
using Literal = std::variant<NullLiteral, bool, std::int64_t, std::uint64_t, double, std::string, Bytes>;

// `name` or `.name` (root scoped).
struct Ident {
  std::string name;
};

// `operand.field`; `test_only` for has(operand.field).
struct Select {
  ExprPtr operand;
  std::string field;
  bool test_only = false;
};

// `function(args)`, `target.function(args)`, and every operator.
struct Call {
  std::string function;
  ExprPtr target;  // null for a global call
  std::vector<ExprPtr> args;
};

struct CreateList {
  std::vector<ExprPtr> elements;
};

struct CreateMap {
  struct Entry {
    ExprPtr key;
    ExprPtr value;
  };
  std::vector<Entry> entries;
};

// `Name{field: value, ...}` (protocol buffer message construction).
struct CreateStruct {
  std::string message_name;
  struct Field {
    std::string name;
    ExprPtr value;
  };
  std::vector<Field> fields;
};

enum class MacroKind { kAll, kExists, kExistsOne, kMap, kFilter };

// `range.all(var, predicate)` and friends; `map` has an optional filter:
// `range.map(var, filter, transform)`.
struct Macro {
  MacroKind kind = MacroKind::kAll;
  ExprPtr range;
  std::string variable;
  ExprPtr filter;  // the predicate of all/exists/exists_one/filter, or map's optional filter
  ExprPtr transform;  // map only
};

struct Expr {
  Position position;
  std::variant<Literal, Ident, Select, Call, CreateList, CreateMap, CreateStruct, Macro> node;
};

}  // namespace topoguard::cel
