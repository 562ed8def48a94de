// The process's signals, read on a thread of the caller's choosing: the handlers only write the
// signal's number to a pipe (SIGTERM and SIGINT: stop; SIGHUP: reload, whose default would kill
// the process); SIGPIPE is ignored.
#pragma once

#include <chrono>
#include <optional>

namespace topoguard::runtime {

// Installs the handlers; false when the pipe cannot be made. Once per process.
[[nodiscard]] bool install_signal_handlers();

// Blocks until one of the signals arrives; its number (0 when the pipe fails).
[[nodiscard]] int wait_for_signal();
// The same, or none when `timeout` passes first (a loop that also acts on a clock).
[[nodiscard]] std::optional<int> wait_for_signal_for(std::chrono::milliseconds timeout);

}  // namespace topoguard::runtime
