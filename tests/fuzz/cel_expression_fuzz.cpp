// libFuzzer target for the CEL reader: arbitrary bytes as a selector expression. Besides crashes,
// hangs and sanitizer reports it aborts when a contract breaks: evaluation is deterministic, and
// an answer given with attributes and capacity unknown (true or false) never changes once they
// are bound, because unknown must never have been a guess.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "topoguard/cel/cel.h"

namespace {

namespace cel = topoguard::cel;

[[noreturn]] void contract_broken(const char* what) {
  std::fprintf(stderr, "cel_expression_fuzz: contract broken: %s\n", what);
  std::abort();
}

cel::Activation driver_only() {
  cel::Activation device;
  device.driver = "gpu.nvidia.com";
  return device;
}

cel::Activation full_device() {
  cel::Activation device = driver_only();
  device.attributes = cel::Attributes{
      {"gpu.nvidia.com",
       {{"productName", std::string("NVIDIA A100")},
        {"index", std::int64_t{0}},
        {"mig", false},
        {"driverVersion", *cel::Version::parse("550.54.15")}}},
      {"resource.kubernetes.io", {{"pcieRoot", std::string("pci0000:00")}}}};
  device.capacity =
      cel::Capacity{{"gpu.nvidia.com", {{"memory", *cel::Quantity::parse("40Gi")}}}};
  return device;
}

bool decided(cel::Outcome outcome) {
  return outcome == cel::Outcome::kTrue || outcome == cel::Outcome::kFalse;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto program = cel::compile(text);
  if (!program) {
    if (program.error().message.empty()) {
      contract_broken("a syntax error without a message");
    }
    return 0;
  }
  static const cel::Activation partial = driver_only();
  static const cel::Activation full = full_device();
  const cel::Evaluation first = cel::evaluate(*program, partial);
  if (cel::evaluate(*program, partial).outcome != first.outcome) {
    contract_broken("evaluation is not deterministic");
  }
  const cel::Evaluation bound = cel::evaluate(*program, full);
  if (decided(first.outcome) && bound.outcome != cel::Outcome::kUnknown &&
      bound.outcome != first.outcome) {
    contract_broken("binding unknown inputs changed a decided answer");
  }
  (void)cel::string_literals(*program);
  (void)cel::attributes_read(*program);
  return 0;
}
