#include "topoguard/kube/client_config.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "ephemeral_certs.h"
#include "note_name.h"
#include "temp_dir.h"

namespace topoguard::kube {
namespace {

std::string base64(const std::string& text) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < text.size(); i += 3) {
    const unsigned v = (static_cast<unsigned char>(text[i]) << 16) |
                       (static_cast<unsigned char>(text[i + 1]) << 8) |
                       static_cast<unsigned char>(text[i + 2]);
    out += {kAlphabet[(v >> 18) & 63], kAlphabet[(v >> 12) & 63], kAlphabet[(v >> 6) & 63],
            kAlphabet[v & 63]};
  }
  if (i + 1 == text.size()) {
    const unsigned v = static_cast<unsigned char>(text[i]) << 16;
    out += {kAlphabet[(v >> 18) & 63], kAlphabet[(v >> 12) & 63], '=', '='};
  } else if (i + 2 == text.size()) {
    const unsigned v = (static_cast<unsigned char>(text[i]) << 16) |
                       (static_cast<unsigned char>(text[i + 1]) << 8);
    out += {kAlphabet[(v >> 18) & 63], kAlphabet[(v >> 12) & 63], kAlphabet[(v >> 6) & 63], '='};
  }
  return out;
}

// Certificates shared by the tests (made once: key generation is the slow part).
struct Pki {
  Pki()
      : ca(testing::make_ca("kube test CA")),
        client(testing::make_leaf(ca, "tester", {}, true, 7)),
        other(testing::make_leaf(ca, "other", {}, true, 8)) {}
  testing::PemPair ca;
  testing::PemPair client;
  testing::PemPair other;
};

const Pki& pki() {
  static const Pki shared;
  return shared;
}

class KubeconfigTest : public ::testing::Test {
 protected:
  // Writes `text` at `relative` in the test's folder, with ${CA_DATA}, ${CERT_DATA} and
  // ${KEY_DATA} replaced by base64 PEM; returns the path.
  std::string write(const std::string& relative, std::string text) {
    const std::map<std::string, std::string> values = {
        {"${CA_DATA}", base64(pki().ca.cert)},
        {"${CERT_DATA}", base64(pki().client.cert)},
        {"${KEY_DATA}", base64(pki().client.key)},
        {"${OTHER_KEY_DATA}", base64(pki().other.key)}};
    for (const auto& [name, value] : values) {
      for (auto at = text.find(name); at != std::string::npos; at = text.find(name)) {
        text.replace(at, name.size(), value);
      }
    }
    return dir_.write(relative, text);
  }
  void write_certs(const std::string& folder) {
    dir_.write(folder + "/ca.crt", pki().ca.cert);
    dir_.write(folder + "/client.crt", pki().client.cert);
    dir_.write(folder + "/client.key", pki().client.key);
  }
  [[nodiscard]] std::string path(const std::string& relative) const {
    return dir_.path() + "/" + relative;
  }
  LoadOptions options(std::map<std::string, std::string> env) const {
    LoadOptions options;
    options.getenv = [env = std::move(env)](const std::string& name) -> std::optional<std::string> {
      const auto found = env.find(name);
      if (found == env.end()) {
        return std::nullopt;
      }
      return found->second;
    };
    options.service_account_dir = dir_.path() + "/serviceaccount";
    return options;
  }

  testing::TempDir dir_;
};

constexpr const char* kSimple = R"(apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: dev-cluster
  cluster:
    server: https://10.0.0.1:6443/
    certificate-authority-data: ${CA_DATA}
    tls-server-name: kubernetes.default.svc
users:
- name: dev-user
  user:
    token: abc.def
contexts:
- name: dev
  context: {cluster: dev-cluster, user: dev-user, namespace: team-a}
- name: prod
  context: {cluster: dev-cluster, user: cert-user}
)";

