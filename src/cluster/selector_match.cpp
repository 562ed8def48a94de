#include "topoguard/cluster/selector_match.h"

namespace topoguard::cluster {

cel::Activation device_activation(const Device& device) {
  cel::Activation activation;
  activation.driver = device.driver;
  cel::Attributes attributes;
  for (const auto& [qualified, value] : device.attributes) {
    const std::size_t slash = qualified.find('/');
    auto& domain = attributes[qualified.substr(0, slash)];
    cel::AttributeValue bound = cel::UnknownValue{"list-valued attribute " + qualified};
    if (!value.list && value.values.size() == 1) {
      const AttributeValue::Scalar& scalar = value.values[0];
      if (value.type == AttributeValue::Type::kVersion) {
        // Validated when the slice was read.
        bound = *cel::Version::parse(std::get<std::string>(scalar));
      } else if (const auto* number = std::get_if<std::int64_t>(&scalar)) {
        bound = *number;
      } else if (const auto* flag = std::get_if<bool>(&scalar)) {
        bound = *flag;
      } else {
        bound = std::get<std::string>(scalar);
      }
    }
    domain.insert_or_assign(qualified.substr(slash + 1), std::move(bound));
  }
  activation.attributes = std::move(attributes);
  cel::Capacity capacity;
  for (const auto& [qualified, quantity] : device.capacity) {
    const std::size_t slash = qualified.find('/');
    capacity[qualified.substr(0, slash)].insert_or_assign(qualified.substr(slash + 1),
                                                          *cel::Quantity::parse(quantity));
  }
  activation.capacity = std::move(capacity);
  return activation;
}

const cel::Activation& DeviceActivations::of(std::size_t device) {
  if (ready_ != nullptr) {
    if (const auto it = ready_->find(device); it != ready_->end()) {
      return it->second;
    }
  }
  auto it = activations_.find(device);
  if (it == activations_.end()) {
    it = activations_.emplace(device, device_activation(state_.devices()[device])).first;
  }
  return it->second;
}

Result<SelectorSet> SelectorSet::compile(const std::vector<std::string>& expressions) {
  SelectorSet set;
  for (std::size_t i = 0; i < expressions.size(); ++i) {
    auto program = cel::compile(expressions[i]);
    if (!program) {
      Error error = program.error();
      error.message = "selector " + std::to_string(i) + ": " + error.message;
      return error;
    }
    set.programs_.push_back(std::move(program).value());
  }
  return set;
}

Match SelectorSet::match(const cel::Activation& device, std::string* why) const {
  Match match = Match::kYes;
  for (const cel::Program& program : programs_) {
    const cel::Evaluation evaluation = cel::evaluate(program, device);
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
