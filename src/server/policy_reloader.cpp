#include "topoguard/server/policy_reloader.h"

#include <utility>

namespace topoguard::server {

Result<std::shared_ptr<PolicyReloader>> PolicyReloader::create(std::vector<std::string> paths,
                                                               PolicyLoader loader) {
  Loader load_set = [paths, loader = std::move(loader)]() -> Result<Ptr> {
    Result<policy::PolicySet> set = loader(paths);
    if (!set) {
      return set.error();
    }
    return Ptr(std::make_shared<const policy::PolicySet>(std::move(*set)));
  };
  return load<PolicyReloader>(std::move(paths), std::move(load_set));
}

}  // namespace topoguard::server
