#include "topoguard/policy/pattern.h"

#include <algorithm>

#include <re2/re2.h>

namespace topoguard::policy {

Pattern::Pattern(std::string text, std::shared_ptr<const re2::RE2> regex)
    : text_(std::move(text)), regex_(std::move(regex)) {}

Result<Pattern> Pattern::compile(std::string_view text, SourceLocation location) {
  auto regex = std::make_shared<const re2::RE2>(re2::StringPiece(text.data(), text.size()),
                                                re2::RE2::Quiet);
  if (!regex->ok()) {
    std::string message = "invalid RE2 pattern \"" + std::string(text) + "\": " + regex->error();
    if (!regex->error_arg().empty() && regex->error().find(regex->error_arg()) == std::string::npos) {
      message += " at \"" + regex->error_arg() + "\"";
    }
    return Error{ErrorCode::kInvalidPattern, std::move(message), std::move(location)};
  }
  return Pattern(std::string(text), std::move(regex));
}

bool Pattern::full_match(std::string_view subject) const {
  return re2::RE2::FullMatch(re2::StringPiece(subject.data(), subject.size()), *regex_);
}

PatternList::PatternList(std::vector<Pattern> patterns) : patterns_(std::move(patterns)) {
  if (patterns_.empty()) {
    return;
  }
  std::string alternation;
  for (const Pattern& pattern : patterns_) {
    alternation += (alternation.empty() ? "(?:" : "|(?:") + pattern.text() + ")";
  }
  auto any = std::make_shared<const re2::RE2>(alternation, re2::RE2::Quiet);
  if (any->ok()) {
    any_ = std::move(any);
  }
}

bool PatternList::matches_any(std::string_view subject) const {
  if (any_) {
    return re2::RE2::FullMatch(re2::StringPiece(subject.data(), subject.size()), *any_);
  }
  return std::any_of(patterns_.begin(), patterns_.end(),
                     [subject](const Pattern& pattern) { return pattern.full_match(subject); });
}

}  // namespace topoguard::policy
