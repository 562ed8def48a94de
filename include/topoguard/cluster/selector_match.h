// Whether a device satisfies a list of CEL selectors (a DeviceClass's or a request's), through
// the CEL evaluator. Three answers: every selector is true, one is false, or one cannot be
// evaluated exactly (something the evaluator does not implement, or a CEL runtime error, which
// the scheduler reports as an allocation error): unknown, which feasibility treats as "may
// match" and says so. Selector sets are compiled once and are read-only afterwards.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "topoguard/cel/cel.h"
#include "topoguard/cluster/cluster_state.h"
#include "topoguard/common/result.h"

namespace topoguard::cluster {

enum class Match : std::uint8_t { kNo, kYes, kUnknown };

// The CEL `device` of a published device: driver, attributes by domain, capacity.
[[nodiscard]] cel::Activation device_activation(const Device& device);

// device_activation() of each device of a state, built on first use. One per evaluation; not
// for concurrent use.
class DeviceActivations {
 public:
  // `ready` (optional): activations made beforehand for some devices of `state`, by index.
  explicit DeviceActivations(
      const ClusterState& state,
      const std::unordered_map<std::size_t, cel::Activation>* ready = nullptr)
      : state_(state), ready_(ready) {}
  [[nodiscard]] const cel::Activation& of(std::size_t device);

 private:
  const ClusterState& state_;
  const std::unordered_map<std::size_t, cel::Activation>* ready_;
  // By device index: a check by node shape reads few of a large cluster's devices.
  std::unordered_map<std::size_t, cel::Activation> activations_;
};

class SelectorSet {
 public:
  // Parses every expression; the error of the first that does not parse says which one.
  [[nodiscard]] static Result<SelectorSet> compile(const std::vector<std::string>& expressions);

  // kNo when a selector is false; else kUnknown when one is not exactly true; else kYes.
  // `why` (optional) receives the evaluator's reason for an unknown answer.
  [[nodiscard]] Match match(const cel::Activation& device, std::string* why = nullptr) const;

 private:
  std::vector<cel::Program> programs_;
};

}  // namespace topoguard::cluster
