// A map kept as one vector sorted by key: for small maps made often and read in place (a device's
// attributes), where a tree's allocation per entry costs more than the shifts of a sorted insert.
// Lookups take any key the comparison takes (std::less<> by default: std::string_view for a
// std::string key). Inserting or erasing invalidates iterators, as a vector's.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <initializer_list>
#include <utility>
#include <vector>

namespace topoguard {

template <class Key, class Value, class Compare = std::less<>>
class FlatMap {
 public:
  using key_type = Key;
  using mapped_type = Value;
  using value_type = std::pair<Key, Value>;
  using iterator = typename std::vector<value_type>::iterator;
  using const_iterator = typename std::vector<value_type>::const_iterator;

  FlatMap() = default;
  // As inserting each in turn: the first of equal keys is kept.
  FlatMap(std::initializer_list<value_type> entries) {
    entries_.reserve(entries.size());
    for (const value_type& entry : entries) {
      try_emplace(entry.first, entry.second);
    }
  }

  [[nodiscard]] iterator begin() { return entries_.begin(); }
  [[nodiscard]] iterator end() { return entries_.end(); }
  [[nodiscard]] const_iterator begin() const { return entries_.begin(); }
  [[nodiscard]] const_iterator end() const { return entries_.end(); }
  [[nodiscard]] std::size_t size() const { return entries_.size(); }
  [[nodiscard]] bool empty() const { return entries_.empty(); }
  void reserve(std::size_t count) { entries_.reserve(count); }
  void clear() { entries_.clear(); }

  template <class K>
  [[nodiscard]] iterator find(const K& key) {
    const iterator at = lower_bound(key);
    return at != end() && !compare_(key, at->first) ? at : end();
  }
  template <class K>
  [[nodiscard]] const_iterator find(const K& key) const {
    return const_cast<FlatMap&>(*this).find(key);
  }
  template <class K>
  [[nodiscard]] bool contains(const K& key) const {
    return find(key) != end();
  }

  // The entry of `key`, made with `args` when there is none.
  template <class K, class... Args>
  std::pair<iterator, bool> try_emplace(K&& key, Args&&... args) {
    const iterator at = lower_bound(key);
    if (at != end() && !compare_(key, at->first)) {
      return {at, false};
    }
    return {entries_.emplace(at, std::piecewise_construct,
                             std::forward_as_tuple(std::forward<K>(key)),
                             std::forward_as_tuple(std::forward<Args>(args)...)),
            true};
  }
  template <class K, class V>
  std::pair<iterator, bool> insert_or_assign(K&& key, V&& value) {
    auto [at, made] = try_emplace(std::forward<K>(key), std::forward<V>(value));
    if (!made) {
      at->second = std::forward<V>(value);
    }
    return {at, made};
  }
  template <class K>
  Value& operator[](K&& key) {
    return try_emplace(std::forward<K>(key)).first->second;
  }

  friend bool operator==(const FlatMap& a, const FlatMap& b) { return a.entries_ == b.entries_; }

 private:
  template <class K>
  iterator lower_bound(const K& key) {
    return std::lower_bound(entries_.begin(), entries_.end(), key,
                            [this](const value_type& entry, const K& wanted) {
                              return compare_(entry.first, wanted);
                            });
  }

  std::vector<value_type> entries_;
  [[no_unique_address]] Compare compare_;
};

}  // namespace topoguard
