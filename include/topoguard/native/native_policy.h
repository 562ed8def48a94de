// `topoguard policy compile`: AlignmentPolicies as Kubernetes-native admission policies
// (ValidatingAdmissionPolicy and MutatingAdmissionPolicy with their bindings), which the API
// server enforces in-process with CEL. Pure: policies in, objects out.
//
// Safe by construction: a compiled policy never denies what the engine allows. What CEL cannot
// decide exactly (roles that come from selectors, derived attributes past the native limits,
// pods, feasibility) is allowed natively, listed in `not_compiled`, and left to the webhook.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "topoguard/common/json.h"
#include "topoguard/common/result.h"
#include "topoguard/policy/policy_set.h"

namespace topoguard::native {

struct KubernetesVersion {
  int major = 1;
  int minor = 36;
};

// "1.36", "v1.36" or "1.36.2"; the compiler targets 1.34 (resource.k8s.io/v1) and later.
[[nodiscard]] Result<KubernetesVersion> parse_kubernetes_version(std::string_view text);

// A DeviceClass of the cluster and the roles the engine gives a request of that class (by its
// name or by the drivers its selectors allow). Baked into the compiled policies.
struct DeviceClassRoles {
  std::string name;
  bool gpu = false;
  bool nic = false;
};

struct CompileOptions {
  KubernetesVersion version;
  // From --cluster-state, by policy name (roles depend on the policy); empty without it.
  std::map<std::string, std::vector<DeviceClassRoles>, std::less<>> device_classes;
  bool cluster_state = false;
};

// The static cost bound of one CEL expression at the API's maximum object sizes, in cel-go's
// cost units (the API server's per-expression limit is kPerCallLimit).
struct ExpressionCost {
  std::string object;  // metadata.name of the policy
  std::string field;   // e.g. spec.variables[gpuKeys].expression
  std::uint64_t cost = 0;
};

inline constexpr std::uint64_t kPerCallLimit = 1'000'000;
inline constexpr std::uint64_t kRuntimeBudget = 10'000'000;

struct CompiledPolicies {
  std::vector<Json> objects;              // in apply order: policies before their bindings
  // What native policies decide for no policy, left to the webhook whatever the policy says:
  // rules on Pods and workloads, rules on the cluster's ResourceSlices, roles from selectors
  // that read the driver, roles by driver without a DeviceClass list.
  std::vector<std::string> webhook_only;
  // What this policy asks that its compiled form cannot carry (what `--strict` fails on).
  std::vector<std::string> not_compiled;
  std::vector<std::string> limits;        // how far the compiled CEL reads an object
  std::vector<ExpressionCost> costs;      // every expression of every policy
  // The largest sum of an object's expression costs (what one admission may spend on it).
  std::uint64_t largest_policy_cost = 0;
};

[[nodiscard]] Result<CompiledPolicies> compile_policies(const policy::PolicySet& policies,
                                                        const CompileOptions& options);

}  // namespace topoguard::native
