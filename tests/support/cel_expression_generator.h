// Random CEL expressions for testing the evaluator's cost and memory limits: trees of the
// operations that create or traverse values (string and list concatenation, list and map
// literals, the macros, matches, contains, size, ==, in), nested to a bounded depth, with the
// amplifying shapes hostile selectors use (a value doubled inside a macro, a pattern built by
// concatenation). Choices come from a source of small numbers: a fuzzer's input bytes or a seeded
// generator, so the same source always gives the same expression.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <utility>

namespace topoguard::testing {

class CelExpressionGenerator {
 public:
  // `next(bound)` returns a number in [0, bound).
  explicit CelExpressionGenerator(std::function<unsigned(unsigned)> next)
      : next_(std::move(next)) {}

  // A bool-valued expression (most often; type errors are part of the test too).
  std::string expression(int depth) { return boolean(depth); }

 private:
  unsigned pick(unsigned bound) { return bound == 0 ? 0 : next_(bound) % bound; }

  // A variable bound by an enclosing macro, when there is one.
  std::string variable() {
    if (variables_ == 0) {
      return "\"v\"";
    }
    return "v" + std::to_string(pick(variables_));
  }

  std::string string_literal() {
    switch (pick(6)) {
      case 0:
        return "\"\"";
      case 1:
        return "\"" + std::string(256, 'a') + "\"";
      case 2:
        return "\"(a|b|c)*d{1,200}\"";
      case 3:
        return "\"gpu.nvidia.com\"";
      case 4:
        return "\"((x+x+)+y)\"";
      default:
        return "\"" + std::string(1 + pick(40), static_cast<char>('a' + pick(26))) + "\"";
    }
  }

  std::string string(int depth) {
    if (depth <= 0) {
      return pick(3) == 0 ? variable() : string_literal();
    }
    switch (pick(8)) {
      case 0:
        return "(" + string(depth - 1) + " + " + string(depth - 1) + ")";
      case 1:
      case 7: {
        const std::string item = string(depth - 1);
        const std::string name = bind();
        unbind();
        return "[" + item + "].map(" + name + ", " + name + " + " + name + ")[0]";
      }
      case 2:
        return macro(list(depth - 1), "map", [&] { return string(depth - 1); }) + "[0]";
      case 3:
        return "device.driver";
      case 4:
        return "(" + boolean(depth - 1) + " ? " + string(depth - 1) + " : " + string(depth - 1) +
               ")";
      default:
        return string(0);
    }
  }

  // Binds a new macro variable and returns its name; unbind() ends it.
  std::string bind() { return "v" + std::to_string(variables_++); }
  void unbind() { --variables_; }

  // `range.name(v, body)`, with v bound while the body is made.
  template <typename Body>
  std::string macro(const std::string& range, const char* name, const Body& body) {
    const std::string variable_name = bind();
    const std::string text = body();
    unbind();
    return range + "." + name + "(" + variable_name + ", " + text + ")";
  }

  static std::string long_range() {
    std::string elements;
    for (int i = 0; i < 256; ++i) {
      elements += (i == 0 ? "" : ",") + std::to_string(i);
    }
    return "[" + elements + "]";
  }

  std::string list(int depth) {
    if (depth <= 0) {
      std::string elements;
      // Now and then a long range, so that nested macros multiply into the limits.
      const unsigned count = pick(4) == 0 ? 256 : pick(6);
      for (unsigned i = 0; i < count; ++i) {
        elements += (i == 0 ? "" : ", ") + (pick(2) == 0 ? std::to_string(pick(100)) : string(0));
      }
      return "[" + elements + "]";
    }
    switch (pick(6)) {
      case 0:
        return "(" + list(depth - 1) + " + " + list(depth - 1) + ")";
      case 1:
        return macro(list(depth - 1), "map", [&] { return list(depth - 1); });
      case 2:
        return macro(list(depth - 1), "filter", [&] { return boolean(depth - 1); });
      case 3: {
        const std::string first = list(depth - 1);
        const std::string second = list(depth - 1);
        return "[" + first + ", " + second + ", " + string(depth - 1) + "]";
      }
      case 4: {
        const std::string key = string(depth - 1);
        return macro("{" + key + ": " + list(depth - 1) + "}", "map", [&] { return variable(); });
      }
      default:
        return list(0);
    }
  }

  std::string boolean(int depth) {
    if (depth <= 0) {
      return pick(2) == 0 ? "true" : "device.driver == " + string_literal();
    }
    switch (pick(13)) {
      case 0:
        return string(depth - 1) + ".matches(" + string(depth - 1) + ")";
      case 1:
        return string(depth - 1) + ".contains(" + string(depth - 1) + ")";
      case 2:
        return string(depth - 1) + ".startsWith(" + string(depth - 1) + ")";
      case 3:
        return "(" + string(depth - 1) + " == " + string(depth - 1) + ")";
      case 4:
        return "(" + list(depth - 1) + " == " + list(depth - 1) + ")";
      case 5:
        return "(" + string(depth - 1) + " in " + list(depth - 1) + ")";
      case 6:
        return macro(list(depth - 1), "all", [&] { return boolean(depth - 1); });
      case 7:
        return macro(list(depth - 1), "exists", [&] { return boolean(depth - 1); });
      case 8:
        return "size(" + string(depth - 1) + ") > " + std::to_string(pick(1000));
      case 11:
        // Two long ranges nested: the iterations multiply.
        return macro(long_range(), "all", [&] {
          return macro(long_range(), "exists", [&] { return boolean(depth - 1); });
        });
      case 9:
        return "(" + boolean(depth - 1) + " && " + boolean(depth - 1) + ")";
      case 10:
        return "(" + boolean(depth - 1) + " || " + boolean(depth - 1) + ")";
      default:
        return "size(" + list(depth - 1) + ") >= 0";
    }
  }

  std::function<unsigned(unsigned)> next_;
  unsigned variables_ = 0;
};

}  // namespace topoguard::testing
