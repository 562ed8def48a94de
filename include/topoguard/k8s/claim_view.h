// One normalised view of a ResourceClaim / ResourceClaimTemplate spec across resource.k8s.io
// v1beta1 (flat requests), v1beta2 and v1 (`exactly`), with `firstAvailable` subrequests.
// The view is chosen by the shape of each request, never by apiVersion, and every element keeps
// the JSON pointer it was read from, so rules and patches are right for every version.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "topoguard/cel/cel.h"
#include "topoguard/common/json.h"
#include "topoguard/common/result.h"

namespace topoguard::k8s {

enum class AllocationMode { kExactCount, kAll };

// A request's toleration of device taints (DRADeviceTaints, GA in 1.37), as written: an empty
// key or effect matches every key or effect; the operator defaults to Equal.
struct DeviceToleration {
  std::string key;
  std::string op = "Equal";  // Equal | Exists (another value tolerates nothing)
  std::string value;
  std::string effect;
};

// A derived attribute (KEP-6080, gate DRADerivedAttributes, alpha in 1.37): a CEL expression
// evaluated per candidate device whose value stands for the attribute `name` when the claim's
// constraints are matched, in place of any attribute of that name the driver publishes.
struct DerivedAttribute {
  std::string name;      // a QualifiedName: `domain/id` or a bare `id`
  cel::Program program;  // the expression, compiled
  std::string pointer;   // /.../derivedAttributes/<i>
};

// One way to satisfy a request: its `exactly` part (or the flat v1beta1 fields) or one
// `firstAvailable` subrequest.
struct DeviceChoice {
  std::string subrequest;  // empty for `exactly` / flat requests
  std::string device_class_name;
  std::vector<std::string> selectors;  // CEL expressions, in order
  std::vector<cel::Program> selector_programs;  // the same, compiled
  AllocationMode allocation_mode = AllocationMode::kExactCount;
  std::int64_t count = 1;  // meaningful for kExactCount
  bool admin_access = false;
  std::vector<DeviceToleration> tolerations;
  // `capacity.requests` (DRAConsumableCapacity): capacity name as written -> quantity text.
  std::map<std::string, std::string, std::less<>> capacity_requests;
  std::vector<DerivedAttribute> derived_attributes;  // in order
  std::string pointer;     // the object holding deviceClassName
};

struct DeviceRequest {
  std::string name;
  std::string pointer;  // /.../devices/requests/<i>
  bool first_available = false;
  std::vector<DeviceChoice> choices;  // one for `exactly`/flat, one per subrequest otherwise
};

struct DeviceConstraint {
  std::vector<std::string> requests;  // empty: applies to every request of the claim
  std::string match_attribute;
  std::string distinct_attribute;
  std::string pointer;  // /.../devices/constraints/<i>
};

struct ClaimSpec {
  std::string devices_pointer;      // /spec/devices or /spec/spec/devices
  std::string constraints_pointer;  // devices_pointer + "/constraints"
  bool has_constraints_array = false;
  std::vector<DeviceRequest> requests;
  std::vector<DeviceConstraint> constraints;
};

// The API server's validation limits for a claim spec (resource.k8s.io types:
// DeviceRequestsMaxSize, DeviceConstraintsMaxSize, DeviceSelectorsMaxSize,
// FirstAvailableDeviceRequestMaxSize, CELSelectorExpressionMaxLength, and at most 32 derived
// attributes per request or subrequest, each expression at most 10 Ki). Mutating webhooks see
// an object before that validation, so read_claim_spec() applies them itself.
inline constexpr std::size_t kMaxDeviceRequests = 32;
inline constexpr std::size_t kMaxConstraints = 32;
inline constexpr std::size_t kMaxSelectors = 32;
inline constexpr std::size_t kMaxSubrequests = 8;
inline constexpr std::size_t kMaxSelectorExpressionBytes = 10 * 1024;
inline constexpr std::size_t kMaxDerivedAttributes = 32;
inline constexpr std::size_t kMaxDerivedExpressionBytes = 10 * 1024;

// Reads the claim spec of a claim-kind object. Errors name the offending field (JSON pointer)
// and say what type was expected, or which API limit the object is over (kTooLarge). A selector
// or derived-attribute expression that does not parse is an error at its field (kInvalidValue):
// the API server compiles both and refuses the object. Expressions are compiled through
// `programs` when given (the caller's cache of compiled expressions).
[[nodiscard]] Result<ClaimSpec> read_claim_spec(const Json& object,
                                                cel::ProgramCache* programs = nullptr);

}  // namespace topoguard::k8s
