// Which device requests and resources are GPUs and which are NICs, under one policy. A request
// is recognised by its DeviceClass name, or by evaluating its selectors (its DeviceClass's, when
// the input has it, and its own): when every driver they can still match is a GPU (NIC) driver.
// Mixed or unknown is neither, so a misread selector can never cause a denial.
#pragma once

#include <cstddef>
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
  DeviceRoles(const policy::Policy& policy, const Inventory& inventory);

  [[nodiscard]] Roles of_choice(const k8s::DeviceChoice& choice) const;
  [[nodiscard]] Roles of_request(const k8s::DeviceRequest& request) const;
  // A container resource name: a device plugin resource (by the policy's extendedResources), or
  // a DRA extended resource (KEP-5004) of a DeviceClass the inventory knows, or the implicit
  // deviceclass.resource.kubernetes.io/<class> of a class recognised by its name.
  [[nodiscard]] Roles of_extended_resource(std::string_view resource) const;

  // Whether the policy names `attribute` as NUMA-only (numaAttributes).
  [[nodiscard]] bool is_numa_attribute(std::string_view attribute) const;
  // Whether the choice's selectors read such an attribute.
  [[nodiscard]] bool selects_numa_node(const k8s::DeviceChoice& choice) const;

  // The CEL budget of the evaluation under way (one object), which every selector evaluation
  // is charged to; null: each evaluation only has the per-call limit.
  void set_budget(cel::CostBudget* budget) const { budget_ = budget; }

  // Answers kept so far (class names, drivers, selector sets, attributes).
  [[nodiscard]] std::size_t remembered() const {
    return class_name_roles_.size() + driver_roles_.size() + selector_roles_.size() +
           numa_attributes_.size();
  }

  [[nodiscard]] static bool has(const Roles& roles, Role role) {
    return role == Role::kGpu ? roles.gpu : roles.nic;
  }

 private:
  [[nodiscard]] Roles of_device_class(const k8s::DeviceClass& device_class) const;
  [[nodiscard]] Roles of_class_name(std::string_view name) const;
  [[nodiscard]] Roles of_driver(std::string_view driver) const;
  // The roles every driver the selectors can still match shares; none when that is unclear.
  [[nodiscard]] Roles of_selectors(const std::vector<const cel::Program*>& selectors) const;
  // `exhausted` is set when the budget cut an evaluation short.
  [[nodiscard]] Roles evaluate_selectors(const std::vector<const cel::Program*>& selectors,
                                         bool& exhausted) const;

  const policy::Policy& policy_;
  const Inventory& inventory_;
  // Driver names the policy spells out literally (e.g. 'gpu\.nvidia\.com'): the drivers a
  // selector is evaluated against, besides the names in the selector itself.
  std::vector<std::string> known_drivers_;
  // of_class_name() by name. A claim names the same few DeviceClasses over and over, and each
  // answer is two RE2 matches; one DeviceRoles serves one Evaluator (one thread, any number of
  // objects). A map, not a list: a hostile claim can name 10,000 different classes.
  mutable std::map<std::string, Roles, std::less<>> class_name_roles_;
  // of_driver() by name, for the same reason: every selector set is tried against the same
  // candidate drivers.
  mutable std::map<std::string, Roles, std::less<>> driver_roles_;
  // of_selectors() by the selectors' source texts: a claim repeats one selector set for each
  // device it asks for (gpu0 ... gpu7), and a set costs a CEL evaluation per candidate driver.
  // Each answer keeps what it cost, which a later use is charged, so a kept answer never
  // changes what an object's budget allows.
  struct SelectorAnswer {
    Roles roles;
    std::uint64_t cost = 0;
  };
  mutable std::map<std::string, SelectorAnswer, std::less<>> selector_roles_;
  mutable cel::CostBudget* budget_ = nullptr;
  // Whether an attribute name matches the policy's NUMA patterns (an RE2 match), by name.
  mutable std::map<std::string, bool, std::less<>> numa_attributes_;
};

}  // namespace topoguard::engine
