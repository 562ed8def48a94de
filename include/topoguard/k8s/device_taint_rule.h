// A DeviceTaintRule (v1alpha3 1.33, v1beta2 1.36, v1 1.37): spec.taint applies to every device
// that spec.deviceSelector's driver, pool and device pick (each unset one matches all).
#pragma once

#include <optional>
#include <string>

#include "topoguard/common/json.h"
#include "topoguard/common/result.h"
#include "topoguard/k8s/resource_slice.h"

namespace topoguard::k8s {

struct DeviceTaintRule {
  std::optional<std::string> driver;
  std::optional<std::string> pool;
  std::optional<std::string> device;
  DeviceTaint taint;  // `rule` names the DeviceTaintRule

  [[nodiscard]] bool applies_to(const Device& device) const;
};

// The rule of `object`; nullopt for a rule without a deviceSelector, which applies to no
// device. An error names the offending field.
[[nodiscard]] Result<std::optional<DeviceTaintRule>> read_device_taint_rule(const Json& object);

}  // namespace topoguard::k8s
