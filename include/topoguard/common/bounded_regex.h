// RE2 programs compiled from input (CEL `matches()` patterns, policy patterns) under one set of
// limits: a pattern's length and the memory RE2 may use for it. RE2 runs in linear time, but its
// compiled program and DFA cache grow with the pattern (`(a|b){1,1000}` repeated), so a hostile
// or careless pattern could otherwise take hundreds of MiB.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "topoguard/common/result.h"

namespace re2 {
class RE2;
}

namespace topoguard {

// Longest pattern compiled, in bytes.
inline constexpr std::size_t kMaxRegexPatternBytes = 4096;
// RE2's max_mem for one pattern: its program and its DFA cache together.
inline constexpr std::int64_t kRegexMaxMemory = 1 << 20;
// How much of a pattern an error message quotes.
inline constexpr std::size_t kQuotedPatternBytes = 128;

// `pattern` in double quotes, cut to kQuotedPatternBytes at a UTF-8 boundary ("..." when cut).
[[nodiscard]] std::string quote_pattern(std::string_view pattern);

// Compiles `pattern` within the limits above. Errors (kTooLarge for the length or the memory,
// kInvalidPattern for a syntax error) quote the pattern cut to kQuotedPatternBytes.
[[nodiscard]] Result<std::shared_ptr<const re2::RE2>> compile_bounded_regex(
    std::string_view pattern);

// A compiled program's footprint as RE2 accounts it (program and DFA cache limit), for caches
// bounded in bytes.
[[nodiscard]] std::size_t regex_footprint(const re2::RE2& regex);

}  // namespace topoguard
