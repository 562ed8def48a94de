#include "consumable_capacity.h"

#include <algorithm>
#include <optional>
#include <utility>

namespace topoguard::cluster::capacity {

namespace {

cel::Quantity quantity(const std::string& text) {
  return *cel::Quantity::parse(text);  // validated when the slice or claim was read
}

std::string qualified(std::string_view driver, const std::string& name) {
  return name.find('/') != std::string::npos ? name : std::string(driver) + "/" + name;
}

// The step arithmetic of a validRange. The allocator (consumable_capacity.go, roundUpRange and
// violateValidRange, at the commit read) computes min + step * ceil((request - min) / step) in
// int64 units through Quantity.Value(), which rounds the request up to an integer; with
// DRAFractionalCapacityRange (beta in 1.37) and a fractional min, max or step it computes in
// milli-units instead (API documentation of CapacityRequestPolicyRange). For an integer step in
// the units used, rounding the request up first changes nothing (ceil(ceil(x) / s) =
// ceil(x / s)), so exact decimal arithmetic gives the allocator's amounts, as long as the bounds
// have at most three decimals and every value fits an int64 of those units. nullopt otherwise.
class StepArithmetic {
 public:
  static std::optional<StepArithmetic> of(const RequestPolicy& policy) {
    StepArithmetic out{quantity(*policy.min), quantity(*policy.step)};
    int places = std::max(out.min_.decimal_places(), out.step_.decimal_places());
    if (policy.max) {
      places = std::max(places, quantity(*policy.max).decimal_places());
    }
    if (places > 3 || out.step_.sign() <= 0) {
      return std::nullopt;
    }
    out.largest_ =
        *cel::Quantity::parse(places == 0 ? "9223372036854775807" : "9223372036854775807m");
    return out;
  }

  // The smallest min + n * step not below `amount` (>= min).
  [[nodiscard]] std::optional<cel::Quantity> round_up(const cel::Quantity& amount) const {
    const auto steps = amount.minus(min_).steps_of(step_);
    const auto span = steps ? step_.times(*steps) : std::nullopt;
    if (!span || !fits(amount)) {
      return std::nullopt;
    }
    const cel::Quantity rounded = min_.plus(*span);
    return fits(rounded) ? std::optional(rounded) : std::nullopt;
  }

  // Whether `amount` (>= min) is min + n * step.
  [[nodiscard]] std::optional<bool> on_step(const cel::Quantity& amount) const {
    const auto rounded = round_up(amount);
    return rounded ? std::optional(rounded->compare(amount) == 0) : std::nullopt;
  }

 private:
  StepArithmetic(cel::Quantity min, cel::Quantity step)
      : min_(std::move(min)), step_(std::move(step)) {}

  [[nodiscard]] bool fits(const cel::Quantity& amount) const {
    return amount.compare(largest_) <= 0 && min_.compare(largest_) <= 0 &&
           step_.compare(largest_) <= 0;
  }

  cel::Quantity min_;
  cel::Quantity step_;
  cel::Quantity largest_ = cel::Quantity::from_integer(0);  // int64 of the units used
};

// The amount consumed for `requested` (nullopt: not requested) under `policy` (may be null);
// nullopt when the step arithmetic cannot be done exactly (StepArithmetic).
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
    const auto steps = StepArithmetic::of(*policy);
    return steps ? steps->round_up(*requested) : std::nullopt;
  }
  for (const std::string& valid : policy->valid_values) {
    const cel::Quantity candidate = quantity(valid);
    if (requested->compare(candidate) <= 0) {
      return candidate;
    }
  }
  return requested;
}

// Whether `amount` breaks `policy`; nullopt when the step arithmetic cannot be done exactly.
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
    if (amount.compare(quantity(*policy.min)) < 0) {
      return std::nullopt;  // below min: Go's remainder of a negative difference
    }
    const auto steps = StepArithmetic::of(policy);
    const auto on_step = steps ? steps->on_step(amount) : std::nullopt;
    return on_step ? std::optional(!*on_step) : std::nullopt;
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
    std::string key = qualified(device.driver.get(), name);
    if (device.capacity.find(key) == device.capacity.end()) {
      out.fit = Fit::kNo;
      out.why = "requests capacity " + key + ", which the device does not have";
      return out;
    }
    asked.insert_or_assign(std::move(key), quantity(text));
  }
  for (const auto& [name, text] : device.capacity) {
    const cel::Quantity value = quantity(text);
    const auto policy_it = device.request_policies().find(name);
    const RequestPolicy* policy =
        policy_it == device.request_policies().end() ? nullptr : &policy_it->second;
    const auto asked_it = asked.find(name);
    const auto amount = consumed_amount(
        asked_it == asked.end() ? std::nullopt : std::optional(asked_it->second), value, policy);
    const auto broken = amount && policy != nullptr ? violates(*amount, *policy)
                                                    : std::optional<bool>(false);
    if (!amount || !broken) {
      out.fit = Fit::kUnknown;
      out.why = "the requestPolicy step of capacity " + name +
                " has bounds finer than a milli-unit or values beyond int64";
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
