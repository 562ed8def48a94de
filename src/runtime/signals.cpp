#include "topoguard/runtime/signals.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <limits>

namespace topoguard::runtime {
namespace {

int g_signal_pipe[2] = {-1, -1};

extern "C" void on_signal(int signal_number) {
  const char byte = static_cast<char>(signal_number);
  const int saved_errno = errno;
  [[maybe_unused]] const ssize_t written = ::write(g_signal_pipe[1], &byte, 1);
  errno = saved_errno;
}

}  // namespace

bool install_signal_handlers() {
  if (::pipe2(g_signal_pipe, O_CLOEXEC) != 0) {
    return false;
  }
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGTERM, &action, nullptr);
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGHUP, &action, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  return true;
}

int wait_for_signal() {
  char byte = 0;
  while (true) {
    const ssize_t n = ::read(g_signal_pipe[0], &byte, 1);
    if (n == 1) {
      return static_cast<unsigned char>(byte);
    }
    if (n < 0 && errno == EINTR) {
      continue;
    }
    return 0;
  }
}

std::optional<int> wait_for_signal_for(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      return std::nullopt;
    }
    pollfd readable{g_signal_pipe[0], POLLIN, 0};
    const int ready = ::poll(&readable, 1,
                             static_cast<int>(std::min<std::chrono::milliseconds::rep>(
                                 left.count(), std::numeric_limits<int>::max())));
    if (ready > 0) {
      return wait_for_signal();
    }
    if (ready < 0 && errno != EINTR) {
      return 0;
    }
  }
}

}  // namespace topoguard::runtime
