#include "topoguard/kube/exec_plugin.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <vector>

#include "topoguard/common/json.h"
#include "topoguard/common/text_file.h"
#include "topoguard/common/base64.h"
#include "topoguard/kube/rfc3339.h"

extern char** environ;  // NOLINT(readability-redundant-declaration): POSIX declares it nowhere

namespace topoguard::kube {

namespace {

constexpr std::size_t kMaxOutputBytes = 1024 * 1024;
constexpr std::size_t kStderrTail = 2048;
constexpr int kExitPollMilliseconds = 10;

// Closes a descriptor when it goes out of scope.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { reset(); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  void reset(int fd = -1) {
    if (fd_ >= 0) {
      ::close(fd_);
    }
    fd_ = fd;
  }
  [[nodiscard]] int get() const { return fd_; }

 private:
  int fd_ = -1;
};

Error plugin_error(const ClientConfig& config, std::string message) {
  const ExecConfig& exec = *config.exec;
  message = "exec plugin \"" + exec.command + "\": " + message;
  if (!exec.install_hint.empty()) {
    message += " (" + exec.install_hint + ")";
  }
  return Error{ErrorCode::kIo, std::move(message), exec.location};
}

std::string tail(const std::string& text) {
  std::string cut = text.size() > kStderrTail ? text.substr(text.size() - kStderrTail) : text;
  while (!cut.empty() && (cut.back() == '\n' || cut.back() == '\r')) {
    cut.pop_back();
  }
  return cut;
}

}  // namespace

Result<ExecCredential> parse_exec_credential(std::string_view output,
                                             const std::string& api_version) {
  const Json value = Json::parse(output, nullptr, false);
  if (value.is_discarded() || !value.is_object()) {
    return Error{ErrorCode::kInvalidJson, "the output is not a JSON ExecCredential", {}};
  }
  if (string_member(value, "kind") != "ExecCredential") {
    return Error{
        ErrorCode::kInvalidValue, "the output's kind is not ExecCredential", {"", 0, "/kind"}};
  }
  if (string_member(value, "apiVersion") != api_version) {
    return Error{ErrorCode::kInvalidValue,
                 "the plugin returned apiVersion \"" + string_member(value, "apiVersion") +
                     "\", configured \"" + api_version + "\"",
                 {"", 0, "/apiVersion"}};
  }
  const Json* status = member(value, "status");
  if (status == nullptr || !status->is_object()) {
    return Error{ErrorCode::kMissingField, "the ExecCredential has no status", {"", 0, "/status"}};
  }
  ExecCredential credential;
  credential.token = string_member(*status, "token");
  credential.client_certificate_pem = string_member(*status, "clientCertificateData");
  credential.client_key_pem = string_member(*status, "clientKeyData");
  if (credential.client_certificate_pem.empty() != credential.client_key_pem.empty()) {
    return Error{ErrorCode::kMissingField,
                 "the ExecCredential has only one of clientCertificateData and clientKeyData",
                 {"", 0, "/status"}};
  }
  if (credential.token.empty() && credential.client_certificate_pem.empty()) {
    return Error{ErrorCode::kMissingField,
                 "the ExecCredential has neither a token nor a client certificate and key",
                 {"", 0, "/status"}};
  }
  if (const Json* expiry = member(*status, "expirationTimestamp");
      expiry != nullptr && !expiry->is_null()) {
    std::optional<std::chrono::system_clock::time_point> parsed;
    if (expiry->is_string()) {
      parsed = parse_rfc3339(expiry->get_ref<const std::string&>());
    }
    if (!parsed) {
      return Error{ErrorCode::kInvalidValue,
                   "expirationTimestamp is not an RFC 3339 time",
                   {"", 0, "/status/expirationTimestamp"}};
    }
    credential.expiration = parsed;
  }
  return credential;
}

std::string exec_info(const ClientConfig& config) {
  const ExecConfig& exec = *config.exec;
  Json info = {{"kind", "ExecCredential"},
               {"apiVersion", exec.api_version},
               {"spec", {{"interactive", false}}}};
  if (exec.provide_cluster_info) {
    Json cluster = {{"server", config.server}};
    if (!config.tls_server_name.empty()) {
      cluster["tls-server-name"] = config.tls_server_name;
    }
    if (config.insecure_skip_tls_verify) {
      cluster["insecure-skip-tls-verify"] = true;
    }
    if (!config.ca_pem.empty()) {
      cluster["certificate-authority-data"] = base64_encode(config.ca_pem);
    }
    if (!exec.cluster_config.is_null()) {
      cluster["config"] = exec.cluster_config;
    }
    info["spec"]["cluster"] = std::move(cluster);
  }
  return info.dump();
}

