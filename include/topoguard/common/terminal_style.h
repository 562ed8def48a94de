#pragma once
// Colour for topoguard's own words in text output on a terminal (ECMA-48 SGR sequences). Only
// words topoguard writes are styled; text from input stays printable() outside the sequences.

#include <string>
#include <string_view>

namespace topoguard {

enum class TerminalStyle { kAlarm, kCaution, kNotice, kFaint, kSuccess };

// `text` wrapped in the style's SGR sequence, or as it is when `enabled` is false.
[[nodiscard]] std::string styled(std::string_view text, TerminalStyle style, bool enabled);

}  // namespace topoguard
