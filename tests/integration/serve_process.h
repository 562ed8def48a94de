// `topoguard serve` as a child process for tests: started with the test PKI on free loopback
// ports, its JSON log collected (safe to read while it runs), killed when the test ends.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "topoguard/common/json.h"

namespace topoguard::testing {

class ServeProcess {
 public:
  ServeProcess() = default;
  ~ServeProcess() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (log_reader_.joinable()) {
      log_reader_.join();
    }
  }
  ServeProcess(const ServeProcess&) = delete;
  ServeProcess& operator=(const ServeProcess&) = delete;

  // Starts `binary serve` with `arguments`; returns once it logs "serving" (false if it exits
  // first). port() and metrics_port() come from that log line.
  bool start(const std::string& binary, const std::vector<std::string>& arguments) {
    int pipe_fds[2];
    if (::pipe(pipe_fds) != 0) {
      return false;
    }
    std::vector<std::string> words = {binary, "serve"};
    words.insert(words.end(), arguments.begin(), arguments.end());
    std::vector<char*> argv;
    for (std::string& word : words) {
      argv.push_back(word.data());
    }
    argv.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(pipe_fds[1], STDERR_FILENO);
      ::close(pipe_fds[0]);
      ::close(pipe_fds[1]);
      ::execv(binary.c_str(), argv.data());
      ::_exit(127);
    }
    ::close(pipe_fds[1]);
    FILE* log = ::fdopen(pipe_fds[0], "r");
    char line[16384];
    while (port_ < 0 && std::fgets(line, sizeof(line), log) != nullptr) {
      append_log(line);
      const Json entry = Json::parse(line, nullptr, false);
      if (entry.is_object() && entry.value("msg", "") == "serving") {
        port_ = port_of(entry.value("listen", ""));
        metrics_port_ = port_of(entry.value("metrics_listen", ""));
      }
    }
    // Keep draining the log so the child never blocks on a full pipe.
    log_reader_ = std::thread([this, log] {
      char rest[16384];
      while (std::fgets(rest, sizeof(rest), log) != nullptr) {
        append_log(rest);
      }
      std::fclose(log);
    });
    return port_ > 0;
  }

  [[nodiscard]] pid_t pid() const { return pid_; }
  [[nodiscard]] int port() const { return port_; }
  [[nodiscard]] int metrics_port() const { return metrics_port_; }

  [[nodiscard]] std::string log() const {
    std::lock_guard lock(log_mutex_);
    return log_;
  }

  // The child's exit code (128 + signal when killed); -1 when it is still running after `limit`.
  int wait_exit(std::chrono::seconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return -1;
  }

  // False once the child has exited (it is then reaped).
  [[nodiscard]] bool running() {
    int status = 0;
    if (pid_ > 0 && ::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
    }
    return pid_ > 0;
  }

  // Resident memory of the child in bytes (VmRSS), 0 when unknown.
  [[nodiscard]] long long resident_bytes() const { return status_bytes("VmRSS:"); }
  // The most resident memory the child has had so far (VmHWM), 0 when unknown.
  [[nodiscard]] long long peak_resident_bytes() const { return status_bytes("VmHWM:"); }
  // File descriptors the child has open (its sockets among them), 0 when unknown.
  [[nodiscard]] std::size_t open_descriptors() const {
    std::error_code error;
    std::filesystem::directory_iterator entries("/proc/" + std::to_string(pid_) + "/fd", error);
    return error ? 0
                 : static_cast<std::size_t>(std::distance(entries,
                                                          std::filesystem::directory_iterator()));
  }

 private:
  [[nodiscard]] long long status_bytes(const std::string& field) const {
    std::ifstream status("/proc/" + std::to_string(pid_) + "/status");
    std::string line;
    while (std::getline(status, line)) {
      if (line.rfind(field, 0) == 0) {
        return std::stoll(line.substr(field.size())) * 1024;
      }
    }
    return 0;
  }

  static int port_of(const std::string& address) {
    const std::size_t colon = address.rfind(':');
    return colon == std::string::npos ? -1 : std::stoi(address.substr(colon + 1));
  }

  void append_log(const char* text) {
    std::lock_guard lock(log_mutex_);
    log_ += text;
  }

  pid_t pid_ = -1;
  int port_ = -1;
  int metrics_port_ = -1;
  std::thread log_reader_;
  mutable std::mutex log_mutex_;
  std::string log_;
};

}  // namespace topoguard::testing
