// A validated, ordered, immutable set of policies, shared as shared_ptr<const PolicySet> so that a
// reload is a pointer swap and readers never lock.
#pragma once

#include <memory>
#include <vector>

#include "topoguard/policy/policy.h"

namespace topoguard::policy {

class PolicySet {
 public:
  PolicySet() = default;
  explicit PolicySet(std::vector<Policy> policies) : policies_(std::move(policies)) {}

  [[nodiscard]] const std::vector<Policy>& policies() const { return policies_; }

 private:
  std::vector<Policy> policies_;
};

using PolicySetPtr = std::shared_ptr<const PolicySet>;

}  // namespace topoguard::policy
