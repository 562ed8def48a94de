#include "selector_match.h"

#include <algorithm>

namespace topoguard::cluster {

namespace {

// A list-valued attribute is unknown to selectors, which read scalars.
cel::AttributeValue cel_value(std::string_view qualified, const AttributeValue& value) {
  if (value.list || value.values.size() != 1) {
    return cel::UnknownValue{"list-valued attribute " + std::string(qualified)};
  }
  const AttributeValue::Scalar& scalar = value.values[0];
  if (value.type == AttributeValue::Type::kVersion) {
    return *cel::Version::parse(std::get<std::string>(scalar));  // validated when read
  }
  if (const auto* number = std::get_if<std::int64_t>(&scalar)) {
    return *number;
  }
  if (const auto* flag = std::get_if<bool>(&scalar)) {
    return *flag;
  }
  return std::get<std::string>(scalar);
}

}  // namespace

std::optional<cel::AttributeValue> PublishedDevice::attribute(std::string_view domain,
                                                              std::string_view name) const {
  const auto found = device_->attributes.find(domain, name);
  if (found == device_->attributes.end()) {
    return std::nullopt;
  }
  return cel_value(found->first, found->second);
}

std::optional<cel::Quantity> PublishedDevice::capacity_value(std::string_view domain,
                                                             std::string_view name) const {
  const auto found = device_->capacity.find(domain, name);
  if (found == device_->capacity.end()) {
    return std::nullopt;
  }
  return *cel::Quantity::parse(found->second);  // validated when read
}

cel::Attributes PublishedDevice::all_attributes() const {
  cel::Attributes attributes;
  for (const auto& [qualified, value] : device_->attributes) {
    const std::size_t slash = qualified.find('/');
    attributes[qualified.substr(0, slash)].insert_or_assign(qualified.substr(slash + 1),
                                                            cel_value(qualified, value));
  }
  return attributes;
}

cel::Capacity PublishedDevice::all_capacity() const {
  cel::Capacity capacity;
  for (const auto& [qualified, quantity] : device_->capacity) {
    const std::size_t slash = qualified.find('/');
    capacity[qualified.substr(0, slash)].insert_or_assign(qualified.substr(slash + 1),
                                                          *cel::Quantity::parse(quantity));
  }
  return capacity;
}

Match SelectorSet::match(const cel::DeviceView& device, std::string* why,
                         std::uint64_t* cost) const {
  Match match = Match::kYes;
  for (const cel::Program& program : *programs_) {
    const cel::Evaluation evaluation = cel::evaluate(program, device);
    if (cost != nullptr) {
      *cost = std::max(*cost, evaluation.cost);
    }
    switch (evaluation.outcome) {
      case cel::Outcome::kTrue:
        break;
      case cel::Outcome::kFalse:
        return Match::kNo;
      case cel::Outcome::kError:
      case cel::Outcome::kUnknown:
        if (match == Match::kYes && why != nullptr) {
          *why = "\"" + program.source() + "\": " + cel::outcome_name(evaluation.outcome) +
                 (evaluation.message.empty() ? "" : " (" + evaluation.message + ")");
        }
        match = Match::kUnknown;
        break;
    }
  }
  return match;
}

}  // namespace topoguard::cluster