// The current context's cluster and user become the configuration.
TEST_F(KubeconfigTest, ReadsTheCurrentContext) {
  Result<ClientConfig> config = load_kubeconfig({write("config", kSimple)}, "", true);
  ASSERT_TRUE(config.has_value()) << config.error().to_string();
  EXPECT_EQ(config->server, "https://10.0.0.1:6443/");
  EXPECT_EQ(config->host, "10.0.0.1");
  EXPECT_EQ(config->port, 6443);
  EXPECT_EQ(config->base_path, "");
  EXPECT_EQ(config->ca_pem, pki().ca.cert);
  EXPECT_EQ(config->tls_server_name, "kubernetes.default.svc");
  EXPECT_EQ(config->token, "abc.def");
  EXPECT_EQ(config->namespace_, "team-a");
  EXPECT_EQ(config->context, "dev");
  EXPECT_FALSE(config->exec.has_value());
}

// --context picks another context; a context naming an undefined user is an error that names
// the file, line and field.
TEST_F(KubeconfigTest, ContextFlagAndUndefinedUser) {
  const std::string file = write("config", kSimple);
  Result<ClientConfig> config = load_kubeconfig({file}, "prod", true);
  ASSERT_FALSE(config.has_value());
  EXPECT_EQ(config.error().code, ErrorCode::kInvalidValue);
  EXPECT_EQ(config.error().location.file, file);
  EXPECT_EQ(config.error().location.field, "/contexts/1/context/user");
  EXPECT_EQ(config.error().location.line, 18);
  EXPECT_NE(config.error().message.find("cert-user"), std::string::npos);
  Result<ClientConfig> missing = load_kubeconfig({file}, "staging", true);
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.error().message.find("\"staging\" is not defined"), std::string::npos);
}

// Certificate and key files are read relative to the kubeconfig's folder.
TEST_F(KubeconfigTest, RelativePathsResolveAgainstTheFile) {
  write_certs("conf/certs");
  dir_.write("conf/token", "file-token\n");
  const std::string file = write("conf/config", R"(
current-context: c
clusters:
- name: k
  cluster: {server: "https://[fd00::1]:8443/k8s/clusters/c-1/", certificate-authority: certs/ca.crt}
users:
- name: u
  user: {client-certificate: certs/client.crt, client-key: ./certs/client.key, tokenFile: token}
contexts:
- name: c
  context: {cluster: k, user: u}
)");
  Result<ClientConfig> config = load_kubeconfig({file}, "", true);
  ASSERT_TRUE(config.has_value()) << config.error().to_string();
  EXPECT_EQ(config->host, "fd00::1");
  EXPECT_EQ(config->port, 8443);
  EXPECT_EQ(config->base_path, "/k8s/clusters/c-1");
  EXPECT_EQ(config->ca_pem, pki().ca.cert);
  EXPECT_EQ(config->client_certificate_pem, pki().client.cert);
  EXPECT_EQ(config->client_key_pem, pki().client.key);
  EXPECT_EQ(config->token_file, path("conf/token"));
}

// $KUBECONFIG files merge as client-go merges them: the first file to define a name wins the
// whole entry, the first current-context wins, missing files are skipped, and each entry's
// relative paths resolve against its own file.
TEST_F(KubeconfigTest, KubeconfigListMergesFirstWins) {
  write_certs("second/certs");
  const std::string first = write("first/config", R"(
clusters:
- name: shared
  cluster: {server: "https://first.example:6443", certificate-authority-data: ${CA_DATA}}
users:
- name: shared-user
  user: {token: first-token}
)");
  const std::string second = write("second/config", R"(
current-context: second-context
clusters:
- name: shared
  cluster: {server: "https://second.example:6443", insecure-skip-tls-verify: true}
- name: only-second
  cluster: {server: "https://only-second.example", certificate-authority: certs/ca.crt}
users:
- name: shared-user
  user: {token: second-token}
contexts:
- name: second-context
  context: {cluster: shared, user: shared-user}
- name: other
  context: {cluster: only-second, user: shared-user}
)");
  const std::string third = write("third/config", "current-context: other\n");
  LoadOptions load =
      options({{"KUBECONFIG", first + ":" + path("absent/config") + "::" + second + ":" + third}});
  Result<ClientConfig> config = load_client_config(load);
  ASSERT_TRUE(config.has_value()) << config.error().to_string();
  EXPECT_EQ(config->context, "second-context");
  EXPECT_EQ(config->host, "first.example");
  EXPECT_FALSE(config->insecure_skip_tls_verify);  // the entry is first's, whole
  EXPECT_EQ(config->ca_pem, pki().ca.cert);
  EXPECT_EQ(config->token, "first-token");

  load.context = "other";
  Result<ClientConfig> other = load_client_config(load);
  ASSERT_TRUE(other.has_value()) << other.error().to_string();
  EXPECT_EQ(other->host, "only-second.example");
  EXPECT_EQ(other->port, 443);
  EXPECT_EQ(other->ca_pem, pki().ca.cert);  // second/certs/ca.crt
}

