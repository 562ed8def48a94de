// A compiled RE2 pattern with full-match semantics. Compiled once at policy load (quietly, with
// RE2's own error reported through Result) and shared read-only; RE2 matching is thread-safe
// and linear-time, so it is safe on untrusted objects.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "topoguard/common/result.h"

namespace re2 {
class RE2;
}

namespace topoguard::policy {

class Pattern {
 public:
  // Compiles `text`; the error carries RE2's reason and `location`.
  [[nodiscard]] static Result<Pattern> compile(std::string_view text, SourceLocation location);

  [[nodiscard]] bool full_match(std::string_view subject) const;
  [[nodiscard]] const std::string& text() const { return text_; }
  // The one string the pattern matches when it is a literal (see literal_of).
  [[nodiscard]] const std::optional<std::string>& literal() const { return literal_; }

 private:
  Pattern(std::string text, std::shared_ptr<const re2::RE2> regex);

  std::string text_;
  std::optional<std::string> literal_;
  std::shared_ptr<const re2::RE2> regex_;
};

// An ordered list of patterns; matches when any pattern fully matches. Patterns that stand for
// one literal string (`gpu\.nvidia\.com`, most of them) are compared as strings: an RE2 match
// costs far more than a comparison, and roles are looked up for every request. The others are
// compiled into one alternation, so a match is one RE2 pass however long the list.
class PatternList {
 public:
  PatternList() = default;
  explicit PatternList(std::vector<Pattern> patterns);

  [[nodiscard]] bool matches_any(std::string_view subject) const;
  [[nodiscard]] bool empty() const { return patterns_.empty(); }
  [[nodiscard]] const std::vector<Pattern>& patterns() const { return patterns_; }

 private:
  std::vector<Pattern> patterns_;
  std::vector<std::string> literals_;        // sorted: the strings the literal patterns match
  std::vector<Pattern> expressions_;        // the other patterns
  std::shared_ptr<const re2::RE2> any_;  // (?:p1)|(?:p2)|... of expressions_; null when empty
                                         // or too large
};

// The one string `pattern` fully matches when it is a literal (letters, digits, punctuation that
// is no RE2 operator, and escaped punctuation), nullopt for anything else.
[[nodiscard]] std::optional<std::string> literal_of(std::string_view pattern);

}  // namespace topoguard::policy
