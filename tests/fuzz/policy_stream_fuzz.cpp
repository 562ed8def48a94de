// libFuzzer target for the policy loader: arbitrary bytes as a policy file (a multi-document
// YAML/JSON stream of AlignmentPolicy documents). Besides crashes, hangs and sanitizer reports it
// aborts when a contract breaks: every error names the file (and a line when it has a field),
// and the stream yields policies or errors, never a policy built from a document with errors.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "topoguard/policy/policy_loader.h"

namespace {

constexpr const char* kFileName = "fuzz-policy.yaml";

[[noreturn]] void contract_broken(const char* what) {
  std::fprintf(stderr, "policy_stream_fuzz: contract broken: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const topoguard::policy::PolicyStreamOutcome outcome =
      topoguard::policy::parse_policy_stream(text, kFileName);
  for (const topoguard::Error& error : outcome.errors) {
    if (error.location.file != kFileName) {
      contract_broken("an error does not name the file");
    }
    if (error.message.empty()) {
      contract_broken("an error without a message");
    }
  }
  for (const topoguard::policy::Policy& policy : outcome.policies) {
    if (policy.origin.file != kFileName || policy.name.empty()) {
      contract_broken("a policy without its origin or name");
    }
  }
  return 0;
}
