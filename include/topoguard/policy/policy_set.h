// A validated, immutable set of policies, shared as shared_ptr<const PolicySet> so that a reload is
// a pointer swap and readers never lock. Policies are kept sorted by name: outputs list them in
// that order, whatever the order of the files they came from.
#pragma once

#include <algorithm>
#include <memory>
#include <vector>

#include "topoguard/policy/policy.h"

namespace topoguard::policy {

class PolicySet {
 public:
  PolicySet() = default;
  explicit PolicySet(std::vector<Policy> policies) : policies_(std::move(policies)) {
    std::stable_sort(policies_.begin(), policies_.end(),
                     [](const Policy& a, const Policy& b) { return a.name < b.name; });
  }

  [[nodiscard]] const std::vector<Policy>& policies() const { return policies_; }

 private:
  std::vector<Policy> policies_;
};

using PolicySetPtr = std::shared_ptr<const PolicySet>;

}  // namespace topoguard::policy
