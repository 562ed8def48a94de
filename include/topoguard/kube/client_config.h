// Where the cluster is and how to authenticate to it, read the way kubectl and client-go read it:
// `--kubeconfig PATH` (that one file), else $KUBECONFIG (colon-separated files merged by
// client-go's rules: missing files skipped, the first file to set a map key wins the whole entry,
// the first non-empty current-context wins), else in-cluster (KUBERNETES_SERVICE_HOST/PORT and
// the service account's token and ca.crt), else ~/.kube/config (controller-runtime's order).
// Paths in a kubeconfig are relative to the file that names them. Files named by the config
// (certificates, keys) are read at load; the token file is only checked here and re-read by
// CredentialSource. Errors name the file, line and field. The result is a plain value, built once
// and shared read-only.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "topoguard/common/json.h"
#include "topoguard/common/result.h"
#include "topoguard/common/source_location.h"

namespace topoguard::kube {

// An exec credential plugin (client.authentication.k8s.io/v1 or v1beta1).
// How long an exec credential plugin may run (kubectl waits without a bound).
inline constexpr std::chrono::milliseconds kDefaultExecTimeout = std::chrono::seconds(30);

struct ExecConfig {
  std::string api_version;
  std::string command;  // a path containing '/' is resolved against the kubeconfig's folder
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;
  std::string interactive_mode;  // Never or IfAvailable (Always cannot work in a server)
  bool provide_cluster_info = false;
  std::string install_hint;
  Json cluster_config;      // the cluster's extensions["client.authentication.k8s.io/exec"]
  SourceLocation location;  // the `exec` field, for errors
  // From LoadOptions (--exec-timeout), never from the kubeconfig, whose author must not be able to
  // make a client wait forever.
  std::chrono::milliseconds timeout = kDefaultExecTimeout;
};

struct ClientConfig {
  // Parsed from the cluster's `server` (https:// only).
  std::string server;  // as written
  std::string host;    // without brackets
  int port = 443;
  std::string base_path;  // the URL's path, "" or e.g. "/k8s/clusters/c-1", without a final '/'

  std::string ca_pem;  // empty: the system's trusted roots
  bool insecure_skip_tls_verify = false;
  std::string tls_server_name;  // SNI and the name checked in the certificate; empty: `host`

  std::string client_certificate_pem;  // with its key, or both empty
  std::string client_key_pem;
  std::string token;
  std::string token_file;  // absolute; when set it wins over `token`, re-read periodically
  std::string username;    // basic authentication
  std::string password;
  std::optional<ExecConfig> exec;

  std::string context;     // the context used; "in-cluster" in a pod
  std::string namespace_;  // the context's namespace, or the pod's; may be empty
  std::string source;      // for messages: "kubeconfig /path/config" or "in-cluster"
};

struct LoadOptions {
  std::string kubeconfig;  // --kubeconfig; empty: $KUBECONFIG, in-cluster, ~/.kube/config
  std::string context;     // --context; empty: current-context
  // The environment (KUBECONFIG, KUBERNETES_SERVICE_HOST/PORT, HOME); nullptr: the process's.
  std::function<std::optional<std::string>(const std::string& name)> getenv;
  std::string service_account_dir = "/var/run/secrets/kubernetes.io/serviceaccount";
  std::chrono::milliseconds exec_timeout = kDefaultExecTimeout;  // --exec-timeout
};

// Reads the configuration as described at the top of this file.
[[nodiscard]] Result<ClientConfig> load_client_config(const LoadOptions& options);

// The kubeconfig files in precedence order, merged; `context` empty: current-context. A file
// that does not exist is skipped unless `require_all` (an explicit --kubeconfig).
[[nodiscard]] Result<ClientConfig> load_kubeconfig(const std::vector<std::string>& files,
                                                   const std::string& context, bool require_all);

// In a pod: https://KUBERNETES_SERVICE_HOST:KUBERNETES_SERVICE_PORT (IPv6 bracketed), the
// token file (re-read later) and ca.crt of `service_account_dir`, and its namespace file.
[[nodiscard]] Result<ClientConfig> load_in_cluster_config(const LoadOptions& options);

// Splits "https://host:port/path" (IPv6 hosts bracketed) into the config's server fields.
[[nodiscard]] Status parse_server_url(const std::string& server, ClientConfig& config);

}  // namespace topoguard::kube
