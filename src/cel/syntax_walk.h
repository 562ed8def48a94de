// Visiting every node of a syntax tree (for the static questions in inspect.cpp and the
// evaluator's precomputation). Recursion is bounded: the parser limits nesting to kMaxNesting.
#pragma once

#include <functional>

#include "topoguard/cel/ast.h"

namespace topoguard::cel {

// Calls `visit` on `expr` and every node below it, parents first, children in source order.
void walk(const Expr& expr, const std::function<void(const Expr&)>& visit);

}  // namespace topoguard::cel
