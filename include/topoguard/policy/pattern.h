// A compiled RE2 pattern with full-match semantics. Compiled once at policy load (quietly, with
// RE2's own error reported through Result) and shared read-only; RE2 matching is thread-safe
// and linear-time, so it is safe on untrusted objects.
#pragma once

#include <memory>
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

 private:
  Pattern(std::string text, std::shared_ptr<const re2::RE2> regex);

  std::string text_;
  std::shared_ptr<const re2::RE2> regex_;
};

// An ordered list of patterns; matches when any pattern fully matches. The patterns are also
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
  std::shared_ptr<const re2::RE2> any_;  // (?:p1)|(?:p2)|...; null when empty or too large
};

}  // namespace topoguard::policy
