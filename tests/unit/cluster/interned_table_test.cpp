#include "topoguard/cluster/interned_table.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "topoguard/cluster/cluster_state.h"

namespace topoguard::cluster {
namespace {

AttributeValue text(std::string value) {
  AttributeValue out;
  out.values.emplace_back(std::move(value));
  return out;
}

AttributeTable table(std::map<std::string, AttributeValue, std::less<>> entries) {
  return AttributeTable(std::move(entries));
}

using ValuePool = InternPool<AttributeValue, AttributeValueHash>;

// Two devices publishing the same name and value hold one copy of each; a value no table holds
// any more leaves the pool, whether its tables were copied, moved or assigned. (Values no other
// test of this process holds.)
TEST(InternedTableTest, SharesValuesAndDropsThoseNoTableHolds) {
  const std::size_t before = ValuePool::instance().size();
  {
    const AttributeTable a =
        table({{"d/root", text("interned-test:root")}, {"d/uuid", text("interned-test:a")}});
    const AttributeTable b =
        table({{"d/root", text("interned-test:root")}, {"d/uuid", text("interned-test:b")}});
    EXPECT_EQ(ValuePool::instance().size(), before + 3);
    EXPECT_EQ(&a.find("d/root")->second, &b.find("d/root")->second);
    EXPECT_EQ(&a.find("d/root")->first, &b.find("d/root")->first);
    EXPECT_NE(&a.find("d/uuid")->second, &b.find("d/uuid")->second);

    AttributeTable copy = a;
    AttributeTable moved = std::move(copy);
    AttributeTable assigned;
    assigned = b;
    assigned = moved;  // b's uuid is still held by b
    EXPECT_EQ(ValuePool::instance().size(), before + 3);
    EXPECT_EQ(std::get<std::string>(assigned.find("d/uuid")->second.values[0]),
              "interned-test:a");
  }
  EXPECT_EQ(ValuePool::instance().size(), before);
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

// Tables are made and dropped on several threads at once (a cache's store and the requests
// holding old snapshots): the pool stays consistent.
TEST(InternedTableTest, TablesComeAndGoOnSeveralThreads) {
  const std::size_t before = ValuePool::instance().size();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t] {
      for (int i = 0; i < 2000; ++i) {
        const AttributeTable shared =
            table({{"d/root", text("interned-test:" + std::to_string(i % 7))}});
        const AttributeTable own = table(
            {{"d/uuid", text("interned-test:" + std::to_string(t) + "-" + std::to_string(i))}});
        AttributeTable copy = shared;
        EXPECT_EQ(copy.size(), 1u);
      }
    });
  }
  for (std::thread& thread : threads) {
    thread.join();
  }
  EXPECT_EQ(ValuePool::instance().size(), before);
}

}  // namespace
}  // namespace topoguard::cluster
