// The current PolicySet, re-loaded when files under --policies change (ConfigMap volumes swap a
// `..data` symlink). An invalid new set is refused and the last good one stays. snapshot() is
// safe from any thread and cheap (a shared_ptr copy under a mutex); poll() is called from one
// watcher thread.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "topoguard/common/result.h"
#include "topoguard/policy/policy_set.h"
#include "topoguard/server/cert_reloader.h"

namespace topoguard::server {

// Loads a PolicySet from paths (policy::load_policies in production; a fake in tests).
using PolicyLoader = std::function<Result<policy::PolicySet>(const std::vector<std::string>&)>;

class PolicyReloader {
 public:
  // Loads the initial set; an error when it cannot be loaded. With no paths, poll() never
  // reloads (the built-in policy does not change).
  [[nodiscard]] static Result<std::shared_ptr<PolicyReloader>> create(
      std::vector<std::string> paths, PolicyLoader loader);

  [[nodiscard]] policy::PolicySetPtr snapshot() const;
  ReloadReport poll();

 private:
  PolicyReloader(std::vector<std::string> paths, PolicyLoader loader, policy::PolicySetPtr set,
                 std::string fingerprint);

  const std::vector<std::string> paths_;
  const PolicyLoader loader_;
  std::string fingerprint_;  // of the last attempt; only poll() touches it
  mutable std::mutex mutex_;
  policy::PolicySetPtr current_;  // guarded by mutex_
};

}  // namespace topoguard::server
