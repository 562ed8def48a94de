#include "topoguard/cel/value.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "numbers.h"

namespace topoguard::cel {

namespace {

bool all_digits(std::string_view text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::optional<std::uint64_t> parse_number_part(std::string_view text) {
  if (!all_digits(text) || (text.size() > 1 && text.front() == '0')) {
    return std::nullopt;
  }
  std::uint64_t value = 0;
  for (char c : text) {
    const auto digit = static_cast<std::uint64_t>(c - '0');
    if (value > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) {
      return std::nullopt;
    }
    value = value * 10 + digit;
  }
  return value;
}

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  for (;;) {
    const std::size_t end = text.find(separator, start);
    parts.push_back(text.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) {
      return parts;
    }
    start = end + 1;
  }
}

bool identifier_chars(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-';
  });
}

// "v1.2" -> "1.2.0", "01.002.3" -> "1.2.3" (Kubernetes' semver(text, true)).
std::string normalize_version(std::string_view text) {
  if (text.starts_with('v')) {
    text.remove_prefix(1);
  }
  const std::size_t core_end = text.find_first_of("-+");
  std::string_view core = text.substr(0, core_end);
  const std::string_view rest = core_end == std::string_view::npos ? "" : text.substr(core_end);
  std::vector<std::string_view> parts = split(core, '.');
  std::string normalized;
  for (std::size_t i = 0; i < 3; ++i) {
    std::string_view part = i < parts.size() ? parts[i] : "0";
    while (part.size() > 1 && part.front() == '0') {
      part.remove_prefix(1);
    }
    normalized += std::string(part) + (i < 2 ? "." : "");
  }
  if (parts.size() > 3) {
    return std::string(text);  // not normalisable; strict parsing rejects it
  }
  return normalized + std::string(rest);
}

int compare_identifiers(std::string_view left, std::string_view right) {
  const bool left_numeric = all_digits(left);
  const bool right_numeric = all_digits(right);
  if (left_numeric && right_numeric) {
    if (left.size() != right.size()) {
      return left.size() < right.size() ? -1 : 1;
    }
  } else if (left_numeric != right_numeric) {
    return left_numeric ? -1 : 1;
  }
  const int order = left.compare(right);
  return order < 0 ? -1 : (order > 0 ? 1 : 0);
}

// Unsigned 128-bit integers hold 38 decimal digits: enough for any capacity a device publishes in
// nanos (an int64 count of units is 19 digits, plus 9 for the nanos).
__extension__ typedef unsigned __int128 Nanos;  // NOLINT(modernize-use-using): __extension__
constexpr std::size_t kMaxNanosDigits = 38;

std::optional<Nanos> to_nanos(const std::string& digits) {
  if (digits.size() > kMaxNanosDigits) {
    return std::nullopt;
  }
  Nanos value = 0;
  for (char c : digits) {
    value = value * 10 + static_cast<Nanos>(c - '0');
  }
  return value;
}

std::string from_nanos(Nanos value) {
  std::string digits;
  do {
    digits.push_back(static_cast<char>('0' + static_cast<int>(value % 10)));
    value /= 10;
  } while (value != 0);
  return {digits.rbegin(), digits.rend()};
}

}  // namespace

std::optional<Version> Version::parse(std::string_view text, bool normalize) {
  std::string normalized;
  if (normalize) {
    normalized = normalize_version(text);
    text = normalized;
  }
  Version version;
  const std::size_t plus = text.find('+');
  if (plus != std::string_view::npos) {
    for (std::string_view identifier : split(text.substr(plus + 1), '.')) {
      if (!identifier_chars(identifier)) {
        return std::nullopt;
      }
      version.build.emplace_back(identifier);
    }
    text = text.substr(0, plus);
  }
  const std::size_t dash = text.find('-');
  if (dash != std::string_view::npos) {
    for (std::string_view identifier : split(text.substr(dash + 1), '.')) {
      if (!identifier_chars(identifier) ||
          (all_digits(identifier) && identifier.size() > 1 && identifier.front() == '0')) {
        return std::nullopt;
      }
      version.prerelease.emplace_back(identifier);
    }
    text = text.substr(0, dash);
  }
  const std::vector<std::string_view> parts = split(text, '.');
  if (parts.size() != 3) {
    return std::nullopt;
  }
  const auto major = parse_number_part(parts[0]);
  const auto minor = parse_number_part(parts[1]);
  const auto patch = parse_number_part(parts[2]);
  if (!major || !minor || !patch) {
    return std::nullopt;
  }
  version.major = *major;
  version.minor = *minor;
  version.patch = *patch;
  return version;
}

