#include "device_roles.h"

namespace topoguard::engine {

namespace {

void merge(Roles& into, const Roles& from) {
  into.gpu = into.gpu || from.gpu;
  into.nic = into.nic || from.nic;
}

}  // namespace

Roles DeviceRoles::of_class_name(std::string_view name) const {
  if (const auto known = class_name_roles_.find(name); known != class_name_roles_.end()) {
    return known->second;
  }
  const Roles roles{policy_.gpu.device_class_names.matches_any(name),
                    policy_.nic.device_class_names.matches_any(name)};
  class_name_roles_.emplace(name, roles);
  return roles;
}

Roles DeviceRoles::of_driver(std::string_view driver) const {
  return Roles{policy_.gpu.drivers.matches_any(driver), policy_.nic.drivers.matches_any(driver)};
}

Roles DeviceRoles::of_device_class(const DeviceClassInfo& device_class) const {
  Roles roles = of_class_name(device_class.name);
  for (const std::string& driver : device_class.drivers) {
    merge(roles, of_driver(driver));
  }
  return roles;
}

Roles DeviceRoles::of_choice(const k8s::DeviceChoice& choice) const {
  Roles roles = of_class_name(choice.device_class_name);
  if (const DeviceClassInfo* device_class = inventory_.device_class(choice.device_class_name)) {
    merge(roles, of_device_class(*device_class));
  }
  for (const std::string& selector : choice.selectors) {
    for (const std::string& driver : drivers_in_cel(selector)) {
      merge(roles, of_driver(driver));
    }
  }
  return roles;
}

Roles DeviceRoles::of_request(const k8s::DeviceRequest& request) const {
  Roles roles;
  for (const k8s::DeviceChoice& choice : request.choices) {
    merge(roles, of_choice(choice));
  }
  return roles;
}

Roles DeviceRoles::of_extended_resource(std::string_view resource) const {
  Roles roles{policy_.gpu.extended_resources.matches_any(resource),
              policy_.nic.extended_resources.matches_any(resource)};
  if (const DeviceClassInfo* device_class = inventory_.device_class_for_resource(resource)) {
    merge(roles, of_device_class(*device_class));
  }
  return roles;
}

}  // namespace topoguard::engine
