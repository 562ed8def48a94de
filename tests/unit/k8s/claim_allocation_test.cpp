#include "topoguard/k8s/claim_allocation.h"

#include <gtest/gtest.h>

#include <string>

namespace topoguard::k8s {
namespace {

Json claim(const std::string& results) {
  return Json::parse(R"({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
    "metadata": {"name": "c", "namespace": "ml"}, "spec": {"devices": {"requests": []}},
    "status": {"allocation": {"devices": {"results": )" +
                     results + "}}}}");
}

// Each result takes its device, except adminAccess ones; a shareID makes it one share, with its
// consumed capacity under qualified names (a name without a domain is the driver's).
TEST(ClaimAllocationTest, ReadsResultsAsTheSchedulerCountsThem) {
  const auto read = read_claim_allocations(claim(R"([
    {"request": "gpu", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-0"},
    {"request": "mon", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-1",
     "adminAccess": true},
    {"request": "nic", "driver": "dra.net", "pool": "n1", "device": "eth1", "shareID": "a1",
     "consumedCapacity": {"bandwidth": "10G", "example.com/queues": 2}}])"));
  ASSERT_TRUE(read) << read.error().to_string();
  ASSERT_EQ(read->size(), 2U);
  EXPECT_EQ((*read)[0].claim, "ml/c");
  EXPECT_EQ((*read)[0].device, "gpu.example.com/n1/gpu-0");
  EXPECT_FALSE((*read)[0].shared);
  EXPECT_EQ((*read)[1].device, "dra.net/n1/eth1");
  EXPECT_TRUE((*read)[1].shared);
  EXPECT_EQ((*read)[1].consumed, (std::map<std::string, std::string, std::less<>>{
                                     {"dra.net/bandwidth", "10G"}, {"example.com/queues", "2"}}));

  const auto unallocated = read_claim_allocations(Json::parse(R"({"kind": "ResourceClaim"})"));
  ASSERT_TRUE(unallocated);
  EXPECT_TRUE(unallocated->empty());
}

struct BadCase {
  const char* results;
  const char* field;
};

class BadClaimAllocationTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadClaimAllocationTest, NamesTheField) {
  const auto read = read_claim_allocations(claim(GetParam().results));
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().location.field, GetParam().field) << read.error().to_string();
}

INSTANTIATE_TEST_SUITE_P(
    Fields, BadClaimAllocationTest,
    ::testing::Values(
        BadCase{"{}", "/status/allocation/devices/results"},
        BadCase{"[7]", "/status/allocation/devices/results/0"},
        BadCase{R"([{"driver": "d", "pool": "p"}])", "/status/allocation/devices/results/0/device"},
        BadCase{R"([{"driver": "d", "pool": "p", "device": "x", "adminAccess": "yes"}])",
                "/status/allocation/devices/results/0/adminAccess"},
        BadCase{
            R"([{"driver": "d", "pool": "p", "device": "x", "consumedCapacity": {"m": "lots"}}])",
            "/status/allocation/devices/results/0/consumedCapacity/m"}));

}  // namespace
}  // namespace topoguard::k8s
