#include "topoguard/runtime/signals.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>

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

}  // namespace topoguard::runtime
