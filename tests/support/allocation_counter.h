// Counts every allocation of the process by replacing the global operator new and delete (the
// throwing and nothrow forms; aligned ones stay the runtime's, paired with its own delete), to
// check how much memory a piece of work holds at its peak. Include it in exactly one source file
// of an executable (it defines the replacements); the executable then counts for all its code.
#pragma once

#include <malloc.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>

namespace topoguard::testing {

class AllocationCounter {
 public:
  // Starts a measurement: the peak is reset to what is live now.
  static void start() { peak().store(live().load()); }
  // Bytes live now, and the most live since start().
  [[nodiscard]] static std::int64_t live_now() { return live().load(); }
  [[nodiscard]] static std::int64_t peak_now() { return peak().load(); }

  static void* allocate(std::size_t size) {
    void* block = std::malloc(size == 0 ? 1 : size);
    if (block == nullptr) {
      throw std::bad_alloc();
    }
    const auto usable = static_cast<std::int64_t>(malloc_usable_size(block));
    const std::int64_t now = live().fetch_add(usable) + usable;
    std::int64_t highest = peak().load();
    while (now > highest && !peak().compare_exchange_weak(highest, now)) {
    }
    return block;
  }

  static void release(void* block) {
    if (block != nullptr) {
      live().fetch_sub(static_cast<std::int64_t>(malloc_usable_size(block)));
      std::free(block);
    }
  }

 private:
  static std::atomic<std::int64_t>& live() {
    static std::atomic<std::int64_t> bytes{0};
    return bytes;
  }
  static std::atomic<std::int64_t>& peak() {
    static std::atomic<std::int64_t> bytes{0};
    return bytes;
  }
};

}  // namespace topoguard::testing

void* operator new(std::size_t size) {
  return topoguard::testing::AllocationCounter::allocate(size);
}
void* operator new[](std::size_t size) {
  return topoguard::testing::AllocationCounter::allocate(size);
}
void operator delete(void* block) noexcept {
  topoguard::testing::AllocationCounter::release(block);
}
void operator delete[](void* block) noexcept {
  topoguard::testing::AllocationCounter::release(block);
}
void operator delete(void* block, std::size_t /*size*/) noexcept {
  topoguard::testing::AllocationCounter::release(block);
}
void operator delete[](void* block, std::size_t /*size*/) noexcept {
  topoguard::testing::AllocationCounter::release(block);
}
void* operator new(std::size_t size, const std::nothrow_t& /*tag*/) noexcept {
  try {
    return topoguard::testing::AllocationCounter::allocate(size);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void* operator new[](std::size_t size, const std::nothrow_t& tag) noexcept {
  return operator new(size, tag);
}
void operator delete(void* block, const std::nothrow_t& /*tag*/) noexcept {
  topoguard::testing::AllocationCounter::release(block);
}
void operator delete[](void* block, const std::nothrow_t& /*tag*/) noexcept {
  topoguard::testing::AllocationCounter::release(block);
}
