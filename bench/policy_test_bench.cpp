// `topoguard policy test` against the size of a test: N claim templates (half unaligned) and a
// test with one result per template (deny or pass), 500 to 10,000. run_policy_test (the audit
// and the checks) beside the audit alone over the same objects as the baseline, and
// update_test_file rewriting every result's action. Prints the exponents fitted to
// time = c * N^k.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "growth_fit.h"
#include "topoguard/audit/audit_runner.h"
#include "topoguard/policy/policy_loader.h"
#include "topoguard/policytest/policy_test.h"

namespace {

namespace policytest = topoguard::policytest;

std::string claim_templates(int count) {
  std::string text;
  for (int i = 0; i < count; ++i) {
    text += "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: t" +
            std::to_string(i) + ", namespace: ns" + std::to_string(i % 20) +
            "}\nspec:\n  spec:\n    devices:\n      requests:\n      - {name: gpu, exactly: "
            "{deviceClassName: gpu.nvidia.com}}\n      - {name: nic, exactly: {deviceClassName: "
            "dra.net}}\n";
    if (i % 2 == 0) {
      text +=
          "      constraints: [{requests: [gpu, nic], matchAttribute: "
          "resource.kubernetes.io/pcieRoot}]\n";
    }
  }
  return text;
}

// A test with a result per template; `wrong` expects the opposite of what happens.
std::string test_text(int count, bool wrong) {
  std::string text =
      "apiVersion: topoguard.dev/v1alpha1\nkind: AlignmentPolicyTest\nmetadata: {name: b}\n"
      "resources: [in.yaml]\nresults:\n";
  for (int i = 0; i < count; ++i) {
    const bool aligned = i % 2 == 0;
    text += "- resource: {kind: ResourceClaimTemplate, namespace: ns" + std::to_string(i % 20) +
            ", name: t" + std::to_string(i) + "}\n  rule: missing-pcie-alignment\n  action: " +
            ((aligned != wrong) ? "pass" : "deny") + "  # reviewed\n";
  }
  return text;
}

struct Fixture {
  policytest::PolicyTest test;
  policytest::TestInputs inputs;
  std::string text;
};

Fixture fixture(int count, bool wrong) {
  Fixture made;
  made.text = test_text(count, wrong);
  const policytest::PathRoot root = *policytest::PathRoot::open(".");
  made.test = policytest::parse_policy_tests("t.yaml", made.text, ".", root).tests.at(0);
  made.inputs.policies = *topoguard::policy::load_builtin_policies();
  made.inputs.manifests = topoguard::audit::parse_manifests({{"in.yaml", claim_templates(count)}});
  return made;
}

void BM_RunPolicyTest(benchmark::State& state) {
  const Fixture made = fixture(static_cast<int>(state.range(0)), false);
  for (auto _ : state) {
    auto result = policytest::run_policy_test(made.test, made.inputs);
    if (!result.passed()) {
      state.SkipWithError("the generated test should pass");
    }
    benchmark::DoNotOptimize(result);
  }
  state.SetComplexityN(state.range(0));
}

// The baseline: the audit of the same manifests.
void BM_AuditOnly(benchmark::State& state) {
  const Fixture made = fixture(static_cast<int>(state.range(0)), false);
  for (auto _ : state) {
    auto run = topoguard::audit::run_audit(made.inputs.manifests, made.inputs.policies);
    benchmark::DoNotOptimize(run);
  }
  state.SetComplexityN(state.range(0));
}

void BM_UpdateTestFile(benchmark::State& state) {
  const Fixture made = fixture(static_cast<int>(state.range(0)), true);
  const std::vector<policytest::TestResult> results{
      policytest::run_policy_test(made.test, made.inputs)};
  for (auto _ : state) {
    auto update = policytest::update_test_file("t.yaml", made.text, results);
    if (!update || update->text == made.text) {
      state.SkipWithError("every action should change");
    }
    benchmark::DoNotOptimize(update);
  }
  state.SetComplexityN(state.range(0));
}

#define TEST_SIZES \
  ->Arg(500)->Arg(1000)->Arg(2500)->Arg(5000)->Arg(10000)->Unit(benchmark::kMillisecond)
BENCHMARK(BM_RunPolicyTest) TEST_SIZES;
BENCHMARK(BM_AuditOnly) TEST_SIZES;
BENCHMARK(BM_UpdateTestFile) TEST_SIZES;

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  topoguard::bench::ExponentReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  reporter.print_exponents("CPU time ~ results^k, 500 -> 10,000 templates with a result each");
  benchmark::Shutdown();
  return 0;
}