// --kubeconfig names one file, which must exist; it wins over $KUBECONFIG and in-cluster.
TEST_F(KubeconfigTest, ExplicitFileWinsAndMustExist) {
  const std::string file = write("config", kSimple);
  LoadOptions load = options({{"KUBECONFIG", path("absent")},
                              {"KUBERNETES_SERVICE_HOST", "10.96.0.1"},
                              {"KUBERNETES_SERVICE_PORT", "443"}});
  load.kubeconfig = file;
  Result<ClientConfig> config = load_client_config(load);
  ASSERT_TRUE(config.has_value()) << config.error().to_string();
  EXPECT_EQ(config->context, "dev");
  load.kubeconfig = path("nowhere/config");
  Result<ClientConfig> missing = load_client_config(load);
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code, ErrorCode::kIo);
  EXPECT_EQ(missing.error().location.file, path("nowhere/config"));
  load.kubeconfig.clear();
  Result<ClientConfig> none = load_client_config(load);
  ASSERT_FALSE(none.has_value());
  EXPECT_NE(none.error().message.find("KUBECONFIG"), std::string::npos);
}

// Without a kubeconfig, in a pod: the service host and port (IPv6 bracketed), the token file
// and CA of the service account folder, and its namespace.
TEST_F(KubeconfigTest, InCluster) {
  dir_.write("serviceaccount/token", "sa-token\n");
  dir_.write("serviceaccount/ca.crt", pki().ca.cert);
  dir_.write("serviceaccount/namespace", "topoguard\n");
  Result<ClientConfig> config = load_client_config(
      options({{"KUBERNETES_SERVICE_HOST", "fd00:10:96::1"}, {"KUBERNETES_SERVICE_PORT", "443"}}));
  ASSERT_TRUE(config.has_value()) << config.error().to_string();
  EXPECT_EQ(config->server, "https://[fd00:10:96::1]:443");
  EXPECT_EQ(config->host, "fd00:10:96::1");
  EXPECT_EQ(config->port, 443);
  EXPECT_EQ(config->token_file, path("serviceaccount/token"));
  EXPECT_TRUE(config->token.empty());
  EXPECT_EQ(config->ca_pem, pki().ca.cert);
  EXPECT_EQ(config->namespace_, "topoguard");
  EXPECT_EQ(config->context, "in-cluster");

  Result<ClientConfig> v4 = load_in_cluster_config(
      options({{"KUBERNETES_SERVICE_HOST", "10.96.0.1"}, {"KUBERNETES_SERVICE_PORT", "6443"}}));
  ASSERT_TRUE(v4.has_value());
  EXPECT_EQ(v4->server, "https://10.96.0.1:6443");
}

// In-cluster needs both variables and a readable token; the error names what is missing.
TEST_F(KubeconfigTest, InClusterErrors) {
  Result<ClientConfig> no_port =
      load_in_cluster_config(options({{"KUBERNETES_SERVICE_HOST", "10.96.0.1"}}));
  ASSERT_FALSE(no_port.has_value());
  EXPECT_NE(no_port.error().message.find("KUBERNETES_SERVICE_PORT"), std::string::npos);
  Result<ClientConfig> no_token = load_in_cluster_config(
      options({{"KUBERNETES_SERVICE_HOST", "10.96.0.1"}, {"KUBERNETES_SERVICE_PORT", "443"}}));
  ASSERT_FALSE(no_token.has_value());
  EXPECT_EQ(no_token.error().location.file, path("serviceaccount/token"));
  Result<ClientConfig> nothing = load_client_config(options({}));
  ASSERT_FALSE(nothing.has_value());
  EXPECT_EQ(nothing.error().code, ErrorCode::kMissingField);
}

