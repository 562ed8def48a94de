// A device's attributes or capacity: a small map from names to values where both are kept once per
// process, however many devices publish them. Thousands of nodes of one hardware kind publish the
// same names and mostly the same values, so a cluster's devices hold pointers into one pool
// instead of copies. Read-only once built; safe to read, copy and destroy from any thread.
#pragma once

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <map>
#include <mutex>
#include <ranges>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace topoguard::cluster {

// The values of one type in use, each once, counted by the tables holding them: a value no table
// holds any more is dropped, so a cluster whose devices come and go does not grow the pool.
template <class T, class Hash = std::hash<T>>
class InternPool {
 public:
  static InternPool& instance() {
    // Never destroyed: tables in static storage may outlive any other static object.
    static auto* pool = new InternPool();
    return *pool;
  }

  template <class Take>
  void acquire(std::size_t count, Take&& take) {
    const std::lock_guard lock(mutex_);
    for (std::size_t i = 0; i < count; ++i) {
      take(i, [this](T&& value) {
        auto [it, added] = counts_.try_emplace(std::move(value), 0);
        ++it->second;
        return &it->first;
      });
    }
  }

  template <class Range>
  void add_references(const Range& values) {
    const std::lock_guard lock(mutex_);
    for (const T* value : values) {
      ++counts_.find(*value)->second;
    }
  }

  template <class Range>
  void release(const Range& values) {
    const std::lock_guard lock(mutex_);
    for (const T* value : values) {
      const auto it = counts_.find(*value);
      if (--it->second == 0) {
        counts_.erase(it);
      }
    }
  }

  [[nodiscard]] std::size_t size() {
    const std::lock_guard lock(mutex_);
    return counts_.size();
  }

 private:
  InternPool() = default;

  std::mutex mutex_;
  std::unordered_map<T, std::size_t, Hash> counts_;  // node-based: values never move
};

template <class V, class Hash = std::hash<V>>
class InternedTable {
  struct Entry {
    const std::string* name = nullptr;
    const V* value = nullptr;
  };

 public:
  using value_type = std::pair<const std::string&, const V&>;

  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = InternedTable::value_type;
    using difference_type = std::ptrdiff_t;
    using reference = value_type;
    struct pointer {
      value_type pair;
      const value_type* operator->() const { return &pair; }
    };

    const_iterator() = default;
    reference operator*() const { return {*at_->name, *at_->value}; }
    pointer operator->() const { return {**this}; }
    const_iterator& operator++() {
      ++at_;
      return *this;
    }
    const_iterator operator++(int) { return const_iterator(at_++); }
    bool operator==(const const_iterator& other) const = default;

   private:
    friend class InternedTable;
    explicit const_iterator(const Entry* at) : at_(at) {}
    const Entry* at_ = nullptr;
  };

  InternedTable() = default;
  // Takes the entries of `map` (names in order) into the pools.
  explicit InternedTable(std::map<std::string, V, std::less<>>&& map) {
    entries_.resize(map.size());
    auto from = map.begin();
    names().acquire(map.size(), [&](std::size_t i, auto&& intern) {
      entries_[i].name = intern(std::string(from->first));
      ++from;
    });
    from = map.begin();
    values().acquire(map.size(), [&](std::size_t i, auto&& intern) {
      entries_[i].value = intern(std::move(from->second));
      ++from;
    });
  }
  InternedTable(const InternedTable& other) : entries_(other.entries_) { add_references(); }
  InternedTable(InternedTable&& other) noexcept : entries_(std::move(other.entries_)) {
    other.entries_.clear();
  }
  InternedTable& operator=(InternedTable other) noexcept {
    entries_.swap(other.entries_);
    return *this;
  }
  ~InternedTable() { release(); }

  [[nodiscard]] std::size_t size() const { return entries_.size(); }
  [[nodiscard]] bool empty() const { return entries_.empty(); }
  [[nodiscard]] const_iterator begin() const { return const_iterator(entries_.data()); }
  [[nodiscard]] const_iterator end() const {
    return const_iterator(entries_.data() + entries_.size());
  }
  [[nodiscard]] const_iterator find(std::string_view name) const {
    const auto it = std::lower_bound(
        entries_.begin(), entries_.end(), name,
        [](const Entry& entry, std::string_view wanted) { return *entry.name < wanted; });
    return it != entries_.end() && *it->name == name ? const_iterator(&*it) : end();
  }

 private:
  static InternPool<std::string>& names() { return InternPool<std::string>::instance(); }
  static InternPool<V, Hash>& values() { return InternPool<V, Hash>::instance(); }

  void add_references() {
    if (!entries_.empty()) {
      names().add_references(entries_ | std::views::transform(&Entry::name));
      values().add_references(entries_ | std::views::transform(&Entry::value));
    }
  }
  void release() {
    if (!entries_.empty()) {
      names().release(entries_ | std::views::transform(&Entry::name));
      values().release(entries_ | std::views::transform(&Entry::value));
    }
  }

  std::vector<Entry> entries_;  // by name
};

}  // namespace topoguard::cluster
