// Where a value came from: file, 1-based line and the field (JSON pointer) inside the
// document. Used by every diagnostic so errors name file, line and field.
#pragma once

#include <string>

namespace topoguard {

struct SourceLocation {
  std::string file;   // path as given by the user, "-" for stdin, empty when unknown
  int line = 0;       // 1-based; 0 when unknown
  std::string field;  // JSON pointer of the offending field, empty for the whole document
};

}  // namespace topoguard
