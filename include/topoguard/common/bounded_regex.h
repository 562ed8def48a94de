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
// Most nodes a pattern may expand to once counted repetitions are written out (`x{1000}` is a
// thousand x). RE2 writes them out before max_mem applies, and that work grows with the
// expansion, not the pattern's length.
inline constexpr std::size_t kMaxRegexExpansion = 50'000;
// RE2's max_mem for one pattern: its program and its DFA cache together.
inline constexpr std::int64_t kRegexMaxMemory = 1 << 20;
// How much of a pattern an error message quotes.
inline constexpr std::size_t kQuotedPatternBytes = 128;

// `pattern` in double quotes, cut to kQuotedPatternBytes at a UTF-8 boundary ("..." when cut).
[[nodiscard]] std::string quote_pattern(std::string_view pattern);

// An upper bound on the nodes `pattern` expands to: each atom (a character, class or escape)
// counts one, a group what it holds, and a counted repetition {n,m} multiplies its atom by the
// larger bound. Saturates at SIZE_MAX; linear in the pattern.
[[nodiscard]] std::size_t regex_expansion(std::string_view pattern);

// Compiles `pattern` within the limits above. Errors (kTooLarge for the length, the expansion or
// the memory, kInvalidPattern for a syntax error) quote the pattern cut to kQuotedPatternBytes.
[[nodiscard]] Result<std::shared_ptr<const re2::RE2>> compile_bounded_regex(
    std::string_view pattern);

}  // namespace topoguard
