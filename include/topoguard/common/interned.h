// Values kept once. An InternPool hands out Interned handles to the values it holds: equal values
// interned by one pool share one entry, so thousands of devices publishing the same names and
// values hold a pointer each instead of a copy. A handle is one pointer to an immutable entry
// with its count of holders; it may be copied, read and dropped on any thread and outlive its
// pool. A pool is changed by one thread at a time (the one that reads the objects).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <functional>
#include <unordered_set>
#include <utility>

namespace topoguard {

template <class T, class Hash>
class InternPool;

template <class T>
class Interned {
 public:
  // Holds T{}.
  Interned() = default;
  // A value of its own: shared only with this handle's copies.
  explicit Interned(T value) : entry_(new Entry(std::move(value))) {}
  Interned(const Interned& other) noexcept : entry_(other.entry_) { retain(); }
  Interned(Interned&& other) noexcept : entry_(std::exchange(other.entry_, nullptr)) {}
  Interned& operator=(const Interned& other) noexcept {
    Interned(other).swap(*this);
    return *this;
  }
  Interned& operator=(Interned&& other) noexcept {
    Interned(std::move(other)).swap(*this);
    return *this;
  }
  ~Interned() { release(); }

  [[nodiscard]] const T& get() const { return entry_ != nullptr ? entry_->value : empty(); }
  operator const T&() const { return get(); }  // NOLINT(google-explicit-constructor): a value

  void swap(Interned& other) noexcept { std::swap(entry_, other.entry_); }

  // Equal values: the same entry, or (handles of different pools) the same content.
  friend bool operator==(const Interned& a, const Interned& b) {
    return a.entry_ == b.entry_ || a.get() == b.get();
  }
  friend bool operator==(const Interned& a, const T& b) { return a.get() == b; }
  friend bool operator<(const Interned& a, const Interned& b) { return a.get() < b.get(); }

 private:
  template <class, class>
  friend class InternPool;

  struct Entry {
    explicit Entry(T held) : value(std::move(held)) {}
    std::atomic<std::size_t> holders{1};
    const T value;
  };

  static const T& empty() {
    static const T value{};
    return value;
  }
  // Another holder of `entry`.
  static Interned share(Entry* entry) {
    Interned handle;
    handle.entry_ = entry;
    handle.retain();
    return handle;
  }
  void retain() const {
    if (entry_ != nullptr) {
      entry_->holders.fetch_add(1, std::memory_order_relaxed);
    }
  }
  void release() {
    // acq_rel: whoever drops the last holder sees every other holder's reads done.
    if (entry_ != nullptr && entry_->holders.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      delete entry_;
    }
    entry_ = nullptr;
  }

  Entry* entry_ = nullptr;
};

template <class T, class Hash = std::hash<T>>
class InternPool {
  using Entry = typename Interned<T>::Entry;

 public:
  InternPool() = default;
  InternPool(const InternPool&) = delete;
  InternPool& operator=(const InternPool&) = delete;
  InternPool(InternPool&&) = delete;
  InternPool& operator=(InternPool&&) = delete;
  // The pool's hold goes; entries still held by handles stay with them.
  ~InternPool() {
    for (Entry* entry : entries_) {
      if (entry->holders.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        delete entry;
      }
    }
  }

  // A handle to the value equal to `value`, which the pool keeps from now on if it had none.
  [[nodiscard]] Interned<T> intern(T value) {
    if (const auto found = entries_.find(value); found != entries_.end()) {
      return Interned<T>::share(*found);
    }
    if (entries_.size() >= sweep_at_) {
      sweep();
    }
    Interned<T> handle(std::move(value));
    entries_.insert(handle.entry_);
    handle.retain();  // the pool's hold
    return handle;
  }

  // Values the pool holds, those no handle holds any more included (until the next sweep).
  [[nodiscard]] std::size_t size() const { return entries_.size(); }

 private:
  struct HashValue {
    using is_transparent = void;
    std::size_t operator()(const T& value) const { return Hash()(value); }
    std::size_t operator()(const Entry* entry) const { return Hash()(entry->value); }
  };
  struct SameValue {
    using is_transparent = void;
    static const T& of(const T& value) { return value; }
    static const T& of(const Entry* entry) { return entry->value; }
    template <class A, class B>
    bool operator()(const A& a, const B& b) const {
      return of(a) == of(b);
    }
  };

  // Drops the values only the pool holds, once the pool has doubled since the last sweep, so a
  // cluster whose devices come and go does not grow it: a value held by the pool alone cannot
  // gain a holder but through the pool, which is this thread's.
  void sweep() {
    for (auto it = entries_.begin(); it != entries_.end();) {
      if ((*it)->holders.load(std::memory_order_acquire) == 1) {
        delete *it;
        it = entries_.erase(it);
      } else {
        ++it;
      }
    }
    sweep_at_ = std::max(kFirstSweep, 2 * entries_.size());
  }

  static constexpr std::size_t kFirstSweep = 1024;

  std::unordered_set<Entry*, HashValue, SameValue> entries_;
  std::size_t sweep_at_ = kFirstSweep;
};

}  // namespace topoguard

template <class T>
struct std::hash<topoguard::Interned<T>> {
  std::size_t operator()(const topoguard::Interned<T>& handle) const {
    return std::hash<T>()(handle.get());
  }
};