int Version::compare(const Version& other) const {
  for (const auto& [mine, theirs] : {std::pair{major, other.major}, std::pair{minor, other.minor},
                                     std::pair{patch, other.patch}}) {
    if (mine != theirs) {
      return mine < theirs ? -1 : 1;
    }
  }
  if (prerelease.empty() || other.prerelease.empty()) {
    return prerelease.empty() == other.prerelease.empty() ? 0 : (prerelease.empty() ? 1 : -1);
  }
  const std::size_t common = std::min(prerelease.size(), other.prerelease.size());
  for (std::size_t i = 0; i < common; ++i) {
    if (const int order = compare_identifiers(prerelease[i], other.prerelease[i]); order != 0) {
      return order;
    }
  }
  if (prerelease.size() == other.prerelease.size()) {
    return 0;
  }
  return prerelease.size() < other.prerelease.size() ? -1 : 1;
}

Quantity::Quantity(bool negative, std::string nanos)
    : negative_(negative && nanos != "0"), nanos_(std::move(nanos)) {}

std::optional<Quantity> Quantity::parse(std::string_view text) {
  constexpr int kMaxExponent = 1000;
  std::size_t at = 0;
  bool negative = false;
  if (at < text.size() && (text[at] == '+' || text[at] == '-')) {
    negative = text[at] == '-';
    ++at;
  }
  const std::size_t integer_start = at;
  while (at < text.size() && text[at] >= '0' && text[at] <= '9') {
    ++at;
  }
  std::string digits(text.substr(integer_start, at - integer_start));
  std::size_t fraction_digits = 0;
  if (at < text.size() && text[at] == '.') {
    const std::size_t fraction_start = ++at;
    while (at < text.size() && text[at] >= '0' && text[at] <= '9') {
      ++at;
    }
    fraction_digits = at - fraction_start;
    digits += text.substr(fraction_start, fraction_digits);
  }
  if (digits.empty()) {
    return std::nullopt;
  }
  const std::string_view suffix = text.substr(at);
  int exponent = 0;       // power of ten
  int binary_power = 0;   // power of 1024
  static constexpr std::array<std::pair<std::string_view, int>, 10> kDecimal = {{
      {"n", -9}, {"u", -6}, {"m", -3}, {"", 0}, {"k", 3}, {"M", 6}, {"G", 9}, {"T", 12},
      {"P", 15}, {"E", 18}}};
  static constexpr std::array<std::string_view, 6> kBinary = {"Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  const auto decimal = std::find_if(kDecimal.begin(), kDecimal.end(),
                                    [&](const auto& entry) { return entry.first == suffix; });
  const auto binary = std::find(kBinary.begin(), kBinary.end(), suffix);
  if (decimal != kDecimal.end()) {
    exponent = decimal->second;
  } else if (binary != kBinary.end()) {
    binary_power = static_cast<int>(binary - kBinary.begin()) + 1;
  } else if (suffix.size() >= 2 && (suffix[0] == 'e' || suffix[0] == 'E')) {
    std::string_view power = suffix.substr(1);
    bool power_negative = false;
    if (power.front() == '+' || power.front() == '-') {
      power_negative = power.front() == '-';
      power.remove_prefix(1);
    }
    if (!all_digits(power)) {
      return std::nullopt;
    }
    if (power.size() > 4 || std::stoi(std::string(power)) > kMaxExponent) {
      return std::nullopt;
    }
    exponent = std::stoi(std::string(power)) * (power_negative ? -1 : 1);
  } else {
    return std::nullopt;
  }
  for (int i = 0; i < binary_power; ++i) {
    digits = decimal_digits::times_small(digits, 1024);
  }
  // digits × 10^(exponent - fraction_digits) in units of 10^-9.
  const int scale = exponent - static_cast<int>(fraction_digits) + 9;
  if (scale >= 0) {
    digits.append(static_cast<std::size_t>(scale), '0');
  } else {
    const auto cut = std::min(digits.size(), static_cast<std::size_t>(-scale));
    const bool remainder = digits.find_first_not_of('0', digits.size() - cut) != std::string::npos;
    digits.resize(digits.size() - cut);
    if (digits.empty()) {
      digits = "0";
    }
    if (remainder) {
      digits = decimal_digits::plus(digits, "1");
    }
  }
  return Quantity(negative, decimal_digits::trimmed(digits));
}

Quantity Quantity::from_integer(std::int64_t value) {
  const bool negative = value < 0;
  const std::uint64_t magnitude =
      negative ? 0 - static_cast<std::uint64_t>(value) : static_cast<std::uint64_t>(value);
  return Quantity(negative, decimal_digits::trimmed(std::to_string(magnitude) + "000000000"));
}

