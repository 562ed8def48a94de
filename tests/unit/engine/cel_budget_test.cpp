// The CEL budget of one object: its selectors share the API server's per-request budget, past
// which the rest are unknown (never a GPU or a NIC), and what an Evaluator kept from earlier
// objects never changes an answer: a kept selector answer is charged what it cost.
#include <gtest/gtest.h>

#include <string>

#include "engine_test_support.h"
#include "topoguard/cel/cel.h"

namespace topoguard::engine {
namespace {

// A GPU selector costing ~740,000 units on the GPU driver (a 90 x 90 x 90 comprehension), and
// next to nothing on the other candidate drivers; `tag` makes each text distinct.
std::string costly_gpu_selector(int tag) {
  std::string range;
  for (int i = 0; i < 90; ++i) {
    range += (i == 0 ? "" : ",") + std::to_string(i);
  }
  return R"(device.driver == \"gpu.nvidia.com\" && size(\"r)" + std::to_string(tag) +
         R"(\") > 0 && [[)" + range + R"(]].all(l, l.all(a, l.all(b, l.all(c, true)))))";
}

// `gpus` requests with costly GPU selectors (tags from `first`), one NIC request, no constraint.
Json claim_with_costly_gpus(int first, int gpus) {
  std::string requests;
  for (int i = first; i < first + gpus; ++i) {
    requests += R"({"name":"gpu-)" + std::to_string(i) +
                R"(","exactly":{"deviceClassName":"any","selectors":[{"cel":{"expression":")" +
                costly_gpu_selector(i) + R"("}}]}},)";
  }
  requests += R"({"name":"nic","exactly":{"deviceClassName":"dranet.net"}})";
  return Json::parse(
      R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaimTemplate",)"
      R"("metadata":{"name":"costly","namespace":"ml"},"spec":{"spec":{"devices":{"requests":[)" +
      requests + "]}}}}");
}

const Inventory& no_claims() {
  static const Inventory inventory(Inventory::Claims::kUnknown);
  return inventory;
}

// 31 costly selectors need ~23 M units: the first ~13 are read as GPUs, the rest are unknown.
TEST(CelBudgetTest, SelectorsPastTheObjectBudgetAreUnknown) {
  const Evaluation evaluation =
      evaluate(claim_with_costly_gpus(0, 31), testing::builtin_policies(), no_claims());
  ASSERT_TRUE(evaluation.errors.empty()) << testing::dump(evaluation);
  ASSERT_EQ(evaluation.findings.size(), 1U) << testing::dump(evaluation);
  const std::string& message = evaluation.findings[0].message;
  EXPECT_NE(message.find("gpu-0"), std::string::npos) << message;
  EXPECT_EQ(message.find("gpu-30"), std::string::npos) << message;
}

// An Evaluator that has kept answers for some of the selectors answers exactly as a fresh one,
// object after object, and the same object always gets the same answer.
TEST(CelBudgetTest, KeptAnswersNeverChangeAVerdict) {
  Evaluator kept(testing::builtin_policies(), no_claims());
  (void)kept.evaluate(claim_with_costly_gpus(10, 8));  // answers for gpu-10 ... gpu-17 kept
  const Json object = claim_with_costly_gpus(0, 31);
  const std::string fresh =
      testing::dump(evaluate(object, testing::builtin_policies(), no_claims()));
  EXPECT_EQ(testing::dump(kept.evaluate(object)), fresh);
  EXPECT_EQ(testing::dump(kept.evaluate(object)), fresh);
}

}  // namespace
}  // namespace topoguard::engine
