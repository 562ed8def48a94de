// libFuzzer target for the CEL evaluator's limits: the input bytes choose a random expression
// tree of the amplifying shapes (cel_expression_generator.h). It aborts when an evaluation spends
// past its cost limit, holds more memory than the bound at its peak, or answers differently the
// second time.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "allocation_counter.h"
#include "cel_expression_generator.h"
#include "topoguard/cel/cel.h"

namespace {

namespace cel = topoguard::cel;
using topoguard::testing::AllocationCounter;

constexpr std::int64_t kMemoryBound = 4 * static_cast<std::int64_t>(cel::kMaxEvaluationBytes);

[[noreturn]] void contract_broken(const char* what, const std::string& expression) {
  std::fprintf(stderr, "cel_cost_fuzz: contract broken: %s\n%s\n", what, expression.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::size_t at = 0;
  topoguard::testing::CelExpressionGenerator generator(
      [&](unsigned bound) { return at < size ? data[at++] % bound : 0U; });
  const std::string text = generator.expression(7);
  const auto program = cel::compile(text);
  if (!program) {
    contract_broken("the generator made an expression that does not parse", text);
  }
  cel::Activation device;
  device.driver = "gpu.nvidia.com";
  const std::int64_t before = AllocationCounter::live_now();
  AllocationCounter::start();
  const cel::Evaluation first = cel::evaluate(*program, device);
  if (AllocationCounter::peak_now() - before > kMemoryBound) {
    contract_broken("an evaluation held more memory than the bound", text);
  }
  if (first.cost > cel::kPerCallCostLimit + 1) {
    contract_broken("an evaluation spent past its cost limit", text);
  }
  const cel::Evaluation second = cel::evaluate(*program, device);
  if (second.outcome != first.outcome || second.cost != first.cost) {
    contract_broken("evaluation is not deterministic", text);
  }
  return 0;
}