int Quantity::sign() const {
  if (nanos_ == "0") {
    return 0;
  }
  return negative_ ? -1 : 1;
}

int Quantity::compare(const Quantity& other) const {
  if (sign() != other.sign()) {
    return sign() < other.sign() ? -1 : 1;
  }
  const int magnitude = decimal_digits::compare(nanos_, other.nanos_);
  return negative_ ? -magnitude : magnitude;
}

bool Quantity::is_integer() const { return as_integer().has_value(); }

std::optional<std::int64_t> Quantity::as_integer() const {
  if (nanos_.size() <= 9) {
    if (nanos_ == "0") {
      return 0;
    }
    return std::nullopt;
  }
  if (nanos_.compare(nanos_.size() - 9, 9, "000000000") != 0) {
    return std::nullopt;
  }
  const std::string whole = nanos_.substr(0, nanos_.size() - 9);
  const std::string limit = negative_ ? "9223372036854775808" : "9223372036854775807";
  if (decimal_digits::compare(whole, limit) > 0) {
    return std::nullopt;
  }
  const std::uint64_t magnitude = std::stoull(whole);
  return negative_ ? static_cast<std::int64_t>(0 - magnitude) : static_cast<std::int64_t>(magnitude);
}

double Quantity::as_approximate_float() const {
  const double magnitude = std::strtod((nanos_ + "e-9").c_str(), nullptr);
  return negative_ ? -magnitude : magnitude;
}

Quantity Quantity::plus(const Quantity& other) const {
  if (negative_ == other.negative_) {
    return Quantity(negative_, decimal_digits::plus(nanos_, other.nanos_));
  }
  // Opposite signs: the larger magnitude wins.
  if (decimal_digits::compare(nanos_, other.nanos_) >= 0) {
    return Quantity(negative_, decimal_digits::minus(nanos_, other.nanos_));
  }
  return Quantity(other.negative_, decimal_digits::minus(other.nanos_, nanos_));
}

Quantity Quantity::minus(const Quantity& other) const {
  return plus(Quantity(!other.negative_, other.nanos_));
}

std::optional<std::uint64_t> Quantity::steps_of(const Quantity& step) const {
  const auto value = to_nanos(nanos_);
  const auto size = to_nanos(step.nanos_);
  if (negative_ || step.negative_ || !value || !size || *size == 0) {
    return std::nullopt;
  }
  const Nanos steps = *value / *size + (*value % *size != 0 ? 1 : 0);
  if (steps > std::numeric_limits<std::uint64_t>::max()) {
    return std::nullopt;
  }
  return static_cast<std::uint64_t>(steps);
}

std::optional<Quantity> Quantity::times(std::uint64_t factor) const {
  const auto value = to_nanos(nanos_);
  if (negative_ || !value) {
    return std::nullopt;
  }
  std::string limit(kMaxNanosDigits, '9');
  const Nanos largest = *to_nanos(limit);
  if (factor != 0 && *value > largest / factor) {
    return std::nullopt;
  }
  return Quantity(false, from_nanos(*value * factor));
}

int Quantity::decimal_places() const {
  const std::size_t zeros = nanos_.size() - 1 - nanos_.find_last_not_of('0');
  return nanos_ == "0" ? 0 : 9 - static_cast<int>(std::min<std::size_t>(zeros, 9));
}

const char* Value::type_name() const {
  static constexpr std::array<const char*, 13> kNames = {
      "null_type", "bool", "int", "uint", "double", "string", "bytes", "list", "map",
      "kubernetes.Semver", "kubernetes.Quantity", "error", "unknown"};
  static_assert(std::variant_size_v<Variant> == kNames.size());
  return kNames[variant_.index()];
}

std::optional<MapKey> MapKey::of(const Value& value) {
  MapKey key;
  if (const auto* boolean = value.get<bool>()) {
    key.kind = Kind::kBool;
    key.negative = *boolean;
    return key;
  }
  if (const auto* text = value.get<std::string>()) {
    key.kind = Kind::kString;
    key.text = *text;
    return key;
  }
  key.kind = Kind::kNumber;
  if (const auto* integer = value.get<std::int64_t>()) {
    key.negative = *integer < 0;
    key.magnitude = key.negative ? 0 - static_cast<std::uint64_t>(*integer)
                                 : static_cast<std::uint64_t>(*integer);
    return key;
  }
  if (const auto* natural = value.get<std::uint64_t>()) {
    key.magnitude = *natural;
    return key;
  }
  if (const auto* real = value.get<double>()) {
    // Only an integral double within int64/uint64 range finds a numeric key.
    if (!std::isfinite(*real) || std::trunc(*real) != *real || *real <= -9223372036854775809.0 ||
        *real >= 18446744073709551616.0) {
      return std::nullopt;
    }
    key.negative = *real < 0;
    key.magnitude = key.negative ? static_cast<std::uint64_t>(-*real)
                                 : static_cast<std::uint64_t>(*real);
    key.negative = key.negative && key.magnitude != 0;
    return key;
  }
  return std::nullopt;
}

