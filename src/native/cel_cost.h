// A static cost bound for a CEL expression, computed as cel-go's checker estimates it
// (checker/cost.go and its constants): selections and identifiers cost 1, list literals 10,
// map literals 30, message literals 40; macros cost what their comprehension expansion costs
// per element; `in` costs the list's size; string operations are charged 0.1 per character
// (matches: that times a quarter of the regex's length). Sizes come from Shapes: the API's
// maximum sizes for the object, and what each variable can hold.
//
// Beyond cel-go: a guard `size(P) <= K` (before `&&`, as the condition of `?:`) or
// `size(P) > K` (before `||`) bounds P for the rest, so an expression can put a limit on
// what it examines and be charged for that limit.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "topoguard/common/result.h"

namespace topoguard::native {

struct Shape;
using ShapePtr = std::shared_ptr<const Shape>;

// The largest value an expression can have: a string's length, a list's length and its
// elements, a map's (object's) known fields.
struct Shape {
  enum class Kind { kScalar, kString, kList, kMap };
  Kind kind = Kind::kScalar;
  std::uint64_t size = 1;
  ShapePtr element;                        // kList; kMap: the value of any key (labels)
  std::map<std::string, ShapePtr> fields;  // kMap: known fields

  [[nodiscard]] static ShapePtr scalar();
  [[nodiscard]] static ShapePtr string(std::uint64_t length);
  [[nodiscard]] static ShapePtr list(std::uint64_t length, ShapePtr element);
  [[nodiscard]] static ShapePtr object(std::map<std::string, ShapePtr> fields);
  // A map with keys of any name (e.g. labels), each holding `value`.
  [[nodiscard]] static ShapePtr map_of(ShapePtr value);
};

struct CostEstimate {
  std::uint64_t cost = 0;
  ShapePtr shape;
};

// `roots`: the shapes of the identifiers the expression may use (object, request,
// variables, ...). An identifier or field without a shape is an error: the bound would be a
// guess.
[[nodiscard]] Result<CostEstimate> estimate_cost(std::string_view expression,
                                                 const std::map<std::string, ShapePtr>& roots);

}  // namespace topoguard::native
