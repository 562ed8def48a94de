// The feasibility cache: an answer kept for a spec is given again without a step, answers cut
// short by the budget are not kept, and the cache stays within its bound, least recently used
// first out.
#include "topoguard/cluster/feasibility_cache.h"

#include <gtest/gtest.h>

#include "cluster_test_support.h"

namespace topoguard::cluster {
namespace {

constexpr const char* kState = R"(apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
spec: {selectors: [{cel: {expression: 'device.driver == "d"'}}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: d
  nodeName: n1
  pool: {name: p, resourceSliceCount: 1}
  devices:
  - {name: a, attributes: {model: {string: m}}}
  - {name: b, attributes: {model: {string: m}}}
)";

std::string gpus(int count) {
  return "{requests: [{name: g, exactly: {deviceClassName: gpu, count: " + std::to_string(count) +
         "}}]}";
}

// The second check of a spec is the first's answer, and spends no step.
TEST(FeasibilityCacheTest, RepeatedSpecCostsNothing) {
  const ClusterState state = testing::build_state(kState);
  FeasibilityCache cache;
  FeasibilityOptions options;
  options.cache = &cache;
  options.spec_key = gpus(2);
  StepBudget first(1'000);
  options.budget = &first;
  const ClaimFeasibilityPtr answer = check_feasibility_cached(testing::claim_spec(gpus(2)), state, options);
  EXPECT_EQ(answer->verdict, Verdict::kSatisfiable);
  EXPECT_GT(first.spent(), 0u);
  EXPECT_EQ(cache.size(), 1u);
  StepBudget none(0);
  options.budget = &none;
  EXPECT_EQ(check_feasibility_cached(testing::claim_spec(gpus(2)), state, options), answer);
  EXPECT_FALSE(none.exhausted());
  // Another spec, or the same one for another claim, is checked (and past the budget, unknown).
  options.spec_key = gpus(3);
  EXPECT_EQ(check_feasibility_cached(testing::claim_spec(gpus(3)), state, options)->verdict,
            Verdict::kUnknown);
  options.spec_key = gpus(2);
  options.own_claim = "ns/other";
  EXPECT_TRUE(check_feasibility_cached(testing::claim_spec(gpus(2)), state, options)->budget_exhausted);
  // What ran out of budget was not kept: with steps, the answer.
  EXPECT_EQ(cache.size(), 1u);
  options.budget = nullptr;
  options.spec_key = gpus(3);
  EXPECT_EQ(check_feasibility_cached(testing::claim_spec(gpus(3)), state, options)->verdict,
            Verdict::kUnsatisfiable);
  EXPECT_EQ(cache.size(), 2u);
  // Without a key nothing is kept.
  options.spec_key.clear();
  EXPECT_NE(check_feasibility_cached(testing::claim_spec(gpus(2)), state, options), answer);
  EXPECT_EQ(cache.size(), 2u);
}

// Past its bound the cache forgets the least recently used answers; one larger than the bound
// is not kept.
TEST(FeasibilityCacheTest, StaysWithinItsBound) {
  const ClusterState state = testing::build_state(kState);
  FeasibilityOptions plain;
  const auto answer = std::make_shared<const ClaimFeasibility>(
      check_feasibility(testing::claim_spec(gpus(1)), state, plain));
  const std::size_t one = estimated_bytes(*answer) + 2 * std::string("k0").size();
  FeasibilityCache cache(3 * one);
  cache.insert("k0", answer);
  cache.insert("k1", answer);
  cache.insert("k2", answer);
  EXPECT_EQ(cache.size(), 3u);
  EXPECT_NE(cache.find("k0"), nullptr);  // now the most recently used
  cache.insert("k3", answer);
  EXPECT_EQ(cache.size(), 3u);
  EXPECT_LE(cache.bytes(), 3 * one);
  EXPECT_EQ(cache.find("k1"), nullptr);
  EXPECT_NE(cache.find("k0"), nullptr);
  EXPECT_NE(cache.find("k3"), nullptr);
  FeasibilityCache tiny(one - 1);
  tiny.insert("k0", answer);
  EXPECT_EQ(tiny.size(), 0u);
}

}  // namespace
}  // namespace topoguard::cluster
