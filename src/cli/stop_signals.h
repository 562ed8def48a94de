// SIGTERM, SIGINT and SIGHUP for the long-running commands (serve, inventory --interval): a
// self-pipe, so the handler only writes a byte and the main thread decides what a signal means.
#pragma once

#include <chrono>
#include <optional>

namespace topoguard::cli {

// Installs the handlers (and ignores SIGPIPE); false when the pipe cannot be made.
[[nodiscard]] bool install_signal_handlers();
// The next signal's number; 0 when the pipe fails.
[[nodiscard]] int wait_for_signal();
// The same, or none when `timeout` passes first.
[[nodiscard]] std::optional<int> wait_for_signal_for(std::chrono::milliseconds timeout);

}  // namespace topoguard::cli
