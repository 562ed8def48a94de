#include "topoguard/common/duration.h"

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>

namespace topoguard {

namespace {

struct Unit {
  std::string_view name;
  std::int64_t nanoseconds;
};

// Longest names first, so "ms" is not read as "m".
constexpr std::array<Unit, 8> kUnits{{{"ns", 1},
                                      {"us", 1'000},
                                      {"\u00b5s", 1'000},
                                      {"ms", 1'000'000},
                                      {"s", 1'000'000'000},
                                      {"m", 60'000'000'000},
                                      {"h", 3'600'000'000'000},
                                      {"", 0}}};

Error bad(std::string_view text, const std::string& why) {
  return Error{ErrorCode::kInvalidValue,
               "\"" + std::string(text) + "\" is not a duration (" + why + "; e.g. 30s, 5m, 1h30m)",
               {}};
}

}  // namespace

Result<std::chrono::nanoseconds> parse_duration(std::string_view text) {
  if (text == "0") {
    return std::chrono::nanoseconds(0);
  }
  if (text.empty()) {
    return bad(text, "it is empty");
  }
  if (text.front() == '-') {
    return bad(text, "it is negative");
  }
  std::string_view rest = text.front() == '+' ? text.substr(1) : text;
  long double total = 0;
  while (!rest.empty()) {
    std::size_t digits = 0;
    while (digits < rest.size() &&
           ((rest[digits] >= '0' && rest[digits] <= '9') || rest[digits] == '.')) {
      ++digits;
    }
    const std::string_view number = rest.substr(0, digits);
    if (number.empty() || number == "." || number.find('.') != number.rfind('.')) {
      return bad(text, "a number is expected before each unit");
    }
    rest.remove_prefix(digits);
    const Unit* unit = nullptr;
    for (const Unit& candidate : kUnits) {
      if (!candidate.name.empty() && rest.substr(0, candidate.name.size()) == candidate.name) {
        unit = &candidate;
        break;
      }
    }
    if (unit == nullptr) {
      return bad(text, "each number needs a unit: ns, us, ms, s, m or h");
    }
    rest.remove_prefix(unit->name.size());
    long double value = 0;
    long double scale = 1;
    bool fraction = false;
    for (const char c : number) {
      if (c == '.') {
        fraction = true;
        continue;
      }
      if (fraction) {
        scale /= 10;
        value += static_cast<long double>(c - '0') * scale;
      } else {
        value = value * 10 + static_cast<long double>(c - '0');
      }
    }
    total += value * static_cast<long double>(unit->nanoseconds);
    if (total > static_cast<long double>(std::numeric_limits<std::int64_t>::max())) {
      return bad(text, "it is longer than 2562047h");
    }
  }
  return std::chrono::nanoseconds(static_cast<std::int64_t>(std::llround(total)));
}

std::string format_duration(std::chrono::nanoseconds duration) {
  if (duration.count() == 0) {
    return "0s";
  }
  std::string text;
  std::int64_t left = duration.count();
  if (left < 0) {
    text = "-";
    left = -left;
  }
  if (left < 1'000'000'000) {
    for (const auto& [name, size] : {std::pair{"ms", 1'000'000}, std::pair{"us", 1'000}}) {
      if (left % size == 0) {
        return text + std::to_string(left / size) + name;
      }
    }
    return text + std::to_string(left) + "ns";
  }
  const std::int64_t hours = left / 3'600'000'000'000;
  left %= 3'600'000'000'000;
  const std::int64_t minutes = left / 60'000'000'000;
  left %= 60'000'000'000;
  if (hours > 0) {
    text += std::to_string(hours) + "h";
  }
  if (hours > 0 || minutes > 0) {
    text += std::to_string(minutes) + "m";
  }
  text += std::to_string(left / 1'000'000'000);
  if (const std::int64_t nanos = left % 1'000'000'000; nanos != 0) {
    std::string fraction = std::to_string(nanos + 1'000'000'000).substr(1);
    while (fraction.back() == '0') {
      fraction.pop_back();
    }
    text += "." + fraction;
  }
  return text + "s";
}

}  // namespace topoguard
