#include "topoguard/k8s/interned_table.h"

#include <gtest/gtest.h>

#include <atomic>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "live_counted.h"
#include "topoguard/k8s/resource_slice.h"

namespace topoguard::k8s {
namespace {

AttributeValue text(std::string value) {
  AttributeValue out;
  out.values.emplace_back(std::move(value));
  return out;
}

AttributeTable table(std::map<std::string, AttributeValue, std::less<>> entries) {
  SliceInterner interner;
  return AttributeTable(std::move(entries), interner.names, interner.attributes);
}

using Counted = testing::LiveCounted;
using CountedTable = InternedTable<Counted, testing::LiveCountedHash>;

// The pools of one reader of devices.
struct CountedPools {
  NamePools names;
  InternPool<Counted, testing::LiveCountedHash> values;
};

CountedTable counted(CountedPools& pools,
                     std::initializer_list<std::pair<const char*, const char*>> entries) {
  std::map<std::string, Counted, std::less<>> map;
  for (const auto& [name, value] : entries) {
    map.emplace(name, Counted(value));
  }
  return CountedTable(std::move(map), pools.names, pools.values);
}

// Two devices publishing the same name and value hold one copy of each; a value goes with the
// last of its tables and pools, whether its tables were copied, moved or assigned.
TEST(InternedTableTest, SharesValuesAndDropsThoseNoTableHolds) {
  ASSERT_EQ(Counted::alive, 0);
  {
    auto pools = std::make_unique<CountedPools>();
    const CountedTable a = counted(*pools, {{"d/root", "root"}, {"d/uuid", "a"}});
    const CountedTable b = counted(*pools, {{"d/root", "root"}, {"d/uuid", "b"}});
    EXPECT_EQ(Counted::alive, 3);
    EXPECT_EQ(&a.find("d/root")->second, &b.find("d/root")->second);
    EXPECT_EQ(&a.find("d/root")->first, &b.find("d/root")->first);
    EXPECT_NE(&a.find("d/uuid")->second, &b.find("d/uuid")->second);

    CountedTable copy = a;
    CountedTable moved = std::move(copy);
    CountedTable assigned;
    assigned = b;
    assigned = moved;  // b's uuid is still held by b
    EXPECT_EQ(Counted::alive, 3);
    EXPECT_EQ(assigned.find("d/uuid")->second.text, "a");
    pools.reset();  // the tables hold what they use
    EXPECT_EQ(Counted::alive, 3);
    EXPECT_EQ(b.find("d/uuid")->second.text, "b");
  }
  EXPECT_EQ(Counted::alive, 0);
}

TEST(InternedTableTest, FindsAndIteratesByName) {
  const AttributeTable attributes = table(
      {{"d/b", text("2")}, {"d/a", text("1")}, {"resource.kubernetes.io/pcieRoot", text("r")}});
  ASSERT_EQ(attributes.size(), 3u);
  EXPECT_EQ(attributes.find("d/c"), attributes.end());
  EXPECT_EQ(attributes.find("d/a")->second.to_string(), "1");
  std::vector<std::string> names;
  for (const auto& [name, value] : attributes) {
    names.push_back(name + "=" + value.to_string());
  }
  EXPECT_EQ(names,
            (std::vector<std::string>{"d/a=1", "d/b=2", "resource.kubernetes.io/pcieRoot=r"}));
  EXPECT_TRUE(AttributeTable().empty());
}

// find(domain, name) finds what find(domain + "/" + name) finds, among names that share a
// prefix with the domain or sort around the slash.
TEST(InternedTableTest, FindsJoinedNames) {
  const AttributeTable attributes = table({{"d", text("1")},
                                           {"d-x/a", text("2")},
                                           {"d/a", text("3")},
                                           {"d/ab", text("4")},
                                           {"d0/a", text("5")},
                                           {"dd/a", text("6")},
                                           {"e/a", text("7")}});
  for (const auto& [domain, name] : std::vector<std::pair<std::string, std::string>>{{"d", "a"},
                                                                                     {"d", "ab"},
                                                                                     {"d", "b"},
                                                                                     {"d", ""},
                                                                                     {"d-x", "a"},
                                                                                     {"d0", "a"},
                                                                                     {"dd", "a"},
                                                                                     {"", "d"},
                                                                                     {"e", "a"},
                                                                                     {"f", "a"},
                                                                                     {"d/a", ""}}) {
    const auto joined = attributes.find(domain, name);
    const auto whole = attributes.find(domain + "/" + name);
    EXPECT_EQ(joined, whole) << domain << " " << name;
    if (whole != attributes.end()) {
      EXPECT_EQ(attributes.position(whole),
                static_cast<std::size_t>(std::distance(attributes.begin(), whole)));
    }
  }
}

// Each thread reads devices into pools of its own (one per reader) while the tables are copied
// and dropped on others (requests holding old snapshots): every value goes with its last holder.
TEST(InternedTableTest, TablesComeAndGoOnSeveralThreads) {
  ASSERT_EQ(Counted::alive, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t] {
      CountedPools pools;
      for (int i = 0; i < 2000; ++i) {
        const std::string root = std::to_string(i % 7);
        const std::string uuid = std::to_string(t) + "-" + std::to_string(i);
        const CountedTable shared = counted(pools, {{"d/root", root.c_str()}});
        const CountedTable own = counted(pools, {{"d/uuid", uuid.c_str()}});
        std::thread([copy = shared] { EXPECT_EQ(copy.size(), 1u); }).join();
      }
    });
  }
  for (std::thread& thread : threads) {
    thread.join();
  }
  EXPECT_EQ(Counted::alive, 0);
}

// A table moved from is empty, whatever it held.
TEST(InternedTableTest, MovedFromTablesAreEmpty) {
  AttributeTable from = table({{"d/a", text("x")}, {"d/b", text("y")}});
  AttributeTable to = std::move(from);
  EXPECT_EQ(to.size(), 2u);
  EXPECT_TRUE(from.empty());  // NOLINT(bugprone-use-after-move): what is checked
  EXPECT_EQ(from.begin(), from.end());
  EXPECT_EQ(from.find("d/a"), from.end());
  AttributeTable assigned = table({{"d/c", text("z")}});
  assigned = std::move(to);
  EXPECT_EQ(assigned.size(), 2u);
  EXPECT_EQ(assigned.find("d/b")->second, text("y"));
}

}  // namespace
}  // namespace topoguard::k8s
