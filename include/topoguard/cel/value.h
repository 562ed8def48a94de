// Runtime values of the CEL evaluator: the standard types (null, bool, int, uint, double,
// string, bytes, list, map), the two Kubernetes extension types (semver Version, resource
// Quantity), and the two non-values CEL propagates: an error and an unknown. Values are
// immutable; lists and maps are shared, so copying a Value is cheap.
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "topoguard/cel/ast.h"

namespace topoguard::cel {

// A semantic version (semver.org 2.0.0) as Kubernetes' `semver` library reads it.
struct Version {
  std::uint64_t major = 0;
  std::uint64_t minor = 0;
  std::uint64_t patch = 0;
  std::vector<std::string> prerelease;  // dot-separated identifiers
  std::vector<std::string> build;       // ignored by comparisons

  // Strict semver; with `normalize`, also "v1", "1.2" and leading zeros ("01.02.03").
  [[nodiscard]] static std::optional<Version> parse(std::string_view text, bool normalize = false);
  // Precedence order: <0, 0, >0. Build metadata does not count.
  [[nodiscard]] int compare(const Version& other) const;
};

// A Kubernetes resource quantity ("2Gi", "500m", "1e3"), held exactly in units of 10^-9 the
// way Kubernetes rounds it (finer fractions round up, away from zero).
class Quantity {
 public:
  // Kubernetes' quantity grammar; nullopt when `text` is not a quantity (or its exponent is
  // beyond ±1000, which no device publishes).
  [[nodiscard]] static std::optional<Quantity> parse(std::string_view text);
  [[nodiscard]] static Quantity from_integer(std::int64_t value);

  [[nodiscard]] int compare(const Quantity& other) const;
  [[nodiscard]] int sign() const;
  [[nodiscard]] bool is_integer() const;
  // The value when it is an integer within int64.
  [[nodiscard]] std::optional<std::int64_t> as_integer() const;
  [[nodiscard]] double as_approximate_float() const;
  [[nodiscard]] Quantity plus(const Quantity& other) const;
  [[nodiscard]] Quantity minus(const Quantity& other) const;
  // Exact arithmetic on non-negative quantities (capacity request policies), nullopt when an
  // operand is negative, or an operand or the result is 10^29 or more (10^38 nanos: what is
  // computed exactly here).
  // How many `step`s (> 0) it takes to cover this quantity: ceil(this / step).
  [[nodiscard]] std::optional<std::uint64_t> steps_of(const Quantity& step) const;
  // this × factor.
  [[nodiscard]] std::optional<Quantity> times(std::uint64_t factor) const;
  // Digits after the decimal point without trailing zeros: 0 for "2Gi", 1 for "0.5", 4 for "1500u".
  [[nodiscard]] int decimal_places() const;

 private:
  Quantity(bool negative, std::string nanos);

  bool negative_ = false;
  std::string nanos_ = "0";  // |value| × 10^9 as decimal digits, no leading zeros
};

struct ErrorValue {
  std::string message;
};

// A value the evaluator cannot know: an unbound input, or a feature it does not implement.
struct UnknownValue {
  std::string reason;
};

class Value;
using List = std::vector<Value>;
class MapValue;
using ListPtr = std::shared_ptr<const List>;
using MapPtr = std::shared_ptr<const MapValue>;

// Strings and bytes are held by shared pointer, like lists and maps: a value named again, put in a
// list or bound to a macro variable shares its bytes, so an expression's memory grows with what
// it creates (which the evaluator charges), never with how often it names a value.
using StringPtr = std::shared_ptr<const std::string>;
using BytesPtr = std::shared_ptr<const Bytes>;

class Value {
 public:
  using Variant = std::variant<NullLiteral, bool, std::int64_t, std::uint64_t, double, StringPtr,
                               BytesPtr, ListPtr, MapPtr, Version, Quantity, ErrorValue,
                               UnknownValue>;

  Value() = default;
  template <typename T>
    requires std::is_constructible_v<Variant, T&&>
  Value(T&& value) : variant_(std::forward<T>(value)) {}  // NOLINT(google-explicit-constructor)
  Value(std::string text)  // NOLINT(google-explicit-constructor)
      : variant_(std::make_shared<const std::string>(std::move(text))) {}
  Value(const char* text) : Value(std::string(text)) {}  // NOLINT(google-explicit-constructor)
  Value(Bytes bytes)  // NOLINT(google-explicit-constructor)
      : variant_(std::make_shared<const Bytes>(std::move(bytes))) {}

  [[nodiscard]] const Variant& variant() const { return variant_; }
  // The held value of type T (std::string and Bytes are read through their shared pointer).
  template <typename T>
  [[nodiscard]] const T* get() const {
    if constexpr (std::is_same_v<T, std::string>) {
      const auto* text = std::get_if<StringPtr>(&variant_);
      return text != nullptr ? text->get() : nullptr;
    } else if constexpr (std::is_same_v<T, Bytes>) {
      const auto* bytes = std::get_if<BytesPtr>(&variant_);
      return bytes != nullptr ? bytes->get() : nullptr;
    } else {
      return std::get_if<T>(&variant_);
    }
  }
  template <typename T>
  [[nodiscard]] bool is() const {
    return get<T>() != nullptr;
  }
  [[nodiscard]] bool is_error() const { return is<ErrorValue>(); }
  [[nodiscard]] bool is_unknown() const { return is<UnknownValue>(); }
  // CEL's type name: "int", "list", "semver", ...
  [[nodiscard]] const char* type_name() const;

 private:
  Variant variant_;
};

// A key a CEL map can hold: bool, int, uint (numerically equal int and uint are the same key)
// or string.
struct MapKey {
  enum class Kind { kBool, kNumber, kString };
  Kind kind = Kind::kBool;
  bool negative = false;        // kNumber: sign, kBool: the value
  std::uint64_t magnitude = 0;  // kNumber
  std::string text;             // kString

  // The key `value` is, or would be looked up as (a double with an integral value finds the
  // numeric key); nullopt for other types.
  [[nodiscard]] static std::optional<MapKey> of(const Value& value);
  auto operator<=>(const MapKey&) const = default;
};

class MapValue {
 public:
  // Adds an entry; false when the key is already present.
  bool insert(MapKey key, Value key_value, Value value);
  [[nodiscard]] const Value* find(const MapKey& key) const;
  [[nodiscard]] const std::vector<std::pair<Value, Value>>& entries() const { return entries_; }
  [[nodiscard]] std::size_t size() const { return entries_.size(); }

 private:
  std::vector<std::pair<Value, Value>> entries_;  // in insertion order
  std::map<MapKey, std::size_t> index_;
};

// CEL's `==`: heterogeneous (int, uint and double compare numerically; other type mismatches are
// false), element-wise for lists and maps. The result is a bool, an error or an unknown.
// With `work_left`, every element compared and every ten bytes of string compared use one unit of
// it, and the result is unknown when it runs out (a deep comparison of shared lists can cost far
// more than the lists' memory).
[[nodiscard]] Value equals(const Value& left, const Value& right,
                           std::uint64_t* work_left = nullptr);

}  // namespace topoguard::cel
