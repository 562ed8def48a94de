// The folder a policy test suite is confined to (`policy test --root`, default the current
// directory): every path a test file names must resolve inside it, symlinks resolved, so a suite
// from a pull request can neither read a file beyond it into a diff nor make --update write one.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "topoguard/common/result.h"

namespace topoguard::policytest {

class PathRoot {
 public:
  // The root at `directory`, resolved; an error when it is not a directory.
  [[nodiscard]] static Result<PathRoot> open(const std::string& directory);

  // `path` as the kernel would resolve it (symlinks followed, a missing tail taken as written)
  // lies inside the root.
  [[nodiscard]] bool contains(const std::string& path) const;

  // Why `path` leaves the root: it resolves outside, or (a folder) an entry below it is a
  // symlink that does; nullopt when it stays inside.
  [[nodiscard]] std::optional<std::string> escape(const std::string& path) const;

  [[nodiscard]] std::string string() const { return root_.string(); }

 private:
  explicit PathRoot(std::filesystem::path root) : root_(std::move(root)) {}
  std::filesystem::path root_;  // canonical
};

}  // namespace topoguard::policytest
