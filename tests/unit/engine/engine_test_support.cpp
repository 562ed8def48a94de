#include "engine_test_support.h"

#include <gmock/gmock.h>

#include "topoguard/common/yaml_document.h"
#include "topoguard/k8s/object.h"
#include "topoguard/policy/policy_loader.h"

namespace topoguard::engine::testing {

std::vector<Json> parse_documents(const std::string& yaml) {
  YamlStream stream = parse_yaml_stream(yaml, "inline.yaml");
  EXPECT_TRUE(stream.errors.empty()) << stream.errors.front().to_string();
  std::vector<Json> documents;
  for (YamlDocument& document : stream.documents) {
    documents.push_back(std::move(document.value));
  }
  return documents;
}

Json parse_one(const std::string& yaml) {
  std::vector<Json> documents = parse_documents(yaml);
  EXPECT_EQ(documents.size(), 1u) << yaml;
  return documents.empty() ? Json() : documents.front();
}

const policy::PolicySet& builtin_policies() {
  static const policy::PolicySet set = [] {
    auto loaded = policy::load_builtin_policies();
    EXPECT_TRUE(loaded) << loaded.error().to_string();
    return loaded ? *loaded : policy::PolicySet();
  }();
  return set;
}

policy::PolicySet inline_policies(const std::string& yaml) {
  policy::PolicyStreamOutcome outcome = policy::parse_policy_stream(yaml, "inline.yaml");
  for (const Error& error : outcome.errors) {
    ADD_FAILURE() << error.to_string();
  }
  return policy::PolicySet(std::move(outcome.policies));
}

std::string policy_yaml(const std::string& extra, const std::string& name) {
  return R"(apiVersion: topoguard.dev/v1alpha1
kind: AlignmentPolicy
metadata:
  name: )" + name + R"(
spec:
  devices:
    gpu:
      deviceClassNames: ['gpu\.nvidia\.com']
      drivers: ['gpu\.nvidia\.com']
      extendedResources: ['nvidia\.com/gpu']
    nic:
      deviceClassNames: ['dranet']
      drivers: ['dra\.net']
      extendedResources: ['rdma/.*']
  alignment:
    attribute: resource.kubernetes.io/pcieRoot
    numaAttributes: ['dra\.net/numaNode']
)" + extra;
}

InventoryFixture::InventoryFixture(const std::string& yaml, Inventory::Claims claims)
    : inventory_(claims) {
  if (yaml.empty()) {
    return;
  }
  for (Json& document : parse_documents(yaml)) {
    objects_.push_back(std::move(document));
    EXPECT_TRUE(inventory_.add(objects_.back())) << objects_.back().dump();
  }
}

ExpectedFinding expect(policy::RuleId rule, std::string pointer, std::string fix,
                       std::vector<std::string> message_parts) {
  return ExpectedFinding{rule, std::move(pointer), std::move(fix), std::move(message_parts)};
}

policy::Action builtin_action(policy::RuleId rule) {
  return builtin_policies().policies().at(0).rule(rule).action;
}

std::string dump(const Evaluation& evaluation) {
  Json out = Json::object();
  out["findings"] = Json::array();
  for (const Finding& finding : evaluation.findings) {
    out["findings"].push_back(Json{{"policy", finding.policy},
                                   {"rule", policy::rule_name(finding.rule)},
                                   {"action", policy::action_name(finding.action)},
                                   {"kind", finding.resource.kind},
                                   {"name", finding.resource.name},
                                   {"pointer", finding.pointer},
                                   {"message", finding.message},
                                   {"fix", patch_to_json(finding.fix)},
                                   {"fix_enabled", finding.fix_enabled}});
  }
  out["patch"] = patch_to_json(evaluation.patch);
  out["errors"] = Json::array();
  for (const Error& error : evaluation.errors) {
    out["errors"].push_back(error.to_string());
  }
  return out.dump(2);
}

void expect_findings(const Evaluation& evaluation, const std::vector<ExpectedFinding>& expected) {
  SCOPED_TRACE(dump(evaluation));
  EXPECT_TRUE(evaluation.errors.empty());
  ASSERT_EQ(evaluation.findings.size(), expected.size());
  Json enabled_fixes = Json::array();
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const Finding& finding = evaluation.findings[i];
    const ExpectedFinding& want = expected[i];
    SCOPED_TRACE("finding " + std::to_string(i));
    EXPECT_EQ(policy::rule_name(finding.rule), policy::rule_name(want.rule));
    EXPECT_EQ(finding.pointer, want.pointer);
    const Json want_fix = want.fix.empty() ? Json::array() : Json::parse(want.fix);
    const Json fix = patch_to_json(finding.fix);
    EXPECT_EQ(fix, want_fix) << fix.dump();
    for (const std::string& part : want.message_parts) {
      EXPECT_THAT(finding.message, ::testing::HasSubstr(part));
    }
    // A finding never offers an empty constraint list, which would bind every device.
    for (const PatchOperation& operation : finding.fix) {
      const Json& value = operation.value;
      for (const Json& constraint : value.is_array() ? value : Json::array({value})) {
        EXPECT_GE(constraint.at("requests").size(), 2u) << operation.path;
      }
    }
    if (finding.fix_enabled) {
      EXPECT_FALSE(finding.fix.empty());
      for (const Json& operation : fix) {
        enabled_fixes.push_back(operation);
      }
    }
  }
  EXPECT_EQ(patch_to_json(evaluation.patch), enabled_fixes);
}

namespace {

bool has_fixable(const Evaluation& evaluation) {
  for (const Finding& finding : evaluation.findings) {
    if (!finding.fix.empty()) {
      return true;
    }
  }
  return false;
}

}  // namespace

void expect_fixes_converge(const Json& object, const Evaluation& evaluation,
                           const policy::PolicySet& policies, const Inventory& inventory) {
  const Evaluation again = evaluate(object, policies, inventory);
  EXPECT_EQ(dump(again), dump(evaluation)) << "evaluate() is not deterministic";
  if (!evaluation.patch.empty()) {
    const Json patched = object.patch(patch_to_json(evaluation.patch));
    const Evaluation after = evaluate(patched, policies, inventory);
    for (const Finding& finding : after.findings) {
      EXPECT_FALSE(finding.fix_enabled) << "after the patch:\n" << dump(after);
    }
  }
  for (const Finding& finding : evaluation.findings) {
    if (finding.fix.empty()) {
      continue;
    }
    const Json fix = patch_to_json(finding.fix);
    const Json patched = object.patch(fix);
    const Evaluation after = evaluate(patched, policies, inventory);
    EXPECT_FALSE(has_fixable(after)) << "after " << fix.dump() << ":\n" << dump(after);
  }
}

}  // namespace topoguard::engine::testing
