// Numeric helpers shared by the values and the evaluator: CEL's exact cross-type comparison of
// int, uint and double, and arbitrary-length decimal arithmetic for quantities.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "topoguard/cel/value.h"

namespace topoguard::cel::numbers {

[[nodiscard]] bool is_number(const Value& value);
// <0, 0, >0 comparing two numbers exactly, whatever their types; nullopt when either is NaN.
[[nodiscard]] std::optional<int> compare(const Value& left, const Value& right);

}  // namespace topoguard::cel::numbers

// Non-negative integers as decimal digit strings without leading zeros ("0" for zero).
namespace topoguard::cel::decimal_digits {

[[nodiscard]] std::string trimmed(std::string digits);
[[nodiscard]] int compare(std::string_view left, std::string_view right);
[[nodiscard]] std::string plus(std::string_view left, std::string_view right);
// left - right, for left >= right.
[[nodiscard]] std::string minus(std::string_view left, std::string_view right);
[[nodiscard]] std::string times_small(std::string_view digits, unsigned factor);

}  // namespace topoguard::cel::decimal_digits
