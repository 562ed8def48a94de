#include "consumable_capacity.h"

#include <optional>

namespace topoguard::cluster::capacity {

namespace {

cel::Quantity quantity(const std::string& text) {
  return *cel::Quantity::parse(text);  // validated when the slice or claim was read
}

std::string qualified(std::string_view driver, const std::string& name) {
  return name.find('/') != std::string::npos ? name : std::string(driver) + "/" + name;
}

// The amount consumed for `requested` (nullopt: not requested) under `policy` (may be null);
// nullopt when a step calculation leaves the integers the allocator computes in.
std::optional<cel::Quantity> consumed_amount(const std::optional<cel::Quantity>& requested,
                                             const cel::Quantity& value,
                                             const RequestPolicy* policy) {
  if (!requested) {
    return policy != nullptr && policy->default_value ? quantity(*policy->default_value) : value;
  }
  if (policy == nullptr) {
    return requested;
  }
  if (policy->min) {
    const cel::Quantity min = quantity(*policy->min);
    if (requested->compare(min) < 0) {
      return min;
    }
    if (!policy->step) {
      return requested;
    }
    const auto asked = requested->as_integer();
    const auto low = min.as_integer();
    const auto step = quantity(*policy->step).as_integer();
    if (!asked || !low || !step || *step <= 0) {
      return std::nullopt;
    }
    const std::int64_t steps = (*asked - *low + *step - 1) / *step;
    return cel::Quantity::from_integer(*low + *step * steps);
  }
  for (const std::string& valid : policy->valid_values) {
    const cel::Quantity candidate = quantity(valid);
    if (requested->compare(candidate) <= 0) {
      return candidate;
    }
  }
  return requested;
}

// Whether `amount` breaks `policy`; nullopt when that cannot be computed in integers.
std::optional<bool> violates(const cel::Quantity& amount, const RequestPolicy& policy) {
  if (policy.default_value && amount.compare(quantity(*policy.default_value)) == 0) {
    return false;
  }
  if (policy.min) {
    if (policy.max && amount.compare(quantity(*policy.max)) > 0) {
      return true;
    }
    if (!policy.step) {
      return false;
    }
    const auto value = amount.as_integer();
    const auto low = quantity(*policy.min).as_integer();
    const auto step = quantity(*policy.step).as_integer();
    if (!value || !low || !step || *step <= 0) {
      return std::nullopt;
    }
    return (*value - *low) % *step != 0;
  }
  if (policy.valid_values.empty()) {
    return false;
  }
  for (const std::string& valid : policy.valid_values) {
    if (amount.compare(quantity(valid)) == 0) {
      return false;
    }
  }
  return true;
}

}  // namespace

Demand demand(const Device& device, const std::map<std::string, std::string, std::less<>>& requests,
              const std::map<std::string, cel::Quantity, std::less<>>& held) {
  Demand out;
  std::map<std::string, cel::Quantity, std::less<>> asked;
  for (const auto& [name, text] : requests) {
    std::string key = qualified(device.driver, name);
    if (device.capacity.find(key) == device.capacity.end()) {
      out.fit = Fit::kNo;
      out.why = "requests capacity " + key + ", which the device does not have";
      return out;
    }
    asked.insert_or_assign(std::move(key), quantity(text));
  }
  for (const auto& [name, text] : device.capacity) {
    const cel::Quantity value = quantity(text);
    const auto policy_it = device.request_policies.find(name);
    const RequestPolicy* policy =
        policy_it == device.request_policies.end() ? nullptr : &policy_it->second;
    const auto asked_it = asked.find(name);
    const auto amount = consumed_amount(
        asked_it == asked.end() ? std::nullopt : std::optional(asked_it->second), value, policy);
    const auto broken = amount && policy != nullptr ? violates(*amount, *policy)
                                                    : std::optional<bool>(false);
    if (!amount || !broken) {
      out.fit = Fit::kUnknown;
      out.why = "the requestPolicy step of capacity " + name + " needs a fractional quantity";
      return out;
    }
    if (*broken) {
      out.fit = Fit::kNo;
      out.why = "the amount of capacity " + name + " breaks the device's requestPolicy";
      return out;
    }
    const auto held_it = held.find(name);
    const cel::Quantity total = held_it == held.end() ? *amount : amount->plus(held_it->second);
    if (total.compare(value) > 0) {
      out.fit = Fit::kNo;
      out.why = "capacity " + name + " of " + text + " is too small for the request" +
                (held_it == held.end() ? "" : " beside what allocations hold");
      return out;
    }
    out.consumed.insert_or_assign(name, *amount);
  }
  return out;
}

}  // namespace topoguard::cluster::capacity
