// Result<T>: the value of a fallible operation or an Error{code, message, location}.
// Spelled like std::expected so a later switch is an alias; no exceptions cross module
// boundaries, every parser returns one of these.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

#include "topoguard/common/source_location.h"

namespace topoguard {

enum class ErrorCode {
  kIo,             // a file or stream could not be read or written
  kInvalidYaml,    // YAML syntax error
  kInvalidJson,    // JSON syntax error
  kTooLarge,       // input exceeds a size limit
  kTooDeep,        // input nests deeper than the limit
  kDuplicateKey,   // a mapping repeats a key
  kMissingField,   // a required field is absent
  kUnknownField,   // a field the schema does not know
  kWrongType,      // a field has the wrong JSON type
  kInvalidValue,   // a field has a value outside its domain
  kInvalidPattern, // an RE2 pattern does not compile
  kUnknownRule,    // a rule id that is not part of the contract
  kUsage,          // a command-line usage error
  kInternal,       // a broken invariant caught at a boundary
};

// Stable, machine-matchable name of a code, e.g. "invalid_yaml".
[[nodiscard]] const char* error_code_name(ErrorCode code);

struct Error {
  ErrorCode code = ErrorCode::kInternal;
  std::string message;
  SourceLocation location;

  // "file:line: field: message [code]" with the parts that are known.
  [[nodiscard]] std::string to_string() const;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(Error error) : state_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  [[nodiscard]] bool has_value() const { return state_.index() == 0; }
  explicit operator bool() const { return has_value(); }

  [[nodiscard]] T& value() & {
    assert(has_value());
    return std::get<0>(state_);
  }
  [[nodiscard]] const T& value() const& {
    assert(has_value());
    return std::get<0>(state_);
  }
  [[nodiscard]] T&& value() && {
    assert(has_value());
    return std::get<0>(std::move(state_));
  }
  [[nodiscard]] const Error& error() const {
    assert(!has_value());
    return std::get<1>(state_);
  }

  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Error> state_;
};

// Result of an operation with no value.
struct Ok {};
using Status = Result<Ok>;

}  // namespace topoguard
