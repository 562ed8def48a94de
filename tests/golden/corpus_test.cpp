// Every file of ../shared/corpus (real public manifests) audited together with the built-in
// policy, as `topoguard audit ../shared/corpus` does, with the verdict of each resource
// asserted; plus the llm-d CoreWeave overlay and device-plugin combinations built from corpus
// files in the test. The corpus is read-only.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <tuple>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "topoguard/audit/audit_runner.h"
#include "topoguard/audit/manifest_reader.h"
#include "topoguard/common/yaml_document.h"
#include "topoguard/engine/evaluate.h"
#include "topoguard/engine/inventory.h"
#include "topoguard/policy/policy_loader.h"
#include "test_paths.h"

namespace topoguard::corpus {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

const std::string kCorpus = test::corpus_dir();

const policy::PolicySet& builtin() {
  static const policy::PolicySet set = [] {
    auto loaded = policy::load_builtin_policies();
    EXPECT_TRUE(loaded) << loaded.error().to_string();
    return loaded ? *loaded : policy::PolicySet();
  }();
  return set;
}

std::string read_text(const std::string& relative) {
  std::ifstream in(kCorpus + "/" + relative, std::ios::binary);
  EXPECT_TRUE(in) << relative;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<Json> documents(const std::string& relative) {
  YamlStream stream = parse_yaml_stream(read_text(relative), relative);
  EXPECT_TRUE(stream.errors.empty()) << relative;
  std::vector<Json> values;
  for (YamlDocument& document : stream.documents) {
    values.push_back(std::move(document.value));
  }
  return values;
}

// (file relative to the corpus, Kind, name, rule, has fix)
using Verdict = std::tuple<std::string, std::string, std::string, std::string, bool>;

struct CorpusAudit {
  audit::ManifestSet set;
  audit::AuditRun run;
  std::set<Verdict> verdicts;
};

const CorpusAudit& corpus_audit() {
  static const CorpusAudit* audited = [] {
    auto* result = new CorpusAudit;
    std::istringstream no_input;
    result->set = audit::read_manifests({kCorpus}, no_input);
    result->run = audit::run_audit(result->set, builtin());
    for (const audit::ReportedFinding& reported : result->run.report.findings) {
      result->verdicts.insert(Verdict{fs::relative(reported.file, kCorpus).string(),
                                      reported.finding.resource.kind,
                                      reported.finding.resource.name,
                                      std::string(policy::rule_name(reported.finding.rule)),
                                      !reported.finding.fix.empty()});
    }
    return result;
  }();
  return *audited;
}

std::string describe(const std::set<Verdict>& verdicts) {
  std::string text;
  for (const auto& [file, kind, name, rule, fix] : verdicts) {
    text += file + " " + kind + "/" + name + " " + rule + (fix ? " (fix)" : "") + "\n";
  }
  return text;
}

const std::string kGpuEfa = "dranet/examples/aws_eks_examples/gpu-efa/";
const std::string kGb300 = "dranet/examples/azure_aks_examples/gb300/resource-claim-template.yaml";
const std::string kNixl = "dranet/examples/nixl-kv-transfer/";
const std::string kTraining = "dranet/examples/distributed_training/resource-claim-template.yaml";

// The whole corpus parses (YAML and the JSON fixture) without errors, and every finding is one
// of these; every other resource is clean. Notable clean ones: gpu-efa-aligned and mpi-job
// (which references it), GB300 ib-same-fabric (NIC only), dra-driver-sriov resource-alignment
// (constraint without requests) and its pods, the llm-d base manifests (GPU only), the
// sriov-network-device-plugin and rdma-shared-dev-plugin pods (NIC only), the NVIDIA GPU demos.
TEST(CorpusTest, EveryResourceHasItsVerdict) {
  const CorpusAudit& audited = corpus_audit();
  // The only input errors: the placeholder names of the kubernetes/api round-trip fixtures
  // ("nameValue", "namespaceValue"), which the API server refuses.
  for (const Error& error : audited.run.report.errors) {
    EXPECT_THAT(error.location.file, HasSubstr("/kubernetes-api/testdata/")) << error.to_string();
    EXPECT_THAT(error.message, HasSubstr("Value\": a lowercase RFC 1123")) << error.to_string();
  }
  const std::set<Verdict> expected{
      {kGpuEfa + "resource-claim-template.yaml", "ResourceClaimTemplate", "gpu-efa-unaligned",
       "missing-pcie-alignment", true},
      {kGb300, "ResourceClaimTemplate", "1nic-aligned", "missing-pcie-alignment", true},
      {kGb300, "ResourceClaimTemplate", "1nic-unaligned", "missing-pcie-alignment", true},
      // Requests of several devices: no automatic fix (one constraint would need every device
      // on one root); the message says to split them into one-device pairs.
      {kGb300, "ResourceClaimTemplate", "2nic-aligned", "numa-only-alignment", false},
      {"dranet/examples/demo_nvidia_dranet/resourceclaims.yaml", "ResourceClaimTemplate",
       "2-gpu-nic-aligned", "multi-device-alignment", false},
      {kTraining, "ResourceClaimTemplate", "h100-4gpu-4nic-numa-aligned", "numa-only-alignment",
       false},
      {kTraining, "ResourceClaimTemplate", "h100-4gpu-4nic-numa-unaligned",
       "numa-only-alignment", false},
      {kNixl + "resource-claim-template-aligned.yaml", "ResourceClaimTemplate",
       "h100-4gpu-4nic-numa-aligned", "numa-only-alignment", false},
      {kNixl + "resource-claim-template-unaligned.yaml", "ResourceClaimTemplate",
       "h100-4gpu-4nic-numa-unaligned", "numa-only-alignment", false},
      // Inherited from the template it references: no fix on the Pod.
      {kNixl + "nixl-kv-initiator.yaml", "Pod", "nixl-kv-initiator", "numa-only-alignment",
       false},
      // Generated API fixture: its placeholder template is not in the input.
      {"kubernetes-api/testdata/HEAD/core.v1.Pod.yaml", "Pod", "nameValue", "unresolved-claim",
       false},
      // The website's Job references a ResourceClaim that the example does not ship.
      {"kubernetes-website/content/en/examples/dra/dra-example-job.yaml", "Job",
       "example-dra-job", "unresolved-claim", false},
  };
  EXPECT_EQ(describe(audited.verdicts), describe(expected));
  EXPECT_EQ(audited.run.report.summary.deny, 9u);
  EXPECT_EQ(audited.run.report.summary.warn, 1u);
  EXPECT_EQ(audited.run.report.summary.audit, 2u);
}

// The fixes are the documented shapes: dranet's gpu-efa-unaligned gets one constraint naming
// its two requests, added as the whole array at the template path.
TEST(CorpusTest, GpuEfaUnalignedFix) {
  for (const audit::ReportedFinding& reported : corpus_audit().run.report.findings) {
    if (reported.finding.resource.name != "gpu-efa-unaligned") {
      continue;
    }
    EXPECT_EQ(reported.finding.pointer, "/spec/spec/devices");
    EXPECT_EQ(engine::patch_to_json(reported.finding.fix), Json::parse(R"([{"op":"add",
        "path":"/spec/spec/devices/constraints","value":[{"requests":["gpu","efa"],
        "matchAttribute":"resource.kubernetes.io/pcieRoot"}]}])"));
    EXPECT_TRUE(reported.finding.fix_enabled);
    return;
  }
  ADD_FAILURE() << "no finding on gpu-efa-unaligned";
}

// Applying every enabled fix of the corpus and re-auditing leaves no fixable finding.
TEST(CorpusTest, FixesReauditClean) {
  const CorpusAudit& audited = corpus_audit();
  for (const audit::ManifestEvaluation& evaluated : audited.run.evaluations) {
    if (evaluated.evaluation.patch.empty()) {
      continue;
    }
    const Json patched = evaluated.manifest->object->patch(engine::patch_to_json(evaluated.evaluation.patch));
    engine::Inventory inventory(engine::Inventory::Claims::kKnown);
    const engine::Evaluation after = engine::evaluate(patched, builtin(), inventory);
    for (const engine::Finding& finding : after.findings) {
      EXPECT_TRUE(finding.fix.empty()) << finding.resource.name << ": " << finding.message;
    }
  }
}

// The kubernetes/api round-trip fixtures (every field set, mutually exclusive ones together)
// are evaluated without errors or crashes; only the Pod yields a finding (asserted above).
TEST(CorpusTest, KubernetesApiFixturesParse) {
  const CorpusAudit& audited = corpus_audit();
  std::size_t fixtures = 0;
  for (const audit::Manifest& manifest : audited.set.manifests) {
    if (audited.set.path_of(manifest).find("/kubernetes-api/") != std::string::npos) {
      ++fixtures;
    }
  }
  EXPECT_EQ(fixtures, 9u);
}

// llm-d CoreWeave overlay: its JSON6902 patches add rdma/ib next to nvidia.com/gpu in both
// roles of the DisaggregatedSet, which is device-plugin pairing in each role.
TEST(CorpusTest, LlmdCoreweaveOverlayIsDevicePluginPairing) {
  const std::string guide = "llm-d/guides/pd-disaggregation/modelserver/gpu/vllm/";
  Json object = documents(guide + "base/disaggregatedset.yaml").at(0);
  const engine::Inventory empty;
  EXPECT_TRUE(engine::evaluate(object, builtin(), empty).findings.empty());
  const Json kustomization = documents(guide + "coreweave/kustomization.yaml").at(0);
  std::size_t applied = 0;
  for (const Json& entry : kustomization.at("patches")) {
    ASSERT_EQ(entry.at("target").at("kind"), "DisaggregatedSet");
    YamlStream stream = parse_yaml_stream(entry.at("patch").get<std::string>(), "patch");
    ASSERT_TRUE(stream.errors.empty());
    ASSERT_EQ(stream.documents.size(), 1u);
    object = object.patch(stream.documents[0].value);
    ++applied;
  }
  EXPECT_EQ(applied, 2u);
  const engine::Evaluation evaluation = engine::evaluate(object, builtin(), empty);
  ASSERT_EQ(evaluation.findings.size(), 2u);
  const std::string worker = "/spec/leaderWorkerTemplate/workerTemplate/spec/containers/0/";
  for (std::size_t role = 0; role < 2; ++role) {
    const engine::Finding& finding = evaluation.findings[role];
    EXPECT_EQ(finding.rule, policy::RuleId::kDevicePluginPairing);
    EXPECT_EQ(finding.action, policy::Action::kWarn);
    EXPECT_EQ(finding.pointer,
              "/spec/roles/" + std::to_string(role) + worker + "resources/limits/rdma~1ib");
    EXPECT_THAT(finding.message, HasSubstr("nvidia.com/gpu"));
    EXPECT_THAT(finding.message, HasSubstr("rdma/ib"));
    EXPECT_TRUE(finding.fix.empty());
  }
}

// The SR-IOV RDMA pod with a GPU limit added: paired through its NIC resource, and through the
// Multus network (whose NetworkAttachmentDefinition names mellanox.com/mlnx_rdma) alone.
TEST(CorpusTest, SriovRdmaPodWithGpuIsDevicePluginPairing) {
  const Json nad = documents("sriov-network-device-plugin/docs/rdma/crd-rdma-mlnx.yaml").at(0);
  engine::Inventory inventory(engine::Inventory::Claims::kKnown);
  ASSERT_TRUE(inventory.add(nad));
  Json pod = documents("sriov-network-device-plugin/docs/rdma/pod_mlx_rdma_test.yaml").at(0);
  EXPECT_TRUE(engine::evaluate(pod, builtin(), inventory).findings.empty());
  pod["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = 1;
  engine::Evaluation evaluation = engine::evaluate(pod, builtin(), inventory);
  ASSERT_EQ(evaluation.findings.size(), 1u);
  EXPECT_EQ(evaluation.findings[0].rule, policy::RuleId::kDevicePluginPairing);
  EXPECT_EQ(evaluation.findings[0].pointer,
            "/spec/containers/0/resources/limits/mellanox.com~1mlnx_rdma");

  // Without its own NIC resource, the Multus network still brings the NIC.
  pod["spec"]["containers"][0]["resources"]["limits"].erase("mellanox.com/mlnx_rdma");
  pod["spec"]["containers"][0]["resources"]["requests"].erase("mellanox.com/mlnx_rdma");
  evaluation = engine::evaluate(pod, builtin(), inventory);
  ASSERT_EQ(evaluation.findings.size(), 1u);
  EXPECT_EQ(evaluation.findings[0].rule, policy::RuleId::kDevicePluginPairing);
  EXPECT_EQ(evaluation.findings[0].pointer, "/metadata/annotations/k8s.v1.cni.cncf.io~1networks");
  EXPECT_THAT(evaluation.findings[0].message,
              HasSubstr(R"(Multus network "sriov-rdma-mlnx" (resource mellanox.com/mlnx_rdma))"));
}

// dra-driver-sriov's extended-resource pods (VFs as DRA extended resources of its
// DeviceClasses) with an nvidia.com/gpu limit added: device-plugin pairing.
TEST(CorpusTest, DraExtendedResourcePodWithGpuIsDevicePluginPairing) {
  const std::vector<Json> classes =
      documents("dra-driver-sriov/demo/extended-resource/deviceclass.yaml");
  engine::Inventory inventory(engine::Inventory::Claims::kKnown);
  std::size_t indexed = 0;
  for (const Json& object : classes) {
    indexed += inventory.add(object) ? 1 : 0;
  }
  EXPECT_EQ(indexed, 4u);  // two DeviceClasses and two NetworkAttachmentDefinitions
  ASSERT_NE(inventory.device_class_for_resource("example.com/sriov-port1"), nullptr);
  std::vector<Json> pods =
      documents("dra-driver-sriov/demo/extended-resource/pod-extended-resource.yaml");
  ASSERT_FALSE(pods.empty());
  for (Json& pod : pods) {
    if (string_member(pod, "kind") != "Pod") {
      continue;
    }
    EXPECT_TRUE(engine::evaluate(pod, builtin(), inventory).findings.empty());
    pod["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = "1";
    const engine::Evaluation evaluation = engine::evaluate(pod, builtin(), inventory);
    ASSERT_EQ(evaluation.findings.size(), 1u) << pod.dump();
    EXPECT_EQ(evaluation.findings[0].rule, policy::RuleId::kDevicePluginPairing);
    EXPECT_EQ(evaluation.findings[0].pointer,
              "/spec/containers/0/resources/limits/example.com~1sriov-port1");
    EXPECT_THAT(evaluation.findings[0].message,
                HasSubstr("NIC from extended resource example.com/sriov-port1"));
  }
}

// Everything an evaluation says, as text, to compare two evaluations.
std::string describe(const engine::Evaluation& evaluation) {
  std::ostringstream text;
  for (const std::vector<engine::Finding>* list : {&evaluation.findings, &evaluation.exempted}) {
    for (const engine::Finding& finding : *list) {
      text << finding.policy << " | " << policy::rule_name(finding.rule) << " | "
           << policy::action_name(finding.action) << " | " << finding.pointer << " | "
           << finding.message << " | " << engine::patch_to_json(finding.fix).dump() << " | " << finding.fix_enabled
           << " | " << finding.exception << "\n";
    }
    text << "--\n";
  }
  for (const engine::CheckedRule& checked : evaluation.checked) {
    text << checked.policy << ':' << policy::rule_name(checked.rule) << ' ';
  }
  text << '\n' << engine::patch_to_json(evaluation.patch).dump() << '\n';
  for (const Error& error : evaluation.errors) {
    text << error.to_string() << '\n';
  }
  return text.str();
}

// One Evaluator kept across every corpus object, forwards and then backwards (as an audit run
// and a webhook thread keep one), says about each exactly what a fresh evaluation says.
TEST(CorpusTest, KeptEvaluatorAnswersAsFreshEvaluations) {
  const CorpusAudit& audited = corpus_audit();
  engine::Inventory inventory(engine::Inventory::Claims::kKnown);
  std::vector<const Json*> objects;
  for (const audit::Manifest& manifest : audited.set.manifests) {
    inventory.add(*manifest.object);
    if (engine::is_evaluated_kind(*manifest.object)) {
      objects.push_back(manifest.object);
    }
  }
  ASSERT_GT(objects.size(), 20U);
  engine::Evaluator kept(builtin(), inventory);
  std::size_t with_findings = 0;
  for (int pass = 0; pass < 2; ++pass) {
    for (const Json* object : objects) {
      const engine::Evaluation fresh = engine::evaluate(*object, builtin(), inventory);
      with_findings += fresh.findings.empty() ? 0 : 1;
      EXPECT_EQ(describe(kept.evaluate(*object)), describe(fresh))
          << object->dump().substr(0, 300);
    }
    std::reverse(objects.begin(), objects.end());
  }
  EXPECT_GT(with_findings, 10U);  // the comparison covers verdicts, not only clean objects
  EXPECT_GT(kept.remembered(), 0U);
}

}  // namespace
}  // namespace topoguard::corpus
