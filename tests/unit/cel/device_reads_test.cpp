// What an expression reads of `device`: in particular which attributes it only compares with
// string literals, whose values it then tells apart only by the literal they equal.
#include "topoguard/cel/device_reads.h"

#include <gtest/gtest.h>

#include "topoguard/cel/cel.h"

namespace topoguard::cel {
namespace {

using Literals = std::map<std::string, std::vector<std::string>, std::less<>>;

DeviceReads reads_of(const std::string& text) {
  auto program = compile(text);
  EXPECT_TRUE(program) << text;
  return device_reads(program->root());
}

// Equality, inequality and `in` a list of string literals, on either side, and has() tests:
// the attribute is told apart by its literals alone.
TEST(DeviceReadsTest, LiteralComparisonsAreCollected) {
  EXPECT_EQ(reads_of(R"(device.attributes["d"].uuid != "GPU-x")").compared_to_literals,
            (Literals{{"d/uuid", {"GPU-x"}}}));
  EXPECT_EQ(reads_of(R"("b" == device.attributes["d"]["uuid"] || )"
                     R"(device.attributes["d"].uuid in ["c", "a", "b"])")
                .compared_to_literals,
            (Literals{{"d/uuid", {"a", "b", "c"}}}));
  EXPECT_EQ(reads_of(R"(has(device.attributes["d"].uuid) && device.attributes["d"].model == "m")")
                .compared_to_literals,
            (Literals{{"d/model", {"m"}}, {"d/uuid", {}}}));
}

// Any other use of the value (a function of it, a comparison with something else than a string
// literal, a list or variable holding it) leaves the attribute out.
TEST(DeviceReadsTest, OtherUsesAreNotLiteralComparisons) {
  for (const std::string text : {
           R"(device.attributes["d"].uuid.startsWith("GPU"))",
           R"(device.attributes["d"].uuid == device.attributes["d"].other)",
           R"(device.attributes["d"].uuid == 5)",
           R"(device.attributes["d"].uuid in ["a", 1])",
           R"([device.attributes["d"].uuid].exists(u, u == "a"))",
           R"(device.attributes["d"].uuid < "b")",
           R"(device.attributes["d"].uuid == "a" || size(device.attributes["d"].uuid) > 3)",
       }) {
    EXPECT_EQ(reads_of(text).compared_to_literals.count("d/uuid"), 0u) << text;
  }
  // The domain as a map: every attribute of it may be read, none is only compared.
  const DeviceReads whole = reads_of(R"("uuid" in device.attributes["d"])");
  EXPECT_EQ(whole.domains, std::vector<std::string>{"d"});
  EXPECT_TRUE(whole.compared_to_literals.empty());
}

}  // namespace
}  // namespace topoguard::cel
