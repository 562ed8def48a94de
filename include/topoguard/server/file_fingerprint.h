// A cheap identity of files and directory trees for change polling: per entry the symlink
// target, the resolved path, inode, size and mtime. Kubernetes Secret and ConfigMap volumes
// update by swapping a `..data` symlink, which changes resolved paths and inodes but not
// necessarily mtimes, so all of them are part of the fingerprint.
#pragma once

#include <string>
#include <vector>

namespace topoguard::server {

// Equal fingerprints mean "nothing to reload". Missing paths are part of the fingerprint too
// (as "missing"), so a file that disappears and comes back is noticed. Never throws.
[[nodiscard]] std::string fingerprint_paths(const std::vector<std::string>& paths);

}  // namespace topoguard::server
