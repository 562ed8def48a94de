// Whether a device satisfies a list of CEL selectors (a DeviceClass's or a request's), through
// the CEL evaluator. Three answers: every selector is true, one is false, or one cannot be
// evaluated exactly (something the evaluator does not implement, or a CEL runtime error, which
// the scheduler reports as an allocation error): unknown, which feasibility treats as "may
// match" and says so. Selectors are compiled when the object holding them is read (the claim, the
// DeviceClass); a check only evaluates them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "topoguard/cel/cel.h"
#include "topoguard/cluster/cluster_state.h"
#include "topoguard/common/result.h"

namespace topoguard::cluster {

enum class Match : std::uint8_t { kNo, kYes, kUnknown };

// The CEL `device` of a published device, read in place: driver, attributes by domain (an
// unqualified name under the driver's), capacity. Valid while `device` is.
class PublishedDevice final : public cel::DeviceView {
 public:
  explicit PublishedDevice(const Device& device) : device_(&device) {}

  [[nodiscard]] std::optional<std::string> driver_name() const override {
    return device_->driver.get();
  }
  [[nodiscard]] bool attributes_bound() const override { return true; }
  [[nodiscard]] bool capacity_bound() const override { return true; }
  [[nodiscard]] std::optional<cel::AttributeValue> attribute(std::string_view domain,
                                                             std::string_view name) const override;
  [[nodiscard]] std::optional<cel::Quantity> capacity_value(std::string_view domain,
                                                            std::string_view name) const override;
  [[nodiscard]] cel::Attributes all_attributes() const override;
  [[nodiscard]] cel::Capacity all_capacity() const override;

 private:
  const Device* device_;
};

// Compiled selectors, read in place: valid while `programs` is.
class SelectorSet {
 public:
  explicit SelectorSet(const std::vector<cel::Program>& programs) : programs_(&programs) {}

  // kNo when a selector is false; else kUnknown when one is not exactly true; else kYes.
  // `why` (optional) receives the evaluator's reason for an unknown answer; `cost` (optional)
  // the largest cost one selector's evaluation took.
  [[nodiscard]] Match match(const cel::DeviceView& device, std::string* why = nullptr,
                            std::uint64_t* cost = nullptr) const;

 private:
  const std::vector<cel::Program>* programs_;
};

}  // namespace topoguard::cluster
