#include "topoguard/common/bounded_regex.h"

#include <re2/re2.h>

namespace topoguard {

std::string quote_pattern(std::string_view pattern) {
  if (pattern.size() <= kQuotedPatternBytes) {
    return "\"" + std::string(pattern) + "\"";
  }
  std::size_t cut = kQuotedPatternBytes;
  // Back up over UTF-8 continuation bytes so a character is never split.
  while (cut > 0 && (static_cast<unsigned char>(pattern[cut]) & 0xC0U) == 0x80U) {
    --cut;
  }
  return "\"" + std::string(pattern.substr(0, cut)) + "...\" (" + std::to_string(pattern.size()) +
         " bytes)";
}

Result<std::shared_ptr<const re2::RE2>> compile_bounded_regex(std::string_view pattern) {
  if (pattern.size() > kMaxRegexPatternBytes) {
    return Error{ErrorCode::kTooLarge,
                 "pattern " + quote_pattern(pattern) + " is longer than " +
                     std::to_string(kMaxRegexPatternBytes) + " bytes",
                 {}};
  }
  re2::RE2::Options options;
  options.set_log_errors(false);
  options.set_max_mem(kRegexMaxMemory);
  auto regex =
      std::make_shared<const re2::RE2>(re2::StringPiece(pattern.data(), pattern.size()), options);
  if (regex->ok()) {
    return std::shared_ptr<const re2::RE2>(std::move(regex));
  }
  if (regex->error_code() == re2::RE2::ErrorPatternTooLarge) {
    return Error{ErrorCode::kTooLarge,
                 "pattern " + quote_pattern(pattern) + " needs more than the " +
                     std::to_string(kRegexMaxMemory >> 10) + " KiB a pattern may use",
                 {}};
  }
  std::string message = "invalid RE2 pattern " + quote_pattern(pattern) + ": " + regex->error();
  if (!regex->error_arg().empty() && regex->error().find(regex->error_arg()) == std::string::npos) {
    message += " at " + quote_pattern(regex->error_arg());
  }
  return Error{ErrorCode::kInvalidPattern, std::move(message), {}};
}

std::size_t regex_footprint(const re2::RE2& regex) {
  // RE2 bounds the program and the DFA states it caches together by max_mem; the program alone
  // is about 16 bytes an instruction.
  return static_cast<std::size_t>(regex.options().max_mem()) +
         static_cast<std::size_t>(regex.ProgramSize()) * 16;
}

}  // namespace topoguard
