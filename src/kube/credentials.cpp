#include "topoguard/kube/credentials.h"

#include <fstream>
#include <sstream>
#include <utility>

#include "topoguard/kube/base64.h"

namespace topoguard::kube {

namespace {

std::optional<std::string> read_token(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return std::nullopt;
  }
  std::ostringstream text;
  text << in.rdbuf();
  std::string token = std::move(text).str();
  const auto first = token.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) {
    return std::string();
  }
  return token.substr(first, token.find_last_not_of(" \t\r\n") - first + 1);
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
    std::optional<std::string> token = read_token(config_->token_file);
    if (!token || token->empty()) {
      if (cached_ && !cached_->authorization.empty()) {
        // As client-go: keep the last token read while the file cannot be read (being
        // rewritten, say); a 401 will tell if it is no longer good.
        fetched_at_ = clock_->now();
        invalidated_ = false;
        return cached_;
      }
      return Error{ErrorCode::kIo,
                   token ? "the token file is empty" : "cannot read the token file",
                   {config_->token_file, 0, ""}};
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
