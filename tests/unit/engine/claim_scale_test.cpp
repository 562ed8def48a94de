// Claims at the API server's limits (32 requests, 32 constraints, 8 subrequests a request) and
// past them: the answers at the largest valid size are the ones the small cases give, and a claim
// the API server would refuse is an input error at the list that is too long, before any work.
#include <string>

#include <gtest/gtest.h>

#include "engine_test_support.h"

namespace topoguard::engine {
namespace {

using policy::RuleId;

std::string gpu(const std::string& name, int count = 1) {
  return R"({"name":")" + name + R"(","exactly":{"deviceClassName":"gpu.nvidia.com","count":)" +
         std::to_string(count) + "}}";
}

std::string nic(const std::string& name) {
  return R"({"name":")" + name + R"(","exactly":{"deviceClassName":"dranet"}})";
}

std::string pair_constraint(int i, const std::string& attribute) {
  return R"({"requests":["gpu-)" + std::to_string(i) + R"(","nic-)" + std::to_string(i) +
         R"("],"matchAttribute":")" + attribute + R"("})";
}

Json claim_template(const std::string& requests, const std::string& constraints) {
  std::string text = R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaimTemplate",)"
                     R"("metadata":{"name":"big","namespace":"ml"},"spec":{"spec":{"devices":{)"
                     R"("requests":[)" +
                     requests + "]";
  if (!constraints.empty()) {
    text += R"(,"constraints":[)" + constraints + "]";
  }
  return Json::parse(text + "}}}}");
}

void append(std::string& list, const std::string& item) {
  list += (list.empty() ? "" : ",") + item;
}

// `pairs` GPU-NIC pairs; the first `aligned` tied by their own pcieRoot constraint.
Json pairs_template(int pairs, int aligned) {
  std::string requests;
  std::string constraints;
  for (int i = 0; i < pairs; ++i) {
    append(requests, gpu("gpu-" + std::to_string(i)));
    append(requests, nic("nic-" + std::to_string(i)));
    if (i < aligned) {
      append(constraints, pair_constraint(i, "resource.kubernetes.io/pcieRoot"));
    }
  }
  return claim_template(requests, constraints);
}

Evaluation evaluate_builtin(const Json& object) {
  static const Inventory inventory(Inventory::Claims::kUnknown);
  return evaluate(object, testing::builtin_policies(), inventory);
}

// 16 pairs each tied by its own constraint: aligned, nothing to say.
TEST(ClaimScaleTest, SixteenAlignedPairs) {
  const Evaluation evaluation = evaluate_builtin(pairs_template(16, 16));
  EXPECT_TRUE(evaluation.errors.empty());
  EXPECT_TRUE(evaluation.findings.empty()) << testing::dump(evaluation);
}

// Half of 16 pairs untied: one finding whose fix ties exactly the untied pairs, in order, and
// the fixed claim evaluates clean.
TEST(ClaimScaleTest, UntiedHalfIsFixedPairByPair) {
  const Json object = pairs_template(16, 8);
  const Evaluation evaluation = evaluate_builtin(object);
  ASSERT_EQ(evaluation.findings.size(), 1u) << testing::dump(evaluation);
  const Finding& finding = evaluation.findings[0];
  EXPECT_EQ(finding.rule, RuleId::kMissingPcieAlignment);
  ASSERT_EQ(finding.fix.size(), 8u);  // one `add .../constraints/-` per untied pair
  EXPECT_EQ(finding.fix[0].value, Json::parse(pair_constraint(8, "resource.kubernetes.io/pcieRoot")));
  EXPECT_EQ(finding.fix[7].value,
            Json::parse(pair_constraint(15, "resource.kubernetes.io/pcieRoot")));
  testing::expect_fixes_converge(object, evaluation, testing::builtin_policies(),
                                 Inventory(Inventory::Claims::kUnknown));
}

// 16 GPU-NIC pairs, each tied only by its own NUMA constraint.
void numa_pairs(std::string& requests, std::string& constraints) {
  for (int i = 0; i < 16; ++i) {
    append(requests, gpu("gpu-" + std::to_string(i)));
    append(requests, nic("nic-" + std::to_string(i)));
    append(constraints, pair_constraint(i, "dra.net/numaNode"));
  }
}

// Pairs tied only by NUMA constraints are numa-only, also at the limit.
TEST(ClaimScaleTest, SixteenNumaOnlyPairs) {
  std::string requests;
  std::string constraints;
  numa_pairs(requests, constraints);
  const Evaluation evaluation = evaluate_builtin(claim_template(requests, constraints));
  ASSERT_EQ(evaluation.findings.size(), 1u) << testing::dump(evaluation);
  EXPECT_EQ(evaluation.findings[0].rule, RuleId::kNumaOnlyAlignment);
  EXPECT_EQ(evaluation.findings[0].fix.size(), 16u);
}

// A fix never takes a claim past the API's 32 constraints: 17 constraints and 16 untied pairs
// are still reported, with no fix (the API server would refuse the patched object).
TEST(ClaimScaleTest, NoFixPastThirtyTwoConstraints) {
  std::string requests;
  std::string constraints;
  numa_pairs(requests, constraints);
  append(constraints, R"({"requests":["gpu-0"],"matchAttribute":"example.com/rack"})");
  const Evaluation evaluation = evaluate_builtin(claim_template(requests, constraints));
  ASSERT_EQ(evaluation.findings.size(), 1u) << testing::dump(evaluation);
  EXPECT_EQ(evaluation.findings[0].rule, RuleId::kNumaOnlyAlignment);
  EXPECT_TRUE(evaluation.findings[0].fix.empty());
  EXPECT_TRUE(evaluation.patch.empty());
}