// With neither flag, $KUBECONFIG nor a pod, ~/.kube/config is read.
TEST_F(KubeconfigTest, HomeConfigLast) {
  write("home/.kube/config", kSimple);
  Result<ClientConfig> config = load_client_config(options({{"HOME", path("home")}}));
  ASSERT_TRUE(config.has_value()) << config.error().to_string();
  EXPECT_EQ(config->context, "dev");
}

// Exec plugins: command paths with '/' resolve against the file, bare names stay for PATH;
// args, env, provideClusterInfo and the cluster's exec extension are kept; v1beta1 defaults
// interactiveMode to IfAvailable.
TEST_F(KubeconfigTest, ExecPlugin) {
  const std::string file = write("conf/config", R"(
current-context: c
clusters:
- name: k
  cluster:
    server: https://k.example
    extensions:
    - name: client.authentication.k8s.io/exec
      extension: {audience: topoguard}
users:
- name: relative
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: ./bin/get-token
      args: [--cluster, k]
      env: [{name: REGION, value: eu}]
      interactiveMode: Never
      provideClusterInfo: true
- name: on-path
  user:
    exec: {apiVersion: client.authentication.k8s.io/v1beta1, command: kubelogin}
contexts:
- name: c
  context: {cluster: k, user: relative}
- name: p
  context: {cluster: k, user: on-path}
)");
  Result<ClientConfig> config = load_kubeconfig({file}, "", true);
  ASSERT_TRUE(config.has_value()) << config.error().to_string();
  ASSERT_TRUE(config->exec.has_value());
  EXPECT_EQ(config->exec->command, path("conf/bin/get-token"));
  EXPECT_EQ(config->exec->args, (std::vector<std::string>{"--cluster", "k"}));
  ASSERT_EQ(config->exec->env.size(), 1u);
  EXPECT_EQ(config->exec->env[0].first, "REGION");
  EXPECT_EQ(config->exec->interactive_mode, "Never");
  EXPECT_TRUE(config->exec->provide_cluster_info);
  EXPECT_EQ(config->exec->cluster_config, Json::parse(R"({"audience":"topoguard"})"));
  Result<ClientConfig> on_path = load_kubeconfig({file}, "p", true);
  ASSERT_TRUE(on_path.has_value()) << on_path.error().to_string();
  EXPECT_EQ(on_path->exec->command, "kubelogin");
  EXPECT_EQ(on_path->exec->interactive_mode, "IfAvailable");
}

struct ErrorCase {
  std::string_view note;
  std::string cluster;  // the cluster mapping's body (flow style)
  std::string user;     // the user mapping's body (flow style)
  ErrorCode code;
  std::string field;    // JSON pointer of the field named
  std::string message;  // part of the message
};

class KubeconfigErrorTest : public KubeconfigTest,
                            public ::testing::WithParamInterface<ErrorCase> {};

// Each bad kubeconfig is refused with a code, the file, the line and the field.
TEST_P(KubeconfigErrorTest, NamesFileLineAndField) {
  const ErrorCase& c = GetParam();
  write_certs("certs");
  const std::string file = write("config",
                                 "current-context: c\n"
                                 "clusters:\n"
                                 "- name: k\n"
                                 "  cluster: " +
                                     c.cluster +
                                     "\n"
                                     "users:\n"
                                     "- name: u\n"
                                     "  user: " +
                                     c.user +
                                     "\n"
                                     "contexts:\n"
                                     "- name: c\n"
                                     "  context: {cluster: k, user: u}\n");
  Result<ClientConfig> config = load_kubeconfig({file}, "", true);
  ASSERT_FALSE(config.has_value());
  EXPECT_EQ(config.error().code, c.code) << config.error().to_string();
  EXPECT_EQ(config.error().location.file, file);
  EXPECT_EQ(config.error().location.field, c.field);
  EXPECT_EQ(config.error().location.line, c.field.starts_with("/users") ? 7 : 4);
  EXPECT_NE(config.error().message.find(c.message), std::string::npos)
      << config.error().to_string();
}

const std::string kOkCluster = "{server: \"https://k.example\"}";
const std::string kOkUser = "{token: t}";

