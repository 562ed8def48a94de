// The credentials requests carry, kept fresh: a static token or basic authentication as
// configured; a token file re-read when its last read is older than the refresh period (a
// minute, as client-go: projected service-account tokens rotate about hourly) and at once after a
// 401; an exec plugin's output cached until its expirationTimestamp and re-run after a 401. The
// client certificate is the kubeconfig's, or the plugin's when it returns one. Thread-safe: one
// source is shared by every request to a cluster; a plugin runs under its lock, once for all.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "topoguard/common/result.h"
#include "topoguard/kube/client_config.h"
#include "topoguard/kube/clock.h"
#include "topoguard/kube/exec_plugin.h"

namespace topoguard::kube {

struct Credentials {
  std::uint64_t generation = 0;  // changes whenever the source fetches anew
  std::string authorization;     // the Authorization header's value; empty: none
  std::string client_certificate_pem;
  std::string client_key_pem;
};

using CredentialsPtr = std::shared_ptr<const Credentials>;

// Runs the configured exec plugin (tests inject their own).
using ExecRunner = std::function<Result<ExecCredential>(const ClientConfig& config)>;

struct CredentialOptions {
  std::chrono::nanoseconds token_file_refresh = std::chrono::minutes(1);
  ExecRunner exec_runner;  // nullptr: run_exec_plugin
};

class CredentialSource {
 public:
  CredentialSource(std::shared_ptr<const ClientConfig> config, ClockPtr clock,
                   CredentialOptions options = {});

  // The credentials to use now; an error when the token file cannot be read (and never could)
  // or the plugin fails.
  [[nodiscard]] Result<CredentialsPtr> current();
  // A request sent with `used` was answered 401. Drops the cached token file or plugin output
  // when `used` is still the current one. True when a retry may succeed: something was dropped,
  // or newer credentials exist already.
  bool unauthorized(const Credentials& used);

  // Plugin runs and token file reads so far (for tests and metrics).
  [[nodiscard]] std::uint64_t fetches() const;

 private:
  [[nodiscard]] bool fresh() const;              // under mutex_
  [[nodiscard]] Result<CredentialsPtr> fetch();  // under mutex_

  const std::shared_ptr<const ClientConfig> config_;
  const ClockPtr clock_;
  const CredentialOptions options_;
  mutable std::mutex mutex_;
  CredentialsPtr cached_;
  bool invalidated_ = false;
  std::chrono::steady_clock::time_point fetched_at_;
  std::optional<std::chrono::system_clock::time_point> expires_at_;
  std::uint64_t generation_ = 0;
  std::uint64_t fetches_ = 0;
};

}  // namespace topoguard::kube
