#include "topoguard/kube/credentials.h"

#include <utility>

#include "topoguard/common/text_file.h"
#include "topoguard/common/base64.h"

namespace topoguard::kube {

namespace {

// The token in the file at `path`, trimmed (a token file is written with a newline).
Result<std::string> read_token(const std::string& path) {
  Result<std::string> token = read_text_file(path, kMaxTokenFileBytes);
  if (!token) {
    return token;
  }
  const auto first = token->find_first_not_of(" \t\r\n");
  if (first == std::string::npos) {
    return std::string();
  }
  return token->substr(first, token->find_last_not_of(" \t\r\n") - first + 1);
}

}  // namespace

CredentialSource::CredentialSource(std::shared_ptr<const ClientConfig> config, ClockPtr clock,
                                   CredentialOptions options)
    : config_(std::move(config)), clock_(std::move(clock)), options_(std::move(options)) {}

bool CredentialSource::fresh() const {
  if (!cached_ || invalidated_) {
    return false;
  }
  if (config_->exec) {
    return !expires_at_ || clock_->wall_now() < *expires_at_;
  }
  if (!config_->token_file.empty()) {
    return clock_->now() - fetched_at_ < options_.token_file_refresh;
  }
  return true;
}

Result<CredentialsPtr> CredentialSource::fetch() {
  auto credentials = std::make_shared<Credentials>();
  credentials->client_certificate_pem = config_->client_certificate_pem;
  credentials->client_key_pem = config_->client_key_pem;
  expires_at_.reset();
  if (config_->exec) {
    ++fetches_;
    Result<ExecCredential> output =
        options_.exec_runner ? options_.exec_runner(*config_) : run_exec_plugin(*config_);
    if (!output) {
      return output.error();
    }
    if (!output->token.empty()) {
      credentials->authorization = "Bearer " + output->token;
    }
    if (!output->client_certificate_pem.empty()) {
      credentials->client_certificate_pem = output->client_certificate_pem;
      credentials->client_key_pem = output->client_key_pem;
    }
    expires_at_ = output->expiration;
  } else if (!config_->token_file.empty()) {
    ++fetches_;
    Result<std::string> token = read_token(config_->token_file);
    if (!token || token->empty()) {
      if (cached_ && !cached_->authorization.empty()) {
        // As client-go: keep the last token read while the file cannot be read (being
        // rewritten, say); a 401 will tell if it is no longer good.
        fetched_at_ = clock_->now();
        invalidated_ = false;
        return cached_;
      }
      return token ? Error{ErrorCode::kIo, "the token file is empty", {config_->token_file, 0, ""}}
                   : token.error();
    }
    credentials->authorization = "Bearer " + *token;
  } else if (!config_->token.empty()) {
    credentials->authorization = "Bearer " + config_->token;
  } else if (!config_->username.empty() || !config_->password.empty()) {
    credentials->authorization =
        "Basic " + base64_encode(config_->username + ":" + config_->password);
  }
  credentials->generation = ++generation_;
  fetched_at_ = clock_->now();
  invalidated_ = false;
  cached_ = std::move(credentials);
  return cached_;
}

Result<CredentialsPtr> CredentialSource::current() {
  std::lock_guard lock(mutex_);
  if (fresh()) {
    return cached_;
  }
  return fetch();
}

bool CredentialSource::unauthorized(const Credentials& used) {
  std::lock_guard lock(mutex_);
  if (!cached_ || cached_->generation != used.generation) {
    return true;  // newer credentials exist (or none were fetched yet)
  }
  if (config_->exec || !config_->token_file.empty()) {
    invalidated_ = true;
    return true;
  }
  return false;  // a static token, basic auth or a certificate does not change by itself
}

std::uint64_t CredentialSource::fetches() const {
  std::lock_guard lock(mutex_);
  return fetches_;
}

}  // namespace topoguard::kube
