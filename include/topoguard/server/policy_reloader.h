// The current PolicySet, re-loaded when files under --policies change (ConfigMap volumes swap a
// `..data` symlink). An invalid new set is refused and the last good one stays (Reloadable).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "topoguard/common/result.h"
#include "topoguard/policy/policy_set.h"
#include "topoguard/server/reloadable.h"

namespace topoguard::server {

// Loads a PolicySet from paths (policy::load_policies in production; a fake in tests).
using PolicyLoader = std::function<Result<policy::PolicySet>(const std::vector<std::string>&)>;

class PolicyReloader : public Reloadable<policy::PolicySet> {
 public:
  // Loads the initial set; an error when it cannot be loaded. With no paths, poll() never
  // reloads (the built-in policy does not change).
  [[nodiscard]] static Result<std::shared_ptr<PolicyReloader>> create(
      std::vector<std::string> paths, PolicyLoader loader);

 private:
  friend class Reloadable<policy::PolicySet>;
  using Reloadable::Reloadable;
};

}  // namespace topoguard::server
