#include "topoguard/common/terminal_style.h"

namespace topoguard {

std::string styled(std::string_view text, TerminalStyle style, bool enabled) {
  if (!enabled) {
    return std::string(text);
  }
  std::string_view sgr;
  switch (style) {
    case TerminalStyle::kAlarm: sgr = "1;31"; break;
    case TerminalStyle::kCaution: sgr = "33"; break;
    case TerminalStyle::kNotice: sgr = "36"; break;
    case TerminalStyle::kFaint: sgr = "2"; break;
    case TerminalStyle::kSuccess: sgr = "32"; break;
  }
  return "\033[" + std::string(sgr) + "m" + std::string(text) + "\033[0m";
}

}  // namespace topoguard
