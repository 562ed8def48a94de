// A device's attributes or capacity: a small map from names to values where both are interned
// (common/interned.h) in the pools of whoever reads the devices. Thousands of nodes of one
// hardware kind publish the same names and mostly the same values, so a cluster's devices hold
// pointers into the pools instead of copies. Read-only once built; safe to read, copy and destroy
// from any thread.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <iterator>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "topoguard/common/interned.h"

namespace topoguard::k8s {

using topoguard::Interned;
using topoguard::InternPool;

// The names of a table in order: the devices of one driver and hardware kind publish the same.
using NameList = std::vector<Interned<std::string>>;

struct NameListHash {
  [[nodiscard]] std::size_t operator()(const NameList& names) const {
    std::size_t hash = names.size();
    for (const Interned<std::string>& name : names) {
      hash = hash * 31 + std::hash<std::string>()(name.get());
    }
    return hash;
  }
};

// Where tables keep their names: one per reader of devices, changed by one thread at a time.
struct NamePools {
  InternPool<std::string> names;
  InternPool<NameList, NameListHash> lists;
};

template <class V, class Hash = std::hash<V>>
class InternedTable {
  using Value = Interned<V>;

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
    reference operator*() const { return {name_->get(), value_->get()}; }
    pointer operator->() const { return {**this}; }
    const_iterator& operator++() {
      ++name_;
      ++value_;
      return *this;
    }
    const_iterator operator++(int) {
      const_iterator before = *this;
      ++*this;
      return before;
    }
    bool operator==(const const_iterator& other) const { return name_ == other.name_; }

   private:
    friend class InternedTable;
    const_iterator(const Interned<std::string>* name, const Value* value)
        : name_(name), value_(value) {}
    const Interned<std::string>* name_ = nullptr;
    const Value* value_ = nullptr;
  };

  InternedTable() = default;
  // Takes the entries of `map` (names in order) into the pools.
  InternedTable(std::map<std::string, V, std::less<>>&& map, NamePools& names,
                InternPool<V, Hash>& values) {
    if (map.empty()) {
      return;
    }
    NameList list;
    list.reserve(map.size());
    values_.reserve(map.size());
    while (!map.empty()) {  // the names moved out of the map, not copied
      auto entry = map.extract(map.begin());
      list.push_back(names.names.intern(std::move(entry.key())));
      values_.push_back(values.intern(std::move(entry.mapped())));
    }
    names_ = names.lists.intern(std::move(list));
  }

  [[nodiscard]] std::size_t size() const { return names_.get().size(); }
  [[nodiscard]] bool empty() const { return names_.get().empty(); }
  [[nodiscard]] const_iterator begin() const {
    return const_iterator(names_.get().data(), values_.data());
  }
  [[nodiscard]] const_iterator end() const {
    return const_iterator(names_.get().data() + size(), values_.data() + size());
  }
  [[nodiscard]] const_iterator find(std::string_view name) const {
    return at(std::lower_bound(names_.get().begin(), names_.get().end(), name,
                               [](const Interned<std::string>& entry, std::string_view wanted) {
                                 return entry.get() < wanted;
                               }),
              [&](const std::string& found) { return found == name; });
  }
  // find(domain + "/" + name), without making that name.
  [[nodiscard]] const_iterator find(std::string_view domain, std::string_view name) const {
    return at(std::lower_bound(names_.get().begin(), names_.get().end(), 0,
                               [&](const Interned<std::string>& entry, int /*unused*/) {
                                 return compare_joined(entry.get(), domain, name) < 0;
                               }),
              [&](const std::string& found) { return compare_joined(found, domain, name) == 0; });
  }
  // The index of an entry in name order.
  [[nodiscard]] std::size_t position(const_iterator it) const {
    return static_cast<std::size_t>(it.name_ - names_.get().data());
  }

 private:
  // `text` against domain + "/" + name, as std::string compares.
  static int compare_joined(std::string_view text, std::string_view domain, std::string_view name) {
    const std::size_t common = std::min(text.size(), domain.size());
    if (const int order = text.substr(0, common).compare(domain.substr(0, common)); order != 0) {
      return order;
    }
    if (text.size() <= domain.size()) {
      return -1;  // a prefix of the joined name
    }
    text.remove_prefix(domain.size());
    if (const int order = text.substr(0, 1).compare("/"); order != 0) {
      return order;
    }
    return text.substr(1).compare(name);
  }

  // The entry at `it` when `matches` its name, else end().
  template <class Matches>
  const_iterator at(std::vector<Interned<std::string>>::const_iterator it, Matches matches) const {
    if (it == names_.get().end() || !matches(it->get())) {
      return end();
    }
    const auto index = static_cast<std::size_t>(it - names_.get().begin());
    return const_iterator(&*it, values_.data() + index);
  }
  Interned<NameList> names_;  // null for an empty table
  std::vector<Value> values_;  // of names_, position by position
};

}  // namespace topoguard::k8s
