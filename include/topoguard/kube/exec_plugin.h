// Exec credential plugins (client.authentication.k8s.io/v1 and v1beta1), as kubectl runs them:
// the command with its args and env added to ours, stdin closed (never interactive), and
// KUBERNETES_EXEC_INFO holding an ExecCredential whose spec says so (and carries the cluster when
// provideClusterInfo is set). Its stdout must be an ExecCredential of the same apiVersion with a
// token or a client certificate and key, and optionally an expirationTimestamp. Caching and
// re-running on 401 are CredentialSource's job. Thread-safe (no shared state).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "topoguard/common/result.h"
#include "topoguard/kube/client_config.h"

namespace topoguard::kube {

struct ExecCredential {
  std::string token;
  std::string client_certificate_pem;
  std::string client_key_pem;
  std::optional<std::chrono::system_clock::time_point> expiration;  // none: valid until a 401
};

// Runs `config.exec` (which must be set) and reads its credential: at most 1 MiB of output, and
// a plugin still running after `config.exec->timeout` is killed. Errors quote the plugin's
// stderr (its end) and the install hint.
[[nodiscard]] Result<ExecCredential> run_exec_plugin(const ClientConfig& config);

// The KUBERNETES_EXEC_INFO value for `config`.
[[nodiscard]] std::string exec_info(const ClientConfig& config);

// Reads a plugin's output: an ExecCredential of `api_version`.
[[nodiscard]] Result<ExecCredential> parse_exec_credential(std::string_view output,
                                                           const std::string& api_version);

}  // namespace topoguard::kube
