// Polls a condition a test waits for (a server's state after an event): true as soon as it
// holds, false when it still does not after `limit`.
#pragma once

#include <chrono>
#include <thread>

namespace topoguard::testing {

template <typename Predicate>
bool eventually(Predicate predicate, std::chrono::milliseconds limit = std::chrono::seconds(10)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (predicate()) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return predicate();
}

}  // namespace topoguard::testing