Result<ExecCredential> run_exec_plugin(const ClientConfig& config) {
  const ExecConfig& exec = *config.exec;
  const std::chrono::milliseconds timeout = exec.timeout;
  std::array<int, 2> out_pipe{};
  std::array<int, 2> err_pipe{};
  if (::pipe2(out_pipe.data(), O_CLOEXEC) != 0) {
    return plugin_error(config, std::string("pipe: ") + std::strerror(errno));
  }
  Fd out_read(out_pipe[0]);
  Fd out_write(out_pipe[1]);
  if (::pipe2(err_pipe.data(), O_CLOEXEC) != 0) {
    return plugin_error(config, std::string("pipe: ") + std::strerror(errno));
  }
  Fd err_read(err_pipe[0]);
  Fd err_write(err_pipe[1]);

  // Our environment, with the plugin's variables replacing ours of the same name.
  std::vector<std::string> environment;
  const auto overridden = [&](std::string_view entry) {
    const auto name = entry.substr(0, entry.find('='));
    if (name == "KUBERNETES_EXEC_INFO") {
      return true;
    }
    for (const auto& [key, value] : exec.env) {
      if (key == name) {
        return true;
      }
    }
    return false;
  };
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    if (!overridden(*entry)) {
      environment.emplace_back(*entry);
    }
  }
  for (const auto& [key, value] : exec.env) {
    environment.push_back(key + "=" + value);
  }
  environment.push_back("KUBERNETES_EXEC_INFO=" + exec_info(config));
  std::vector<char*> envp;
  for (std::string& entry : environment) {
    envp.push_back(entry.data());
  }
  envp.push_back(nullptr);
  std::vector<std::string> words = {exec.command};
  words.insert(words.end(), exec.args.begin(), exec.args.end());
  std::vector<char*> argv;
  for (std::string& word : words) {
    argv.push_back(word.data());
  }
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_write.get(), STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err_write.get(), STDERR_FILENO);
  pid_t pid = 0;
  const bool search = exec.command.find('/') == std::string::npos;
  const int spawned =
      search
          ? ::posix_spawnp(&pid, exec.command.c_str(), &actions, nullptr, argv.data(), envp.data())
          : ::posix_spawn(&pid, exec.command.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  out_write.reset();
  err_write.reset();
  if (spawned != 0) {
    return plugin_error(config, std::string("cannot run: ") + std::strerror(spawned));
  }

  std::string output;
  std::string errors;
  bool too_long = false;
  bool timed_out = false;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::array<pollfd, 2> fds{pollfd{out_read.get(), POLLIN, 0}, pollfd{err_read.get(), POLLIN, 0}};
  int open_fds = 2;
  while (open_fds > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    const int ready = ::poll(fds.data(), fds.size(), static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) {
      continue;
    }
    if (ready <= 0) {
      timed_out = ready == 0;
      break;
    }
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) {
        continue;
      }
      std::array<char, 8192> buffer{};
      const ssize_t got = ::read(fds[i].fd, buffer.data(), buffer.size());
      if (got > 0) {
        std::string& into = i == 0 ? output : errors;
        into.append(buffer.data(), static_cast<std::size_t>(got));
        if (output.size() > kMaxOutputBytes) {
          too_long = true;
          open_fds = 0;
          break;
        }
        if (errors.size() > 4 * kStderrTail) {
          errors.erase(0, errors.size() - kStderrTail);
        }
      } else if (got == 0 || errno != EINTR) {
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  int wait_status = 0;
  // A plugin may close its output and keep running: it gets what is left of the deadline.
  bool exited = false;
  while (!timed_out && !too_long && !exited) {
    const pid_t waited = ::waitpid(pid, &wait_status, WNOHANG);
    if (waited == pid || (waited < 0 && errno != EINTR)) {
      exited = true;
    } else if (std::chrono::steady_clock::now() >= deadline) {
      timed_out = true;
    } else {
      ::poll(nullptr, 0, kExitPollMilliseconds);
    }
  }
  if (!exited) {
    ::kill(pid, SIGKILL);
    while (::waitpid(pid, &wait_status, 0) < 0 && errno == EINTR) {
    }
  }
  if (timed_out) {
    return plugin_error(config, "did not finish within " + std::to_string(timeout.count()) + " ms");
  }
  if (too_long) {
    return plugin_error(config,
                        "wrote more than its output cap of " + byte_size_text(kMaxOutputBytes));
  }
  if (!WIFEXITED(wait_status) || WEXITSTATUS(wait_status) != 0) {
    std::string how = WIFEXITED(wait_status)
                          ? "exited with status " + std::to_string(WEXITSTATUS(wait_status))
                          : "was killed by signal " + std::to_string(WTERMSIG(wait_status));
    if (WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 127 && errors.empty()) {
      how += " (command not found?)";
    }
    if (!errors.empty()) {
      how += ": " + tail(errors);
    }
    return plugin_error(config, how);
  }
  Result<ExecCredential> credential = parse_exec_credential(output, exec.api_version);
  if (!credential) {
    return plugin_error(config, credential.error().message);
  }
  return credential;
}

}  // namespace topoguard::kube
