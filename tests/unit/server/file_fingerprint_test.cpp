#include "topoguard/server/file_fingerprint.h"

#include <filesystem>

#include <gtest/gtest.h>

#include "ephemeral_certs.h"

namespace topoguard::server {
namespace {

namespace fs = std::filesystem;

// Content changes, new files, removed files and symlink retargets all change the fingerprint;
// nothing else does.
TEST(FileFingerprintTest, ChangesExactlyWhenFilesChange) {
  const std::string dir = topoguard::testing::make_temp_dir("topoguard-fp");
  topoguard::testing::write_file(dir + "/a", "1");
  const std::string initial = fingerprint_paths({dir});
  EXPECT_EQ(fingerprint_paths({dir}), initial);

  topoguard::testing::write_file(dir + "/a", "22");
  const std::string changed = fingerprint_paths({dir});
  EXPECT_NE(changed, initial);

  topoguard::testing::write_file(dir + "/b", "1");
  const std::string added = fingerprint_paths({dir});
  EXPECT_NE(added, changed);

  fs::create_symlink("a", dir + "/link");
  const std::string linked = fingerprint_paths({dir});
  fs::remove(dir + "/link");
  fs::create_symlink("b", dir + "/link");
  EXPECT_NE(fingerprint_paths({dir}), linked);

  const std::string missing = fingerprint_paths({dir + "/nope"});
  EXPECT_NE(missing.find("missing"), std::string::npos);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace topoguard::server
