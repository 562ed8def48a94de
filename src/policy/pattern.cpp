#include "topoguard/policy/pattern.h"

#include <algorithm>

#include <re2/re2.h>

#include "topoguard/common/bounded_regex.h"

namespace topoguard::policy {

Pattern::Pattern(std::string text, std::shared_ptr<const re2::RE2> regex)
    : text_(std::move(text)), literal_(literal_of(text_)), regex_(std::move(regex)) {}

Result<Pattern> Pattern::compile(std::string_view text, SourceLocation location) {
  auto regex = compile_bounded_regex(text);
  if (!regex) {
    Error error = regex.error();
    error.location = std::move(location);
    return error;
  }
  return Pattern(std::string(text), *std::move(regex));
}

bool Pattern::full_match(std::string_view subject) const {
  if (literal_) {
    return subject == *literal_;
  }
  return re2::RE2::FullMatch(re2::StringPiece(subject.data(), subject.size()), *regex_);
}

std::optional<std::string> literal_of(std::string_view pattern) {
  // Outside a class, none of these is an RE2 operator; every other ASCII punctuation character
  // is one somewhere (or starts a flag group or a class), and non-ASCII is left to RE2.
  constexpr std::string_view kPlainPunctuation = "-_/:=@,%&~<>'\"!; #`";
  const auto is_plain = [kPlainPunctuation](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           kPlainPunctuation.find(c) != std::string_view::npos;
  };
  const auto is_ascii_punctuation = [](char c) {
    return c > ' ' && c < 0x7F && !((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                                     (c >= '0' && c <= '9'));
  };
  std::string literal;
  literal.reserve(pattern.size());
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\') {
      // An escaped punctuation character is itself; \d, \Q, \x41, ... are not literals here.
      if (i + 1 == pattern.size() || !is_ascii_punctuation(pattern[i + 1])) {
        return std::nullopt;
      }
      literal += pattern[++i];
    } else if (is_plain(c)) {
      literal += c;
    } else {
      return std::nullopt;
    }
  }
  return literal;
}

PatternList::PatternList(std::vector<Pattern> patterns) : patterns_(std::move(patterns)) {
  std::string alternation;
  for (const Pattern& pattern : patterns_) {
    if (pattern.literal()) {
      literals_.push_back(*pattern.literal());
      continue;
    }
    expressions_.push_back(pattern);
    alternation += (alternation.empty() ? "(?:" : "|(?:") + pattern.text() + ")";
  }
  std::sort(literals_.begin(), literals_.end());
  if (alternation.empty()) {
    return;
  }
  // One program for all: when it is over the limits, each pattern is tried on its own.
  if (auto any = compile_bounded_regex(alternation)) {
    any_ = *std::move(any);
  }
}

bool PatternList::matches_any(std::string_view subject) const {
  if (std::binary_search(literals_.begin(), literals_.end(), subject,
                         [](std::string_view a, std::string_view b) { return a < b; })) {
    return true;
  }
  if (any_) {
    return re2::RE2::FullMatch(re2::StringPiece(subject.data(), subject.size()), *any_);
  }
  return std::any_of(expressions_.begin(), expressions_.end(),
                     [subject](const Pattern& pattern) { return pattern.full_match(subject); });
}

}  // namespace topoguard::policy
