#include "topoguard/kube/credentials.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>

#include "temp_dir.h"
#include "test_clock.h"

namespace topoguard::kube {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;

class CredentialsTest : public ::testing::Test {
 protected:
  std::shared_ptr<testing::TestClock> clock_ = std::make_shared<testing::TestClock>();
  testing::TempDir dir_;
};

std::shared_ptr<const ClientConfig> share(ClientConfig config) {
  return std::make_shared<const ClientConfig>(std::move(config));
}

// A static token is sent as a bearer token; a 401 cannot be helped by retrying.
TEST_F(CredentialsTest, StaticToken) {
  ClientConfig config;
  config.token = "static";
  CredentialSource source(share(config), clock_);
  Result<CredentialsPtr> credentials = source.current();
  ASSERT_TRUE(credentials.has_value());
  EXPECT_EQ((*credentials)->authorization, "Bearer static");
  EXPECT_FALSE(source.unauthorized(**credentials));
}

// Basic authentication is "Basic base64(user:password)".
TEST_F(CredentialsTest, BasicAuthentication) {
  ClientConfig config;
  config.username = "admin";
  config.password = "secret";
  CredentialSource source(share(config), clock_);
  EXPECT_EQ((*source.current())->authorization, "Basic YWRtaW46c2VjcmV0");
}

// The token file is re-read once its last read is a minute old, and at once after a 401.
TEST_F(CredentialsTest, TokenFileIsReReadEveryMinuteAndAfterUnauthorized) {
  ClientConfig config;
  config.token_file = dir_.write("token", "first\n");
  CredentialSource source(share(config), clock_);
  EXPECT_EQ((*source.current())->authorization, "Bearer first");
  dir_.write("token", "second");
  clock_->advance(seconds(59));
  EXPECT_EQ((*source.current())->authorization, "Bearer first");
  clock_->advance(seconds(2));
  CredentialsPtr second = *source.current();
  EXPECT_EQ(second->authorization, "Bearer second");
  dir_.write("token", "third");
  EXPECT_EQ((*source.current())->authorization, "Bearer second");
  EXPECT_TRUE(source.unauthorized(*second));
  EXPECT_EQ((*source.current())->authorization, "Bearer third");
  EXPECT_EQ(source.fetches(), 3u);
}

// While the file cannot be read (being replaced), the last token read is kept.
TEST_F(CredentialsTest, UnreadableTokenFileKeepsTheLastToken) {
  ClientConfig config;
  config.token_file = dir_.write("token", "kept");
  CredentialSource source(share(config), clock_);
  EXPECT_EQ((*source.current())->authorization, "Bearer kept");
  std::filesystem::remove(config.token_file);
  clock_->advance(minutes(2));
  EXPECT_EQ((*source.current())->authorization, "Bearer kept");

  ClientConfig never;
  never.token_file = dir_.path() + "/absent";
  CredentialSource failing(share(never), clock_);
  Result<CredentialsPtr> none = failing.current();
  ASSERT_FALSE(none.has_value());
  EXPECT_EQ(none.error().location.file, never.token_file);
}

ClientConfig exec_config() {
  ClientConfig config;
  ExecConfig exec;
  exec.api_version = "client.authentication.k8s.io/v1";
  exec.command = "plugin";
  config.exec = exec;
  return config;
}

// A plugin's output is cached until its expirationTimestamp, then the plugin runs again.
TEST_F(CredentialsTest, ExecCachedUntilExpiry) {
  int runs = 0;
  CredentialOptions options;
  options.exec_runner = [&](const ClientConfig&) -> Result<ExecCredential> {
    ++runs;
    ExecCredential credential;
    credential.token = "exec-" + std::to_string(runs);
    credential.expiration = clock_->wall_now() + minutes(10);
    return credential;
  };
  CredentialSource source(share(exec_config()), clock_, options);
  EXPECT_EQ((*source.current())->authorization, "Bearer exec-1");
  clock_->advance(minutes(9));
  EXPECT_EQ((*source.current())->authorization, "Bearer exec-1");
  clock_->advance(minutes(2));
  EXPECT_EQ((*source.current())->authorization, "Bearer exec-2");
  EXPECT_EQ(runs, 2);
}

// After a 401 the plugin runs again, once for every request that used the same output.
TEST_F(CredentialsTest, ExecRerunOnUnauthorized) {
  int runs = 0;
  CredentialOptions options;
  options.exec_runner = [&](const ClientConfig&) -> Result<ExecCredential> {
    ++runs;
    ExecCredential credential;
    credential.token = "exec-" + std::to_string(runs);  // no expiry: valid until a 401
    return credential;
  };
  CredentialSource source(share(exec_config()), clock_, options);
  CredentialsPtr first = *source.current();
  clock_->advance(std::chrono::hours(24));
  EXPECT_EQ((*source.current())->authorization, "Bearer exec-1");
  EXPECT_TRUE(source.unauthorized(*first));
  EXPECT_TRUE(source.unauthorized(*first));  // a second request that failed with it too
  CredentialsPtr second = *source.current();
  EXPECT_EQ(second->authorization, "Bearer exec-2");
  EXPECT_TRUE(source.unauthorized(*first));  // stale: newer credentials exist, nothing dropped
  EXPECT_EQ((*source.current())->authorization, "Bearer exec-2");
  EXPECT_EQ(runs, 2);
}

// A plugin's client certificate replaces the kubeconfig's; a failing plugin is an error.
TEST_F(CredentialsTest, ExecCertificateAndFailure) {
  bool fail = false;
  CredentialOptions options;
  options.exec_runner = [&](const ClientConfig&) -> Result<ExecCredential> {
    if (fail) {
      return Error{ErrorCode::kIo, "plugin failed", {}};
    }
    ExecCredential credential;
    credential.client_certificate_pem = "CERT";
    credential.client_key_pem = "KEY";
    credential.expiration = clock_->wall_now() + seconds(1);
    return credential;
  };
  ClientConfig config = exec_config();
  config.client_certificate_pem = "OLD";
  config.client_key_pem = "OLDKEY";
  CredentialSource source(share(config), clock_, options);
  CredentialsPtr credentials = *source.current();
  EXPECT_EQ(credentials->client_certificate_pem, "CERT");
  EXPECT_EQ(credentials->client_key_pem, "KEY");
  EXPECT_TRUE(credentials->authorization.empty());
  fail = true;
  clock_->advance(seconds(2));
  EXPECT_FALSE(source.current().has_value());
}

}  // namespace
}  // namespace topoguard::kube
