#include "topoguard/common/bounded_regex.h"

#include <re2/re2.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

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

namespace {

std::size_t saturating_add(std::size_t a, std::size_t b) {
  return a > SIZE_MAX - b ? SIZE_MAX : a + b;
}

std::size_t saturating_multiply(std::size_t a, std::size_t b) {
  return b != 0 && a > SIZE_MAX / b ? SIZE_MAX : a * b;
}

// The larger bound of a counted repetition `{n}`, `{n,}` or `{n,m}` starting at `at` (a '{'),
// and the position after it; nullopt when the braces are not one (RE2 reads them as literals).
std::optional<std::pair<std::size_t, std::size_t>> repetition(std::string_view pattern,
                                                              std::size_t at) {
  std::size_t i = at + 1;
  const auto number = [&pattern, &i]() -> std::optional<std::size_t> {
    const std::size_t start = i;
    std::size_t value = 0;
    while (i < pattern.size() && pattern[i] >= '0' && pattern[i] <= '9') {
      value =
          std::min<std::size_t>(value * 10 + static_cast<std::size_t>(pattern[i] - '0'), 1'000'000);
      ++i;
    }
    return i == start ? std::nullopt : std::optional<std::size_t>(value);
  };
  const auto low = number();
  if (!low || i >= pattern.size()) {
    return std::nullopt;
  }
  std::size_t count = *low;
  if (pattern[i] == ',') {
    ++i;
    if (const auto high = number()) {
      count = std::max(count, *high);
    } else {
      count = count + 1;  // {n,}: n copies and a star
    }
  }
  if (i >= pattern.size() || pattern[i] != '}') {
    return std::nullopt;
  }
  return std::make_pair(std::max<std::size_t>(count, 1), i + 1);
}

// The end of the character class starting at `at` (a '['): the position after its ']'.
std::size_t class_end(std::string_view pattern, std::size_t at) {
  std::size_t i = at + 1;
  if (i < pattern.size() && pattern[i] == '^') {
    ++i;
  }
  if (i < pattern.size() && pattern[i] == ']') {
    ++i;  // a leading ']' is literal
  }
  while (i < pattern.size() && pattern[i] != ']') {
    if (pattern[i] == '\\') {
      ++i;
    } else if (pattern[i] == '[' && i + 1 < pattern.size() && pattern[i + 1] == ':') {
      const std::size_t close = pattern.find(":]", i + 2);
      i = close == std::string_view::npos ? i : close + 1;
    }
    ++i;
  }
  return std::min(i + 1, pattern.size());
}

// The end of the escape starting at `at` (a backslash), \x{..} and \p{..} included (the caller
// reads \Q...\E).
std::size_t escape_end(std::string_view pattern, std::size_t at) {
  std::size_t i = at + 1;
  if (i >= pattern.size()) {
    return i;
  }
  const char kind = pattern[i];
  if ((kind == 'x' || kind == 'p' || kind == 'P') && i + 1 < pattern.size() &&
      pattern[i + 1] == '{') {
    const std::size_t close = pattern.find('}', i + 2);
    return close == std::string_view::npos ? pattern.size() : close + 1;
  }
  return i + 1;
}

}  // namespace

std::size_t regex_expansion(std::string_view pattern) {
  struct Group {
    std::size_t total = 0;
    std::size_t last = 0;  // the size of the last atom, which a repetition multiplies
  };
  std::vector<Group> groups(1);
  const auto add_atom = [&groups](std::size_t size) {
    groups.back().total = saturating_add(groups.back().total, size);
    groups.back().last = size;
  };
  std::size_t i = 0;
  while (i < pattern.size()) {
    const char c = pattern[i];
    if (c == '\\') {
      if (i + 1 < pattern.size() && pattern[i + 1] == 'Q') {
        const std::size_t end = pattern.find("\\E", i + 2);
        const std::size_t stop = end == std::string_view::npos ? pattern.size() : end;
        for (std::size_t j = i + 2; j < stop; ++j) {
          add_atom(1);
        }
        i = end == std::string_view::npos ? pattern.size() : end + 2;
        continue;
      }
      add_atom(1);
      i = escape_end(pattern, i);
    } else if (c == '[') {
      add_atom(1);
      i = class_end(pattern, i);
    } else if (c == '(') {
      groups.emplace_back();
      ++i;
    } else if (c == ')' && groups.size() > 1) {
      const std::size_t size = saturating_add(groups.back().total, 1);
      groups.pop_back();
      add_atom(size);
      ++i;
    } else if (c == '{') {
      if (const auto counted = repetition(pattern, i)) {
        Group& group = groups.back();
        group.total =
            saturating_add(group.total, saturating_multiply(group.last, counted->first - 1));
        group.last = saturating_multiply(group.last, counted->first);
        i = counted->second;
      } else {
        add_atom(1);
        ++i;
      }
    } else {
      add_atom(1);  // a character, an operator or '|' counts one
      ++i;
    }
  }
  std::size_t total = 0;
  for (const Group& group : groups) {
    total = saturating_add(total, group.total);
  }
  return total;
}

Result<std::shared_ptr<const re2::RE2>> compile_bounded_regex(std::string_view pattern) {
  if (pattern.size() > kMaxRegexPatternBytes) {
    return Error{ErrorCode::kTooLarge,
                 "pattern " + quote_pattern(pattern) + " is longer than " +
                     std::to_string(kMaxRegexPatternBytes) + " bytes",
                 {}};
  }
  if (const std::size_t expansion = regex_expansion(pattern); expansion > kMaxRegexExpansion) {
    return Error{ErrorCode::kTooLarge,
                 "pattern " + quote_pattern(pattern) + " expands to more than " +
                     std::to_string(kMaxRegexExpansion) + " nodes (counted repetitions)",
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

}  // namespace topoguard
