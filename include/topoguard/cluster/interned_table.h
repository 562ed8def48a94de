// A device's attributes or capacity: a small map from names to values where both are kept once per
// process, however many devices publish them. Thousands of nodes of one hardware kind publish the
// same names and mostly the same values, so a cluster's devices hold pointers into one pool
// instead of copies. Read-only once built; safe to read, copy and destroy from any thread.
#pragma once

#include <algorithm>
#include <boost/container_hash/hash.hpp>
#include <boost/flyweight.hpp>
#include <cstddef>
#include <iterator>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace topoguard::cluster {

// Holds a flyweight factory that is never destroyed: a snapshot released by a thread still
// running at exit may drop handles after static destructors have run.
struct ImmortalHolder : boost::flyweights::holder_marker {
  template <class Factory>
  struct apply {
    struct type : boost::flyweights::holder_marker {
      static Factory& get() {
        static auto* factory = new Factory();
        return *factory;
      }
    };
  };
};

// A value kept once per process (Boost.Flyweight): counted by the handles holding it and dropped
// with the last one, so a cluster whose devices come and go does not grow the pool. Handles are
// one pointer; making one takes the factory's lock, copying or dropping one is an atomic count.
template <class T, class Hash = boost::hash<T>>
using Interned = boost::flyweights::flyweight<T, boost::flyweights::hashed_factory<Hash>,
                                              boost::flyweights::refcounted, ImmortalHolder>;

template <class V, class Hash = std::hash<V>>
class InternedTable {
  struct Entry {
    Interned<std::string> name;
    Interned<V, Hash> value;
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
    reference operator*() const { return {at_->name.get(), at_->value.get()}; }
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
    entries_.reserve(map.size());
    for (auto& [name, value] : map) {
      entries_.push_back({Interned<std::string>(name), Interned<V, Hash>(std::move(value))});
    }
  }

  [[nodiscard]] std::size_t size() const { return entries_.size(); }
  [[nodiscard]] bool empty() const { return entries_.empty(); }
  [[nodiscard]] const_iterator begin() const { return const_iterator(entries_.data()); }
  [[nodiscard]] const_iterator end() const {
    return const_iterator(entries_.data() + entries_.size());
  }
  [[nodiscard]] const_iterator find(std::string_view name) const {
    const auto it = std::lower_bound(
        entries_.begin(), entries_.end(), name,
        [](const Entry& entry, std::string_view wanted) { return entry.name.get() < wanted; });
    return it != entries_.end() && it->name.get() == name ? const_iterator(&*it) : end();
  }
  // find(domain + "/" + name), without making that name.
  [[nodiscard]] const_iterator find(std::string_view domain, std::string_view name) const {
    const auto it = std::lower_bound(entries_.begin(), entries_.end(), 0,
                                     [&](const Entry& entry, int /*unused*/) {
                                       return compare_joined(entry.name.get(), domain, name) < 0;
                                     });
    return it != entries_.end() && compare_joined(it->name.get(), domain, name) == 0
               ? const_iterator(&*it)
               : end();
  }
  // The index of an entry in name order.
  [[nodiscard]] std::size_t position(const_iterator it) const {
    return static_cast<std::size_t>(it.at_ - entries_.data());
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

  std::vector<Entry> entries_;  // by name
};

}  // namespace topoguard::cluster