INSTANTIATE_TEST_SUITE_P(
    Fields, KubeconfigErrorTest,
    ::testing::Values(
        ErrorCase{"NoServer", "{insecure-skip-tls-verify: true}", kOkUser, ErrorCode::kMissingField,
                  "/clusters/0/cluster", "server is required"},
        ErrorCase{"PlainHttp", "{server: \"http://k.example\"}", kOkUser, ErrorCode::kInvalidValue,
                  "/clusters/0/cluster/server", "only https://"},
        ErrorCase{"BothCaForms",
                  "{server: \"https://k\", certificate-authority: certs/ca.crt, "
                  "certificate-authority-data: ${CA_DATA}}",
                  kOkUser, ErrorCode::kInvalidValue,
                  "/clusters/0/cluster/certificate-authority-data", "both set"},
        ErrorCase{"CaNotBase64", "{server: \"https://k\", certificate-authority-data: \"@@@\"}",
                  kOkUser, ErrorCode::kInvalidValue,
                  "/clusters/0/cluster/certificate-authority-data", "not base64"},
        ErrorCase{"CaNotPem", "{server: \"https://k\", certificate-authority-data: aGVsbG8=}",
                  kOkUser, ErrorCode::kInvalidValue,
                  "/clusters/0/cluster/certificate-authority-data", "no PEM certificate"},
        ErrorCase{"CaFileMissing", "{server: \"https://k\", certificate-authority: nope.crt}",
                  kOkUser, ErrorCode::kIo, "/clusters/0/cluster/certificate-authority",
                  "cannot read"},
        ErrorCase{"InsecureWithCa",
                  "{server: \"https://k\", certificate-authority: certs/ca.crt, "
                  "insecure-skip-tls-verify: true}",
                  kOkUser, ErrorCode::kInvalidValue, "/clusters/0/cluster/insecure-skip-tls-verify",
                  "set one"},
        ErrorCase{"InsecureNotBool", "{server: \"https://k\", insecure-skip-tls-verify: yes}",
                  kOkUser, ErrorCode::kWrongType, "/clusters/0/cluster/insecure-skip-tls-verify",
                  "true or false"},
        ErrorCase{"ProxyUrl", "{server: \"https://k\", proxy-url: \"http://proxy:3128\"}", kOkUser,
                  ErrorCode::kUnknownField, "/clusters/0/cluster/proxy-url", "not supported"},
        ErrorCase{"TokenNotString", kOkCluster, "{token: 12345}", ErrorCode::kWrongType,
                  "/users/0/user/token", "must be a string"},
        ErrorCase{"KeyWithoutCertificate", kOkCluster, "{client-key: certs/client.key}",
                  ErrorCode::kMissingField, "/users/0/user",
                  "client-key is set without client-certificate"},
        ErrorCase{"KeyOfAnotherCertificate", kOkCluster,
                  "{client-certificate-data: ${CERT_DATA}, client-key-data: ${OTHER_KEY_DATA}}",
                  ErrorCode::kInvalidValue, "/users/0/user/client-key-data", "does not belong"},
        ErrorCase{"TokenFileMissing", kOkCluster, "{tokenFile: no-such-token}", ErrorCode::kIo,
                  "/users/0/user/tokenFile", "cannot read"},
        ErrorCase{"TokenAndBasic", kOkCluster, "{token: t, username: u, password: p}",
                  ErrorCode::kInvalidValue, "/users/0/user", "more than one authentication"},
        ErrorCase{"AuthProvider", kOkCluster, "{auth-provider: {name: gcp}}",
                  ErrorCode::kUnknownField, "/users/0/user/auth-provider", "not supported"},
        ErrorCase{"Impersonation", kOkCluster, "{token: t, as: admin}", ErrorCode::kUnknownField,
                  "/users/0/user/as", "impersonation"},
        ErrorCase{"ExecWithoutInteractiveMode", kOkCluster,
                  "{exec: {apiVersion: client.authentication.k8s.io/v1, command: x}}",
                  ErrorCode::kMissingField, "/users/0/user/exec/interactiveMode", "required"},
        ErrorCase{"ExecAlwaysInteractive", kOkCluster,
                  "{exec: {apiVersion: client.authentication.k8s.io/v1, command: x, "
                  "interactiveMode: Always}}",
                  ErrorCode::kInvalidValue, "/users/0/user/exec/interactiveMode", "terminal"},
        ErrorCase{"ExecOldApiVersion", kOkCluster,
                  "{exec: {apiVersion: client.authentication.k8s.io/v1alpha1, command: x}}",
                  ErrorCode::kInvalidValue, "/users/0/user/exec/apiVersion", "v1alpha1"},
        ErrorCase{"ExecNoCommand", kOkCluster,
                  "{exec: {apiVersion: client.authentication.k8s.io/v1, interactiveMode: Never}}",
                  ErrorCode::kMissingField, "/users/0/user/exec/command", "required"},
        ErrorCase{"ExecArgNotString", kOkCluster,
                  "{exec: {apiVersion: client.authentication.k8s.io/v1, command: x, "
                  "interactiveMode: Never, args: [a, {b: c}]}}",
                  ErrorCode::kWrongType, "/users/0/user/exec/args/1", "must be a string"},
        ErrorCase{"ExecAndToken", kOkCluster,
                  "{token: t, exec: {apiVersion: client.authentication.k8s.io/v1, command: x, "
                  "interactiveMode: Never}}",
                  ErrorCode::kInvalidValue, "/users/0/user", "more than one authentication"}),
    topoguard::testing::NoteName());

