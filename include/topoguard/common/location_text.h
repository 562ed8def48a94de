// A source location as diagnostics print it.
#pragma once

#include <string>

namespace topoguard {

// "file:line", or "file" when the line is unknown (0).
[[nodiscard]] inline std::string location_text(const std::string& file, int line) {
  return line > 0 ? file + ":" + std::to_string(line) : file;
}

}  // namespace topoguard
