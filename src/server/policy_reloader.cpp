#include "topoguard/server/policy_reloader.h"

#include "topoguard/server/file_fingerprint.h"

namespace topoguard::server {

Result<std::shared_ptr<PolicyReloader>> PolicyReloader::create(std::vector<std::string> paths,
                                                               PolicyLoader loader) {
  std::string fingerprint = fingerprint_paths(paths);
  Result<policy::PolicySet> set = loader(paths);
  if (!set) {
    return set.error();
  }
  auto shared = std::make_shared<const policy::PolicySet>(std::move(*set));
  return std::shared_ptr<PolicyReloader>(new PolicyReloader(
      std::move(paths), std::move(loader), std::move(shared), std::move(fingerprint)));
}

PolicyReloader::PolicyReloader(std::vector<std::string> paths, PolicyLoader loader,
                               policy::PolicySetPtr set, std::string fingerprint)
    : paths_(std::move(paths)),
      loader_(std::move(loader)),
      fingerprint_(std::move(fingerprint)),
      current_(std::move(set)) {}

policy::PolicySetPtr PolicyReloader::snapshot() const {
  std::lock_guard lock(mutex_);
  return current_;
}

ReloadReport PolicyReloader::poll() {
  if (paths_.empty()) {
    return {};
  }
  std::string fingerprint = fingerprint_paths(paths_);
  if (fingerprint == fingerprint_) {
    return {};
  }
  fingerprint_ = std::move(fingerprint);
  Result<policy::PolicySet> set = loader_(paths_);
  if (!set) {
    return {ReloadResult::kFailed, set.error()};
  }
  auto shared = std::make_shared<const policy::PolicySet>(std::move(*set));
  {
    std::lock_guard lock(mutex_);
    current_ = std::move(shared);
  }
  return {ReloadResult::kReloaded, {}};
}

}  // namespace topoguard::server
