#include "derived_attributes.h"

#include <optional>
#include <string_view>
#include <utility>

namespace topoguard::cluster::derived {

namespace {

std::string version_text(const cel::Version& version) {
  std::string text = std::to_string(version.major) + "." + std::to_string(version.minor) + "." +
                     std::to_string(version.patch);
  for (std::size_t i = 0; i < version.prerelease.size(); ++i) {
    text += (i == 0 ? "-" : ".") + version.prerelease[i];
  }
  for (std::size_t i = 0; i < version.build.size(); ++i) {
    text += (i == 0 ? "+" : ".") + version.build[i];
  }
  return text;
}

// One scalar of an attribute, with its type; nullopt for a type attributes cannot hold.
std::optional<std::pair<AttributeValue::Type, AttributeValue::Scalar>> scalar_of(
    const cel::Value& value) {
  if (const auto* number = value.get<std::int64_t>()) {
    return std::pair(AttributeValue::Type::kInt, AttributeValue::Scalar(*number));
  }
  if (const auto* flag = value.get<bool>()) {
    return std::pair(AttributeValue::Type::kBool, AttributeValue::Scalar(*flag));
  }
  if (const auto* text = value.get<std::string>()) {
    return std::pair(AttributeValue::Type::kString, AttributeValue::Scalar(*text));
  }
  if (const auto* version = value.get<cel::Version>()) {
    return std::pair(AttributeValue::Type::kVersion,
                     AttributeValue::Scalar(version_text(*version)));
  }
  return std::nullopt;
}

Outcome wrong_type(std::string_view type) {
  return Outcome{State::kError,
                 {},
                 "the expression evaluates to " + std::string(type) +
                     ", not a string, int, bool or semver or a list of one of them",
                 false};
}

}  // namespace

Outcome evaluate(const cel::Program& program, const cel::DeviceView& device,
                 cel::CostBudget& budget) {
  const cel::ValueEvaluation evaluation = cel::evaluate_device_value(program, device, &budget);
  const cel::Value& value = evaluation.value;
  if (const auto* error = value.get<cel::ErrorValue>()) {
    return Outcome{State::kError, {}, error->message, false};
  }
  if (const auto* unknown = value.get<cel::UnknownValue>()) {
    return Outcome{State::kUnknown, {}, unknown->reason, evaluation.budget_exhausted};
  }
  Outcome out{State::kValue, {}, {}, false};
  if (const auto scalar = scalar_of(value)) {
    out.value.type = scalar->first;
    out.value.values.push_back(std::move(scalar->second));
    return out;
  }
  const auto* list = value.get<cel::ListPtr>();
  if (list == nullptr) {
    return wrong_type(value.type_name());
  }
  if ((*list)->empty()) {
    // Which attribute type an empty list is, and how the allocator then compares it, is not
    // documented.
    return Outcome{State::kUnknown, {}, "the expression evaluates to an empty list", false};
  }
  out.value.list = true;
  for (const cel::Value& element : **list) {
    if (const auto* error = element.get<cel::ErrorValue>()) {
      return Outcome{State::kError, {}, error->message, false};
    }
    if (element.is_unknown()) {
      return Outcome{State::kUnknown, {}, element.get<cel::UnknownValue>()->reason, false};
    }
    auto scalar = scalar_of(element);
    if (!scalar) {
      return wrong_type(std::string("a list holding ") + element.type_name());
    }
    if (!out.value.values.empty() && scalar->first != out.value.type) {
      return wrong_type("a list of mixed types");
    }
    out.value.type = scalar->first;
    out.value.values.push_back(std::move(scalar->second));
  }
  return out;
}

}  // namespace topoguard::cluster::derived
