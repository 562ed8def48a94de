// Shared helpers of the engine tests: inline YAML -> objects, policies and inventories, and the
// checks every evaluation must pass (exact findings, patch = enabled fixes, fixes re-evaluate
// clean, determinism).
#pragma once

#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "topoguard/common/json.h"
#include "topoguard/engine/evaluate.h"
#include "topoguard/engine/inventory.h"
#include "topoguard/policy/policy.h"
#include "topoguard/policy/policy_set.h"

namespace topoguard::engine::testing {

// Every document of a YAML stream; the stream must parse.
std::vector<Json> parse_documents(const std::string& yaml);
// The single document of a YAML text.
Json parse_one(const std::string& yaml);

// The built-in default policy, loaded once.
const policy::PolicySet& builtin_policies();
// A policy set parsed from inline YAML ("inline.yaml"); the text must be valid.
policy::PolicySet inline_policies(const std::string& yaml);
// An AlignmentPolicy named `name` with small device lists (GPU: gpu.nvidia.com class/driver and
// nvidia.com/gpu; NIC: dranet class, dra.net driver, rdma/.*) and `extra` appended to its spec
// (indented by two spaces already: e.g. "  rules:\n    split-claims: {action: audit}\n").
std::string policy_yaml(const std::string& extra, const std::string& name = "custom");

// Owns the objects an Inventory points into.
class InventoryFixture {
 public:
  InventoryFixture(const std::string& yaml, Inventory::Claims claims);
  [[nodiscard]] const Inventory& inventory() const { return inventory_; }

 private:
  std::deque<Json> objects_;
  Inventory inventory_;
};

struct ExpectedFinding {
  policy::RuleId rule = policy::RuleId::kMissingPcieAlignment;
  std::string pointer;
  std::string fix;                         // JSON text of the RFC 6902 operations; "" = no fix
  std::vector<std::string> message_parts;  // substrings the message must contain
};

ExpectedFinding expect(policy::RuleId rule, std::string pointer, std::string fix = "",
                       std::vector<std::string> message_parts = {});

// The action of `rule` in the built-in policy.
policy::Action builtin_action(policy::RuleId rule);

// Asserts that `evaluation` has exactly `expected` (rule, pointer, fix, message parts, in order),
// that its patch is the concatenation of the enabled fixes, and that it has no errors.
void expect_findings(const Evaluation& evaluation, const std::vector<ExpectedFinding>& expected);

// Applies every fix (enabled or not) of `evaluation` to `object` with nlohmann's patch(),
// re-evaluates, and asserts no finding with a fix is left; also applies Evaluation::patch and
// asserts the same. Evaluates `object` twice and asserts identical output.
void expect_fixes_converge(const Json& object, const Evaluation& evaluation,
                           const policy::PolicySet& policies, const Inventory& inventory);

// Canonical dump of an evaluation (for determinism checks and failure messages).
std::string dump(const Evaluation& evaluation);

}  // namespace topoguard::engine::testing
