#include "topoguard/server/file_fingerprint.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <system_error>

namespace topoguard::server {
namespace {

namespace fs = std::filesystem;

void append_entry(const fs::path& path, std::string& out) {
  out += path.string();
  struct stat link_info {};
  if (::lstat(path.c_str(), &link_info) != 0) {
    out += "|missing\n";
    return;
  }
  std::error_code ec;
  if (S_ISLNK(link_info.st_mode)) {
    out += "|->" + fs::read_symlink(path, ec).string();
  }
  const fs::path resolved = fs::canonical(path, ec);
  out += "|" + (ec ? std::string("unresolved") : resolved.string());
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0) {
    out += "|" + std::to_string(info.st_dev) + ":" + std::to_string(info.st_ino) + "|" +
           std::to_string(info.st_size) + "|" + std::to_string(info.st_mtim.tv_sec) + "." +
           std::to_string(info.st_mtim.tv_nsec);
  }
  out += '\n';
}

}  // namespace

std::string fingerprint_paths(const std::vector<std::string>& paths) {
  std::string out;
  for (const auto& path_text : paths) {
    const fs::path path(path_text);
    append_entry(path, out);
    std::error_code ec;
    if (!fs::is_directory(path, ec)) {
      continue;
    }
    // Directory symlinks are listed (their target is in the entry) but not followed, so a
    // ConfigMap's `..data` swap shows up once and cycles cannot loop.
    // Sorted, because readdir order is not guaranteed to be stable.
    std::vector<fs::path> entries;
    fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied, ec);
    for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      entries.push_back(it->path());
    }
    if (ec) {
      out += "|walk-error:" + ec.message() + "\n";
    }
    std::sort(entries.begin(), entries.end());
    for (const auto& entry : entries) {
      append_entry(entry, out);
    }
  }
  return out;
}

}  // namespace topoguard::server
