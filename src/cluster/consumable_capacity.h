// What one allocation of a device takes of its capacity (DRAConsumableCapacity, KEP-5075, beta
// in 1.36), as the allocator computes it (structured/internal/*/consumable_capacity.go):
// - a request may only name capacities the device has; otherwise the device is not a candidate;
// - per capacity of the device, the amount consumed is the request's amount, rounded up by the
//   capacity's requestPolicy (validRange: to min, then to min + a multiple of step; validValues:
//   to the first value not below it); with no request it is the policy's default, else the
//   whole capacity;
// - the amount must then obey the policy (equal to the default, or within max and on a step, or
//   one of validValues) and, added to what other allocations hold, stay within the capacity.
// Every device is checked this way; only devices that allow multiple allocations share their
// capacity between allocations. Pure.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "topoguard/cel/value.h"
#include "topoguard/cluster/cluster_state.h"

namespace topoguard::cluster::capacity {

enum class Fit { kFits, kNo, kUnknown };

struct Demand {
  Fit fit = Fit::kFits;
  std::string why;  // for kNo and kUnknown
  std::map<std::string, cel::Quantity, std::less<>> consumed;  // by qualified capacity name
};

// One allocation of `device` for a request with `requests` (capacity names as written, an
// unqualified one in the device driver's domain), given what other allocations already hold
// (`held`, by qualified name).
[[nodiscard]] Demand demand(const Device& device,
                            const std::map<std::string, std::string, std::less<>>& requests,
                            const std::map<std::string, cel::Quantity, std::less<>>& held);

}  // namespace topoguard::cluster::capacity
