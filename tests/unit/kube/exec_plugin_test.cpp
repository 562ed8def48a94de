#include "topoguard/kube/exec_plugin.h"

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <sstream>

#include "note_name.h"
#include "temp_dir.h"
#include "topoguard/kube/rfc3339.h"
#include "test_paths.h"

namespace topoguard::kube {
namespace {

const std::string kPlugin = test::source_dir() + "/tests/kube/exec_plugin.sh";
constexpr const char* kV1 = "client.authentication.k8s.io/v1";

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

struct CredentialCase {
  std::string_view note;
  std::string output;
  bool ok;
  std::string token;
  bool expires;
};

class ExecCredentialTest : public ::testing::TestWithParam<CredentialCase> {};

// A plugin's stdout must be an ExecCredential of the configured version with a token or a
// certificate and key; the expiry is optional.
TEST_P(ExecCredentialTest, Parses) {
  const CredentialCase& c = GetParam();
  Result<ExecCredential> credential = parse_exec_credential(c.output, kV1);
  ASSERT_EQ(credential.has_value(), c.ok) << (credential ? "" : credential.error().to_string());
  if (c.ok) {
    EXPECT_EQ(credential->token, c.token);
    EXPECT_EQ(credential->expiration.has_value(), c.expires);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Outputs, ExecCredentialTest,
    ::testing::Values(
        CredentialCase{
            "Token",
            R"({"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1","status":{"token":"t"}})",
            true, "t", false},
        CredentialCase{
            "TokenWithExpiry",
            R"({"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1","status":{"token":"t","expirationTimestamp":"2030-01-02T03:04:05Z"}})",
            true, "t", true},
        CredentialCase{
            "Certificate",
            R"({"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1","status":{"clientCertificateData":"C","clientKeyData":"K"}})",
            true, "", false},
        CredentialCase{
            "CertificateWithoutKey",
            R"({"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1","status":{"clientCertificateData":"C"}})",
            false, "", false},
        CredentialCase{
            "NothingUsable",
            R"({"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1","status":{}})",
            false, "", false},
        CredentialCase{
            "NoStatus",
            R"({"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1"})", false,
            "", false},
        CredentialCase{
            "OtherVersion",
            R"({"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1beta1","status":{"token":"t"}})",
            false, "", false},
        CredentialCase{
            "OtherKind",
            R"({"kind":"Secret","apiVersion":"client.authentication.k8s.io/v1","status":{"token":"t"}})",
            false, "", false},
        CredentialCase{
            "BadExpiry",
            R"({"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1","status":{"token":"t","expirationTimestamp":"tomorrow"}})",
            false, "", false},
        CredentialCase{"NotJson", "token: t", false, "", false}),
    topoguard::testing::NoteName());

class ExecPluginTest : public ::testing::Test {
 protected:
  ClientConfig config(std::vector<std::pair<std::string, std::string>> env) {
    ClientConfig config;
    config.server = "https://k.example:6443";
    config.tls_server_name = "kubernetes.default.svc";
    config.ca_pem = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
    ExecConfig exec;
    exec.api_version = kV1;
    exec.command = kPlugin;
    exec.args = {"--cluster", "k"};
    exec.env = std::move(env);
    exec.interactive_mode = "Never";
    exec.install_hint = "install exec_plugin.sh";
    exec.cluster_config = Json::parse(R"({"audience":"topoguard"})");
    config.exec = std::move(exec);
    return config;
  }
  testing::TempDir dir_;
};

// The plugin gets our environment plus its env, its args, and KUBERNETES_EXEC_INFO saying it
// is not interactive (and, with provideClusterInfo, the cluster); its token comes back.
TEST_F(ExecPluginTest, RunsThePluginWithItsEnvironment) {
  const std::string token = dir_.write("token", "exec-token-1");
  ClientConfig with = config({{"EXEC_TOKEN_FILE", token},
                              {"EXEC_RUNS", dir_.path() + "/runs"},
                              {"EXEC_INFO_OUT", dir_.path() + "/info"},
                              {"EXEC_EXPIRY", "2031-05-06T07:08:09Z"}});
  with.exec->provide_cluster_info = true;
  Result<ExecCredential> credential = run_exec_plugin(with);
  ASSERT_TRUE(credential.has_value()) << credential.error().to_string();
  EXPECT_EQ(credential->token, "exec-token-1");
  ASSERT_TRUE(credential->expiration.has_value());
  EXPECT_EQ(*credential->expiration, *parse_rfc3339("2031-05-06T07:08:09Z"));
  EXPECT_EQ(slurp(dir_.path() + "/runs"), "--cluster k\n");
  const Json info = Json::parse(slurp(dir_.path() + "/info"));
  EXPECT_EQ(info["kind"], "ExecCredential");
  EXPECT_EQ(info["apiVersion"], kV1);
  EXPECT_EQ(info["spec"]["interactive"], false);
  EXPECT_EQ(info["spec"]["cluster"]["server"], "https://k.example:6443");
  EXPECT_EQ(info["spec"]["cluster"]["tls-server-name"], "kubernetes.default.svc");
  EXPECT_TRUE(info["spec"]["cluster"]["certificate-authority-data"].is_string());
  EXPECT_EQ(info["spec"]["cluster"]["config"]["audience"], "topoguard");

  with.exec->provide_cluster_info = false;
  ASSERT_TRUE(run_exec_plugin(with).has_value());
  EXPECT_FALSE(Json::parse(slurp(dir_.path() + "/info"))["spec"].contains("cluster"));
}

// A failing plugin's error quotes its stderr and the install hint.
TEST_F(ExecPluginTest, FailureQuotesStderrAndHint) {
  Result<ExecCredential> credential = run_exec_plugin(config({{"EXEC_FAIL", "3"}}));
  ASSERT_FALSE(credential.has_value());
  const std::string& message = credential.error().message;
  EXPECT_NE(message.find("exited with status 3"), std::string::npos) << message;
  EXPECT_NE(message.find("no credentials for you"), std::string::npos) << message;
  EXPECT_NE(message.find("install exec_plugin.sh"), std::string::npos) << message;
}

// A command that does not exist, on PATH or as a path, is an error naming it.
TEST_F(ExecPluginTest, MissingCommand) {
  ClientConfig missing = config({});
  missing.exec->command = "topoguard-no-such-plugin";
  Result<ExecCredential> on_path = run_exec_plugin(missing);
  ASSERT_FALSE(on_path.has_value());
  EXPECT_NE(on_path.error().message.find("topoguard-no-such-plugin"), std::string::npos);
  missing.exec->command = dir_.path() + "/absent";
  EXPECT_FALSE(run_exec_plugin(missing).has_value());
}

// A plugin that hangs is killed at the timeout, whether it keeps its output open or closes it
// (then waiting for its exit has the same deadline as reading its output).
TEST_F(ExecPluginTest, HangingPluginTimesOut) {
  for (const char* how : {"EXEC_SLEEP", "EXEC_HANG"}) {
    ClientConfig hanging = config({{how, "30"}});
    hanging.exec->timeout = std::chrono::milliseconds(300);
    Result<ExecCredential> credential = run_exec_plugin(hanging);
    ASSERT_FALSE(credential.has_value()) << how;
    EXPECT_NE(credential.error().message.find("did not finish within 300 ms"), std::string::npos)
        << how;
  }
}

// A plugin that writes without end is stopped at the output cap, which the error names.
TEST_F(ExecPluginTest, EndlessOutputIsCapped) {
  Result<ExecCredential> credential = run_exec_plugin(config({{"EXEC_FLOOD", "1"}}));
  ASSERT_FALSE(credential.has_value());
  EXPECT_NE(credential.error().message.find("more than its output cap of 1 MiB"), std::string::npos)
      << credential.error().message;
}

// Output that is not an ExecCredential of the configured version is refused.
TEST_F(ExecPluginTest, WrongVersionIsRefused) {
  const std::string token = dir_.write("token", "t");
  Result<ExecCredential> credential = run_exec_plugin(config(
      {{"EXEC_TOKEN_FILE", token}, {"EXEC_API_VERSION", "client.authentication.k8s.io/v1beta1"}}));
  ASSERT_FALSE(credential.has_value());
  EXPECT_NE(credential.error().message.find("v1beta1"), std::string::npos);
}

}  // namespace
}  // namespace topoguard::kube
