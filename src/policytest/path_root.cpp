#include "topoguard/policytest/path_root.h"

#include <algorithm>
#include <system_error>
#include <utility>

namespace topoguard::policytest {

namespace fs = std::filesystem;

namespace {

// `path` with every symlink of its existing part resolved; empty when that cannot be read.
fs::path resolved(const fs::path& path) {
  std::error_code error;
  fs::path absolute = fs::absolute(path, error);
  if (error) {
    return {};
  }
  fs::path canonical = fs::weakly_canonical(absolute, error);
  return error ? fs::path() : canonical;
}

}  // namespace

Result<PathRoot> PathRoot::open(const std::string& directory) {
  std::error_code error;
  fs::path root = fs::canonical(directory, error);
  if (error || !fs::is_directory(root, error)) {
    return Error{ErrorCode::kUsage,
                 "--root " + directory + ": " + (error ? error.message() : "not a directory"),
                 {}};
  }
  return PathRoot(std::move(root));
}

bool PathRoot::contains(const std::string& path) const {
  const fs::path target = resolved(path);
  if (target.empty()) {
    return false;
  }
  // Component by component, so /root-other is not inside /root.
  const auto [in_root, in_target] =
      std::mismatch(root_.begin(), root_.end(), target.begin(), target.end());
  return in_root == root_.end();
}

std::optional<std::string> PathRoot::escape(const std::string& path) const {
  const std::string outside = " resolves outside the root " + root_.string();
  if (!contains(path)) {
    return path + outside;
  }
  std::error_code error;
  if (!fs::is_directory(path, error)) {
    return std::nullopt;
  }
  // Folders are walked as the policy and manifest readers walk them (symlinked folders not
  // entered), so a symlink below is the one way out.
  for (fs::recursive_directory_iterator it(path, error), end; !error && it != end;
       it.increment(error)) {
    if (it->is_symlink(error) && !contains(it->path().string())) {
      return it->path().string() + outside;
    }
  }
  return std::nullopt;
}

}  // namespace topoguard::policytest
