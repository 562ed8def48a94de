// Whole text files in and out, for the commands that read inputs and write results.
#pragma once

#include <cstddef>
#include <istream>
#include <string>

#include "topoguard/common/result.h"

namespace topoguard {

// All of `in` (named `path` in errors); kTooLarge past `limit` bytes, kIo when reading fails.
[[nodiscard]] Result<std::string> read_text_stream(std::istream& in, const std::string& path,
                                                   std::size_t limit);

// The file at `path`; kTooLarge past `limit` bytes, kIo when it cannot be opened or read.
[[nodiscard]] Result<std::string> read_text_file(const std::string& path, std::size_t limit);

// Writes `text` next to `path` and renames it over, so an interrupted write never leaves a
// truncated file; creates missing parent folders.
[[nodiscard]] Status write_text_file(const std::string& path, const std::string& text);

}  // namespace topoguard
