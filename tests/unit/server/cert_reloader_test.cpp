#include "topoguard/server/cert_reloader.h"

#include <sys/stat.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "ephemeral_certs.h"

namespace topoguard::server {
namespace {

namespace fs = std::filesystem;
using topoguard::testing::make_leaf;
using topoguard::testing::write_file;

class CertReloaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = topoguard::testing::make_temp_dir("topoguard-cert");
    pki_ = topoguard::testing::make_test_pki();
    write_file(cert_path(), pki_.server.cert);
    write_file(key_path(), pki_.server.key);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string cert_path() const { return dir_ + "/tls.crt"; }
  std::string key_path() const { return dir_ + "/tls.key"; }

  std::string dir_;
  topoguard::testing::TestPki pki_;
};

// The initial pair loads and exposes its validity period.
TEST_F(CertReloaderTest, LoadsInitialPair) {
  auto reloader = CertReloader::create(cert_path(), key_path());
  ASSERT_TRUE(reloader.has_value()) << reloader.error().to_string();
  const http::KeyPairPtr pair = (*reloader)->current();
  EXPECT_GT(pair->not_after(), pair->not_before());
  EXPECT_TRUE(pair->valid_at(pair->not_before() + 120));
  EXPECT_FALSE(pair->valid_at(pair->not_after() + 1));
  EXPECT_EQ((*reloader)->poll().result, ReloadResult::kUnchanged);
}

// A key that does not belong to the certificate is refused at start.
TEST_F(CertReloaderTest, RefusesMismatchedPair) {
  write_file(key_path(), pki_.client.key);
  auto reloader = CertReloader::create(cert_path(), key_path());
  ASSERT_FALSE(reloader.has_value());
  EXPECT_NE(reloader.error().message.find("does not match"), std::string::npos);
}

// A renewed pair replaces the old one; a broken one is refused and the old one stays.
TEST_F(CertReloaderTest, ReloadsGoodAndKeepsOldOnBad) {
  auto created = CertReloader::create(cert_path(), key_path());
  ASSERT_TRUE(created.has_value());
  CertReloader& reloader = **created;
  const http::KeyPairPtr first = reloader.current();

  const auto renewed = make_leaf(pki_.ca, "renewed", {"DNS:localhost"}, false, 10, 7200);
  write_file(cert_path(), renewed.cert);
  write_file(key_path(), renewed.key);
  ASSERT_EQ(reloader.poll().result, ReloadResult::kReloaded);
  const http::KeyPairPtr second = reloader.current();
  EXPECT_NE(second.get(), first.get());
  EXPECT_GT(second->not_after(), first->not_after());

  write_file(cert_path(), "-----BEGIN CERTIFICATE-----\ngarbage\n-----END CERTIFICATE-----\n");
  const ReloadReport broken = reloader.poll();
  EXPECT_EQ(broken.result, ReloadResult::kFailed);
  EXPECT_EQ(reloader.current().get(), second.get());
  // The broken files are not re-parsed until they change again.
  EXPECT_EQ(reloader.poll().result, ReloadResult::kUnchanged);
}

// A certificate file swapped for one past the 1 MiB cap, then for a FIFO (which would block a
// plain read), is refused with the file named, and the old pair keeps serving.
TEST_F(CertReloaderTest, KeepsOldPairWhenTheNewFileIsTooLargeOrNotRegular) {
  auto created = CertReloader::create(cert_path(), key_path());
  ASSERT_TRUE(created.has_value());
  CertReloader& reloader = **created;
  const http::KeyPairPtr first = reloader.current();

  write_file(cert_path(), std::string((std::size_t{1} << 20) + 1, 'a'));
  const ReloadReport too_large = reloader.poll();
  EXPECT_EQ(too_large.result, ReloadResult::kFailed);
  EXPECT_NE(too_large.error.to_string().find("cap of 1 MiB"), std::string::npos)
      << too_large.error.to_string();
  EXPECT_EQ(reloader.current().get(), first.get());

  fs::remove(cert_path());
  ASSERT_EQ(::mkfifo(cert_path().c_str(), 0600), 0);
  const ReloadReport fifo = reloader.poll();
  EXPECT_EQ(fifo.result, ReloadResult::kFailed);
  EXPECT_NE(fifo.error.to_string().find("a FIFO"), std::string::npos) << fifo.error.to_string();
  EXPECT_EQ(reloader.current().get(), first.get());
}

// A Secret volume update swaps the `..data` symlink; the reloader notices it.
TEST_F(CertReloaderTest, FollowsSecretVolumeSymlinkSwap) {
  const std::string v1 = dir_ + "/..2024_01_01";
  const std::string v2 = dir_ + "/..2024_02_01";
  fs::create_directory(v1);
  fs::create_directory(v2);
  write_file(v1 + "/tls.crt", pki_.server.cert);
  write_file(v1 + "/tls.key", pki_.server.key);
  const auto renewed = make_leaf(pki_.ca, "renewed", {"DNS:localhost"}, false, 11, 7200);
  write_file(v2 + "/tls.crt", renewed.cert);
  write_file(v2 + "/tls.key", renewed.key);
  fs::create_directory_symlink("..2024_01_01", dir_ + "/..data");
  const std::string cert = dir_ + "/volume.crt";
  const std::string key = dir_ + "/volume.key";
  fs::create_symlink("..data/tls.crt", cert);
  fs::create_symlink("..data/tls.key", key);

  auto created = CertReloader::create(cert, key);
  ASSERT_TRUE(created.has_value()) << created.error().to_string();
  const std::int64_t before = (*created)->current()->not_after();

  // What the kubelet does: a new symlink renamed over ..data.
  fs::create_directory_symlink("..2024_02_01", dir_ + "/..data_tmp");
  fs::rename(dir_ + "/..data_tmp", dir_ + "/..data");
  ASSERT_EQ((*created)->poll().result, ReloadResult::kReloaded);
  EXPECT_GT((*created)->current()->not_after(), before);
}

}  // namespace
}  // namespace topoguard::server
