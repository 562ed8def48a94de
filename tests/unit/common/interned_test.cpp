#include "topoguard/common/interned.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "live_counted.h"

namespace topoguard {
namespace {

using Tracked = testing::LiveCounted;
using TrackedPool = InternPool<Tracked, testing::LiveCountedHash>;

TEST(InternedTest, EqualValuesShareOneEntry) {
  InternPool<std::string> pool;
  const Interned<std::string> a = pool.intern("pci0000:10");
  const Interned<std::string> b = pool.intern(std::string("pci0000:") + "10");
  const Interned<std::string> c = pool.intern("pci0000:20");
  EXPECT_EQ(&a.get(), &b.get());
  EXPECT_NE(&a.get(), &c.get());
  EXPECT_EQ(a, b);
  EXPECT_FALSE(a == c);
  EXPECT_EQ(pool.size(), 2u);
}

// Handles of different pools, or made alone, compare by value; a default handle holds T{}.
TEST(InternedTest, HandlesOfDifferentPoolsCompareByValue) {
  InternPool<std::string> first;
  InternPool<std::string> second;
  EXPECT_EQ(first.intern("gpu-0"), second.intern("gpu-0"));
  EXPECT_EQ(first.intern("gpu-0"), Interned<std::string>("gpu-0"));
  EXPECT_FALSE(first.intern("gpu-0") == second.intern("gpu-1"));
  EXPECT_EQ(Interned<std::string>().get(), "");
  EXPECT_EQ(Interned<std::string>(), Interned<std::string>(""));
  EXPECT_EQ(std::hash<Interned<std::string>>()(first.intern("x")),
            std::hash<Interned<std::string>>()(second.intern("x")));
}

// A value lives while a handle or the pool holds it: handles outlive their pool, and the pool's
// own hold goes with the pool.
TEST(InternedTest, ValuesLiveWhileHeld) {
  ASSERT_EQ(Tracked::alive, 0);
  std::optional<Interned<Tracked>> kept;
  {
    TrackedPool pool;
    kept = pool.intern(Tracked("kept"));
    const Interned<Tracked> dropped = pool.intern(Tracked("dropped"));
    EXPECT_EQ(Tracked::alive, 2);
  }
  EXPECT_EQ(Tracked::alive, 1);
  EXPECT_EQ(kept->get().text, "kept");
  Interned<Tracked> copy = *kept;
  Interned<Tracked> moved = std::move(*kept);
  kept.reset();
  EXPECT_EQ(Tracked::alive, 1);
  copy = Interned<Tracked>();
  EXPECT_EQ(Tracked::alive, 1);
  moved = Interned<Tracked>();
  EXPECT_EQ(Tracked::alive, 0);
}

// Values come and go (a cluster's devices): the pool keeps those still held and drops the rest
// each time it has doubled, so it stays within twice what is held plus its first sweep.
TEST(InternedTest, SweepsValuesNoHandleHolds) {
  ASSERT_EQ(Tracked::alive, 0);
  TrackedPool pool;
  std::vector<Interned<Tracked>> held;
  for (int i = 0; i < 100; ++i) {
    held.push_back(pool.intern(Tracked("held-" + std::to_string(i))));
  }
  std::size_t largest = 0;
  for (int i = 0; i < 20000; ++i) {
    const Interned<Tracked> passing = pool.intern(Tracked("passing-" + std::to_string(i)));
    largest = std::max(largest, pool.size());
  }
  EXPECT_LE(largest, 1024u + 1);
  EXPECT_LE(static_cast<std::size_t>(Tracked::alive.load()), largest);
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(&pool.intern(Tracked("held-" + std::to_string(i))).get(), &held[i].get());
  }
  held.clear();
}

// The pool's thread interns while other threads copy and drop the handles it gave out (requests
// reading old snapshots): counts stay exact, and every value goes with its last holder.
TEST(InternedTest, HandlesComeAndGoOnSeveralThreads) {
  ASSERT_EQ(Tracked::alive, 0);
  {
    TrackedPool pool;
    std::vector<Interned<Tracked>> given;
    for (int i = 0; i < 64; ++i) {
      given.push_back(pool.intern(Tracked(std::to_string(i))));
    }
    std::vector<std::thread> readers;
    for (int t = 0; t < 3; ++t) {
      readers.emplace_back([given] {
        for (int round = 0; round < 2000; ++round) {
          std::vector<Interned<Tracked>> copies(given.begin(), given.end());
          EXPECT_EQ(copies[static_cast<std::size_t>(round) % copies.size()].get().text,
                    std::to_string(round % 64));
        }
      });
    }
    for (int i = 0; i < 5000; ++i) {
      const Interned<Tracked> value = pool.intern(Tracked(std::to_string(i % 3000)));
      EXPECT_EQ(value.get().text, std::to_string(i % 3000));
    }
    for (std::thread& reader : readers) {
      reader.join();
    }
  }
  EXPECT_EQ(Tracked::alive, 0);
}

}  // namespace
}  // namespace topoguard
