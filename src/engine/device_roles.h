// Which device requests and resources are GPUs and which are NICs, under one policy. A request
// is recognised by its DeviceClass name, by the drivers that DeviceClass selects (when the input
// has it), or by the drivers its own CEL selectors pin.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "topoguard/engine/inventory.h"
#include "topoguard/k8s/claim_view.h"
#include "topoguard/policy/policy.h"

namespace topoguard::engine {

struct Roles {
  bool gpu = false;
  bool nic = false;

  [[nodiscard]] bool any() const { return gpu || nic; }
};

enum class Role { kGpu, kNic };

class DeviceRoles {
 public:
  DeviceRoles(const policy::Policy& policy, const Inventory& inventory)
      : policy_(policy), inventory_(inventory) {}

  [[nodiscard]] Roles of_choice(const k8s::DeviceChoice& choice) const;
  [[nodiscard]] Roles of_request(const k8s::DeviceRequest& request) const;
  // A container resource name: a device plugin resource, or a DRA extended resource whose
  // DeviceClass is known.
  [[nodiscard]] Roles of_extended_resource(std::string_view resource) const;

  [[nodiscard]] static bool has(const Roles& roles, Role role) {
    return role == Role::kGpu ? roles.gpu : roles.nic;
  }

 private:
  [[nodiscard]] Roles of_device_class(const DeviceClassInfo& device_class) const;
  [[nodiscard]] Roles of_class_name(std::string_view name) const;
  [[nodiscard]] Roles of_driver(std::string_view driver) const;

  const policy::Policy& policy_;
  const Inventory& inventory_;
  // of_class_name() by name. A claim names the same few DeviceClasses over and over, and each
  // answer is two RE2 matches; one DeviceRoles serves one evaluation and is never shared between
  // threads. A map, not a list: a hostile claim can name 10,000 different classes.
  mutable std::map<std::string, Roles, std::less<>> class_name_roles_;
};

}  // namespace topoguard::engine
