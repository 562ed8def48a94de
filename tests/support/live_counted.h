// A string value that counts its live copies, for tests of what keeps values alive: once nothing
// holds one, the count must be back where it was.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <string>
#include <utility>

namespace topoguard::testing {

struct LiveCounted {
  static inline std::atomic<int> alive = 0;
  std::string text;

  LiveCounted() : LiveCounted("") {}
  explicit LiveCounted(std::string value) : text(std::move(value)) { ++alive; }
  LiveCounted(const LiveCounted& other) : text(other.text) { ++alive; }
  LiveCounted(LiveCounted&& other) noexcept : text(std::move(other.text)) { ++alive; }
  LiveCounted& operator=(const LiveCounted&) = default;
  LiveCounted& operator=(LiveCounted&&) = default;
  ~LiveCounted() { --alive; }
  friend bool operator==(const LiveCounted& a, const LiveCounted& b) { return a.text == b.text; }
};

struct LiveCountedHash {
  std::size_t operator()(const LiveCounted& value) const {
    return std::hash<std::string>()(value.text);
  }
};

}  // namespace topoguard::testing