// One constraint naming every subrequest ("r-i/gpu", "r-i/nic") binds every request by both
// roles; leaving out one NIC subrequest unties that request.
TEST(ClaimScaleTest, SharedConstraintOverSubrequests) {
  const auto shared = [](int skipped) {
    std::string requests;
    std::string names;
    for (int i = 0; i < 16; ++i) {  // 32 names: the most one constraint may list
      const std::string name = "r-" + std::to_string(i);
      append(requests, R"({"name":")" + name +
                           R"(","firstAvailable":[{"name":"gpu","deviceClassName":)"
                           R"("gpu.nvidia.com"},{"name":"nic","deviceClassName":"dranet"}]})");
      append(names, "\"" + name + "/gpu\"");
      if (i != skipped) {
        append(names, "\"" + name + "/nic\"");
      }
    }
    return claim_template(requests, R"({"requests":[)" + names +
                                        R"(],"matchAttribute":"resource.kubernetes.io/pcieRoot"})");
  };
  const Evaluation all = evaluate_builtin(shared(-1));
  EXPECT_TRUE(all.findings.empty()) << testing::dump(all);
  const Evaluation one_short = evaluate_builtin(shared(7));
  ASSERT_EQ(one_short.findings.size(), 1u) << testing::dump(one_short);
  EXPECT_EQ(one_short.findings[0].rule, RuleId::kMissingPcieAlignment);
  EXPECT_NE(one_short.findings[0].message.find("r-7"), std::string::npos);
}

// A constraint over many multi-device requests names the first ten and counts the rest.
TEST(ClaimScaleTest, MultiDeviceOffendersAreCountedPastTen) {
  std::string requests;
  for (int i = 0; i < 15; ++i) {
    append(requests, gpu("gpu-" + std::to_string(i), 2));
  }
  append(requests, nic("nic"));
  const Evaluation evaluation = evaluate_builtin(
      claim_template(requests, R"({"matchAttribute":"resource.kubernetes.io/pcieRoot"})"));
  ASSERT_FALSE(evaluation.findings.empty()) << testing::dump(evaluation);
  const Finding& finding = evaluation.findings.back();
  EXPECT_EQ(finding.rule, RuleId::kMultiDeviceAlignment);
  EXPECT_NE(finding.message.find("covers gpu-0 (count 2), gpu-1 (count 2)"), std::string::npos)
      << finding.message;
  EXPECT_NE(finding.message.find("gpu-9 (count 2) and 5 more:"), std::string::npos)
      << finding.message;
  EXPECT_EQ(finding.message.find("gpu-10 "), std::string::npos) << finding.message;
}

struct OverLimit {
  std::string object;
  std::string field;
};

// One past each API limit: an input error (too_large) at the list, and no findings.
TEST(ClaimScaleTest, PastTheApiLimitsIsAnInputError) {
  std::string selectors;
  for (int i = 0; i < 33; ++i) {
    append(selectors, R"({"cel":{"expression":"true"}})");
  }
  std::string subrequests;
  for (int i = 0; i < 9; ++i) {
    append(subrequests, R"({"name":"s)" + std::to_string(i) + R"(","deviceClassName":"c"})");
  }
  const std::string long_expression(10 * 1024 - 6, ' ');
  std::string thirty_three_requests;
  for (int i = 0; i < 33; ++i) {
    append(thirty_three_requests, gpu("gpu-" + std::to_string(i)));
  }
  const std::vector<OverLimit> cases = {
      {pairs_template(16, 0).dump(), ""},  // at the limit: no error
      {claim_template(thirty_three_requests, "").dump(), "/spec/spec/devices/requests"},
      {claim_template(gpu("g"), [] {
         std::string many;
         for (int i = 0; i < 33; ++i) {
           append(many, R"({"requests":["g"],"matchAttribute":"resource.kubernetes.io/pcieRoot"})");
         }
         return many;
       }()).dump(),
       "/spec/spec/devices/constraints"},
      {claim_template(R"({"name":"g","exactly":{"deviceClassName":"c","selectors":[)" + selectors +
                          "]}}",
                      "")
           .dump(),
       "/spec/spec/devices/requests/0/exactly/selectors"},
      {claim_template(R"({"name":"g","firstAvailable":[)" + subrequests + "]}", "").dump(),
       "/spec/spec/devices/requests/0/firstAvailable"},
      {claim_template(R"({"name":"g","exactly":{"deviceClassName":"c","selectors":[{"cel":)"
                      R"({"expression":"true &&)" +
                          long_expression + R"(true"}}]}})",
                      "")
           .dump(),
       "/spec/spec/devices/requests/0/exactly/selectors/0/cel/expression"},
  };
  for (const OverLimit& over : cases) {
    const Evaluation evaluation = evaluate_builtin(Json::parse(over.object));
    if (over.field.empty()) {
      EXPECT_TRUE(evaluation.errors.empty()) << testing::dump(evaluation);
      continue;
    }
    ASSERT_EQ(evaluation.errors.size(), 1u) << over.field;
    EXPECT_EQ(evaluation.errors[0].code, ErrorCode::kTooLarge) << over.field;
    EXPECT_EQ(evaluation.errors[0].location.field, over.field);
    EXPECT_TRUE(evaluation.findings.empty());
  }
}

}  // namespace
}  // namespace topoguard::engine
