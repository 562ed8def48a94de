#include "numbers.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace topoguard::cel::numbers {

namespace {

int order(auto left, auto right) { return left < right ? -1 : (left > right ? 1 : 0); }

constexpr double kTwoTo63 = 9223372036854775808.0;
constexpr double kTwoTo64 = 18446744073709551616.0;

// Compares an int with a finite double exactly.
int compare_int_double(std::int64_t integer, double real) {
  if (real >= kTwoTo63) {
    return -1;
  }
  if (real < -kTwoTo63) {
    return 1;
  }
  const double whole = std::trunc(real);
  const auto truncated = static_cast<std::int64_t>(whole);
  if (integer != truncated) {
    return order(integer, truncated);
  }
  return order(0.0, real - whole);
}

int compare_uint_double(std::uint64_t natural, double real) {
  if (real >= kTwoTo64) {
    return -1;
  }
  if (real < 0) {
    return 1;
  }
  const double whole = std::trunc(real);
  const auto truncated = static_cast<std::uint64_t>(whole);
  if (natural != truncated) {
    return order(natural, truncated);
  }
  return order(0.0, real - whole);
}

int compare_int_uint(std::int64_t integer, std::uint64_t natural) {
  if (integer < 0) {
    return -1;
  }
  return order(static_cast<std::uint64_t>(integer), natural);
}

}  // namespace

bool is_number(const Value& value) {
  return value.is<std::int64_t>() || value.is<std::uint64_t>() || value.is<double>();
}

std::optional<int> compare(const Value& left, const Value& right) {
  const auto* left_double = left.get<double>();
  const auto* right_double = right.get<double>();
  if ((left_double != nullptr && std::isnan(*left_double)) ||
      (right_double != nullptr && std::isnan(*right_double))) {
    return std::nullopt;
  }
  if (left_double != nullptr && right_double != nullptr) {
    return order(*left_double, *right_double);
  }
  if (left_double != nullptr) {
    const std::optional<int> reverse = compare(right, left);
    return -*reverse;
  }
  if (const auto* integer = left.get<std::int64_t>()) {
    if (const auto* other = right.get<std::int64_t>()) {
      return order(*integer, *other);
    }
    if (const auto* other = right.get<std::uint64_t>()) {
      return compare_int_uint(*integer, *other);
    }
    return compare_int_double(*integer, *right_double);
  }
  const std::uint64_t natural = *left.get<std::uint64_t>();
  if (const auto* other = right.get<std::uint64_t>()) {
    return order(natural, *other);
  }
  if (const auto* other = right.get<std::int64_t>()) {
    return -compare_int_uint(*other, natural);
  }
  return compare_uint_double(natural, *right_double);
}

}  // namespace topoguard::cel::numbers

namespace topoguard::cel::decimal_digits {

std::string trimmed(std::string digits) {
  const std::size_t first = digits.find_first_not_of('0');
  if (first == std::string::npos) {
    return "0";
  }
  digits.erase(0, first);
  return digits;
}

int compare(std::string_view left, std::string_view right) {
  if (left.size() != right.size()) {
    return left.size() < right.size() ? -1 : 1;
  }
  const int result = left.compare(right);
  return result < 0 ? -1 : (result > 0 ? 1 : 0);
}

std::string plus(std::string_view left, std::string_view right) {
  std::string sum;
  int carry = 0;
  for (std::size_t i = 0; i < std::max(left.size(), right.size()) || carry != 0; ++i) {
    int digit = carry;
    if (i < left.size()) {
      digit += left[left.size() - 1 - i] - '0';
    }
    if (i < right.size()) {
      digit += right[right.size() - 1 - i] - '0';
    }
    sum.push_back(static_cast<char>('0' + digit % 10));
    carry = digit / 10;
  }
  std::reverse(sum.begin(), sum.end());
  return trimmed(std::move(sum));
}

std::string minus(std::string_view left, std::string_view right) {
  std::string difference;
  int borrow = 0;
  for (std::size_t i = 0; i < left.size(); ++i) {
    int digit = left[left.size() - 1 - i] - '0' - borrow;
    if (i < right.size()) {
      digit -= right[right.size() - 1 - i] - '0';
    }
    borrow = digit < 0 ? 1 : 0;
    difference.push_back(static_cast<char>('0' + digit + borrow * 10));
  }
  std::reverse(difference.begin(), difference.end());
  return trimmed(std::move(difference));
}

std::string times_small(std::string_view digits, unsigned factor) {
  std::string product;
  unsigned carry = 0;
  for (std::size_t i = digits.size(); i-- > 0;) {
    const unsigned digit = static_cast<unsigned>(digits[i] - '0') * factor + carry;
    product.push_back(static_cast<char>('0' + digit % 10));
    carry = digit / 10;
  }
  while (carry != 0) {
    product.push_back(static_cast<char>('0' + carry % 10));
    carry /= 10;
  }
  std::reverse(product.begin(), product.end());
  return trimmed(std::move(product));
}

}  // namespace topoguard::cel::decimal_digits