// Broken YAML is reported with its file and line.
TEST_F(KubeconfigTest, BrokenYaml) {
  const std::string file = write("config", "clusters:\n- name: a\n  cluster: {server: [\n");
  Result<ClientConfig> config = load_kubeconfig({file}, "", true);
  ASSERT_FALSE(config.has_value());
  EXPECT_EQ(config.error().code, ErrorCode::kInvalidYaml);
  EXPECT_EQ(config.error().location.file, file);
}

// No context at all: the error says so.
TEST_F(KubeconfigTest, NoCurrentContext) {
  Result<ClientConfig> config = load_kubeconfig({write("config", "clusters: []\n")}, "", true);
  ASSERT_FALSE(config.has_value());
  EXPECT_NE(config.error().message.find("no current-context"), std::string::npos);
}

struct UrlCase {
  std::string_view note;
  std::string server;
  bool ok;
  std::string host;
  int port;
  std::string path;
};

class ServerUrlTest : public ::testing::TestWithParam<UrlCase> {};

// `server` URLs: https only, IPv6 in brackets, a default port of 443, a base path kept.
TEST_P(ServerUrlTest, Parses) {
  const UrlCase& c = GetParam();
  ClientConfig config;
  Status parsed = parse_server_url(c.server, config);
  ASSERT_EQ(parsed.has_value(), c.ok);
  if (c.ok) {
    EXPECT_EQ(config.host, c.host);
    EXPECT_EQ(config.port, c.port);
    EXPECT_EQ(config.base_path, c.path);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Urls, ServerUrlTest,
    ::testing::Values(UrlCase{"HostPort", "https://api.example:6443", true, "api.example", 6443,
                              ""},
                      UrlCase{"DefaultPort", "https://api.example", true, "api.example", 443, ""},
                      UrlCase{"UpperScheme", "HTTPS://api.example/", true, "api.example", 443, ""},
                      UrlCase{"Ipv6", "https://[::1]:6443", true, "::1", 6443, ""},
                      UrlCase{"Ipv6NoPort", "https://[fd00::1]", true, "fd00::1", 443, ""},
                      UrlCase{"BasePath", "https://r.example/k8s/clusters/c-1/", true, "r.example",
                              443, "/k8s/clusters/c-1"},
                      UrlCase{"Http", "http://api.example", false, "", 0, ""},
                      UrlCase{"BareIpv6", "https://::1:6443", false, "", 0, ""},
                      UrlCase{"BadPort", "https://api.example:99999", false, "", 0, ""},
                      UrlCase{"NoHost", "https://:6443", false, "", 0, ""},
                      UrlCase{"UserInfo", "https://me@api.example", false, "", 0, ""},
                      UrlCase{"Query", "https://api.example/?x=1", false, "", 0, ""}),
    topoguard::testing::NoteName());

}  // namespace
}  // namespace topoguard::kube
