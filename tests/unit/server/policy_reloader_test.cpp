#include "topoguard/server/policy_reloader.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "ephemeral_certs.h"

namespace topoguard::server {
namespace {

namespace fs = std::filesystem;

// A loader standing in for policy::load_policies: one policy per file, named after its
// content; a file containing "invalid" is an error.
Result<policy::PolicySet> fake_loader(const std::vector<std::string>& paths) {
  std::vector<policy::Policy> policies;
  for (const auto& root : paths) {
    for (const auto& entry : fs::recursive_directory_iterator(root)) {
      if (!entry.is_regular_file() || entry.path().filename().string().rfind("..", 0) == 0 ||
          entry.path().parent_path().filename().string().rfind("..", 0) == 0) {
        continue;
      }
      std::ifstream in(entry.path());
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      if (text.find("invalid") != std::string::npos) {
        Error error;
        error.code = ErrorCode::kInvalidYaml;
        error.message = "invalid policy";
        error.location.file = entry.path().string();
        return error;
      }
      policy::Policy policy;
      policy.name = text;
      policies.push_back(std::move(policy));
    }
  }
  return policy::PolicySet(std::move(policies));
}

std::string first_name(const PolicyReloader& reloader) {
  const auto set = reloader.current();
  return set->policies().empty() ? "" : set->policies().front().name;
}

class PolicyReloaderTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = topoguard::testing::make_temp_dir("topoguard-policies"); }
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir_;
};

// A failing initial load is an error: the server must not start without policies.
TEST_F(PolicyReloaderTest, InitialLoadMustSucceed) {
  topoguard::testing::write_file(dir_ + "/p.yaml", "invalid");
  EXPECT_FALSE(PolicyReloader::create({dir_}, fake_loader).has_value());
}

// A good change is swapped in; a bad change is refused and the last good set stays.
TEST_F(PolicyReloaderTest, ReloadsGoodKeepsLastGoodOnBad) {
  topoguard::testing::write_file(dir_ + "/p.yaml", "one");
  auto created = PolicyReloader::create({dir_}, fake_loader);
  ASSERT_TRUE(created.has_value());
  PolicyReloader& reloader = **created;
  EXPECT_EQ(first_name(reloader), "one");
  EXPECT_EQ(reloader.poll().result, ReloadResult::kUnchanged);

  topoguard::testing::write_file(dir_ + "/p.yaml", "two");
  EXPECT_EQ(reloader.poll().result, ReloadResult::kReloaded);
  EXPECT_EQ(first_name(reloader), "two");

  const policy::PolicySetPtr held = reloader.current();
  topoguard::testing::write_file(dir_ + "/p.yaml", "invalid!");
  const ReloadReport report = reloader.poll();
  EXPECT_EQ(report.result, ReloadResult::kFailed);
  EXPECT_EQ(report.error.code, ErrorCode::kInvalidYaml);
  EXPECT_EQ(reloader.current().get(), held.get());
}

// A ConfigMap volume update (the `..data` symlink swap) is noticed.
TEST_F(PolicyReloaderTest, FollowsConfigMapSymlinkSwap) {
  fs::create_directory(dir_ + "/..v1");
  fs::create_directory(dir_ + "/..v2");
  topoguard::testing::write_file(dir_ + "/..v1/p.yaml", "one");
  topoguard::testing::write_file(dir_ + "/..v2/p.yaml", "two");
  fs::create_directory_symlink("..v1", dir_ + "/..data");
  fs::create_symlink("..data/p.yaml", dir_ + "/p.yaml");
  auto created = PolicyReloader::create({dir_}, fake_loader);
  ASSERT_TRUE(created.has_value());
  EXPECT_EQ(first_name(**created), "one");
  fs::create_directory_symlink("..v2", dir_ + "/..data_tmp");
  fs::rename(dir_ + "/..data_tmp", dir_ + "/..data");
  EXPECT_EQ((*created)->poll().result, ReloadResult::kReloaded);
  EXPECT_EQ(first_name(**created), "two");
}

// With no paths (the built-in policy) nothing is ever reloaded.
TEST_F(PolicyReloaderTest, BuiltinNeverReloads) {
  int loads = 0;
  auto created = PolicyReloader::create({}, [&loads](const std::vector<std::string>&) {
    ++loads;
    return Result<policy::PolicySet>(policy::PolicySet());
  });
  ASSERT_TRUE(created.has_value());
  EXPECT_EQ((*created)->poll().result, ReloadResult::kUnchanged);
  EXPECT_EQ(loads, 1);
}

}  // namespace
}  // namespace topoguard::server
