// The CEL parser: text to syntax tree (ast.h), one pass, linear in the text. Used by compile().
#pragma once

#include <string_view>

#include "topoguard/cel/ast.h"
#include "topoguard/common/result.h"

namespace topoguard::cel {

// The tree of `text`, or the first syntax error ("line:column: what").
[[nodiscard]] Result<ExprPtr> parse(std::string_view text);

}  // namespace topoguard::cel