bool MapValue::insert(MapKey key, Value key_value, Value value) {
  const auto [where, inserted] = index_.emplace(std::move(key), entries_.size());
  if (inserted) {
    entries_.emplace_back(std::move(key_value), std::move(value));
  }
  return inserted;
}

const Value* MapValue::find(const MapKey& key) const {
  const auto where = index_.find(key);
  return where == index_.end() ? nullptr : &entries_[where->second].second;
}

namespace {

// One unit for every ten bytes of a string or bytes compared (cel-go's traversal factor), and one
// for every element or entry: what a deep comparison costs when `work_left` bounds it.
bool spend(std::uint64_t* work_left, std::uint64_t units) {
  if (work_left == nullptr) {
    return true;
  }
  if (*work_left < units) {
    *work_left = 0;
    return false;
  }
  *work_left -= units;
  return true;
}

Value out_of_work() { return UnknownValue{"comparison exceeds the cost limit"}; }

}  // namespace

Value equals(const Value& left, const Value& right, std::uint64_t* work_left) {
  if (left.is_unknown() || left.is_error()) {
    return left;
  }
  if (right.is_unknown() || right.is_error()) {
    return right;
  }
  if (!spend(work_left, 1)) {
    return out_of_work();
  }
  if (numbers::is_number(left) && numbers::is_number(right)) {
    const auto order = numbers::compare(left, right);
    return order.has_value() && *order == 0;
  }
  // Kubernetes' extension types only compare with their own kind.
  if (const auto* version = left.get<Version>()) {
    const auto* other = right.get<Version>();
    if (other == nullptr) {
      return ErrorValue{std::string("no such overload: kubernetes.Semver == ") + right.type_name()};
    }
    return version->compare(*other) == 0;
  }
  if (const auto* quantity = left.get<Quantity>()) {
    const auto* other = right.get<Quantity>();
    if (other == nullptr) {
      return ErrorValue{std::string("no such overload: kubernetes.Quantity == ") +
                        right.type_name()};
    }
    return quantity->compare(*other) == 0;
  }
  if (left.variant().index() != right.variant().index()) {
    return false;
  }
  if (const auto* list = left.get<ListPtr>()) {
    const List& other = **right.get<ListPtr>();
    if ((*list)->size() != other.size()) {
      return false;
    }
    for (std::size_t i = 0; i < other.size(); ++i) {
      Value element = equals((**list)[i], other[i], work_left);
      if (!element.is<bool>() || !*element.get<bool>()) {
        return element;
      }
    }
    return true;
  }
  if (const auto* map = left.get<MapPtr>()) {
    const MapValue& other = **right.get<MapPtr>();
    if ((*map)->size() != other.size()) {
      return false;
    }
    for (const auto& [key, value] : (*map)->entries()) {
      const Value* found = other.find(*MapKey::of(key));
      if (found == nullptr) {
        return false;
      }
      Value element = equals(value, *found, work_left);
      if (!element.is<bool>() || !*element.get<bool>()) {
        return element;
      }
    }
    return true;
  }
  return std::visit(
      [&right, work_left](const auto& mine) -> Value {
        using T = std::decay_t<decltype(mine)>;
        if constexpr (std::is_same_v<T, NullLiteral>) {
          return true;
        } else if constexpr (std::is_same_v<T, bool>) {
          return mine == *right.get<T>();
        } else if constexpr (std::is_same_v<T, StringPtr> || std::is_same_v<T, BytesPtr>) {
          const auto& theirs = std::get<T>(right.variant());
          if constexpr (std::is_same_v<T, StringPtr>) {
            if (!spend(work_left, std::min(mine->size(), theirs->size()) / 10)) {
              return out_of_work();
            }
          } else if (!spend(work_left, std::min(mine->data.size(), theirs->data.size()) / 10)) {
            return out_of_work();
          }
          return *mine == *theirs;
        } else {
          return ErrorValue{"internal: unhandled equality"};
        }
      },
      left.variant());
}

}  // namespace topoguard::cel
