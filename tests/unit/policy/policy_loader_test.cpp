#include "topoguard/policy/policy_loader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "note_name.h"
#include "policy_parser.h"
#include "temp_dir.h"
#include "test_paths.h"
#include "topoguard/common/yaml_document.h"
#include "topoguard/policy/policy_json.h"

namespace topoguard::policy {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::string policy_yaml(std::string_view name) {
  return "apiVersion: topoguard.dev/v1alpha1\nkind: AlignmentPolicy\nmetadata:\n  name: " +
         std::string(name) + "\nspec: {}\n";
}

std::string policy_with_spec(std::string_view name, std::string_view spec_body) {
  return "apiVersion: topoguard.dev/v1alpha1\nkind: AlignmentPolicy\nmetadata:\n  name: " +
         std::string(name) + "\nspec:\n" + std::string(spec_body);
}

std::string all_errors(const std::vector<Error>& errors) {
  std::string text;
  for (const Error& error : errors) {
    text += error.to_string() + "\n";
  }
  return text;
}

// A fresh directory under the system temp dir, removed with its contents.
using topoguard::testing::TempDir;

std::vector<std::string> names_of(const PolicySet& set) {
  std::vector<std::string> names;
  for (const Policy& policy : set.policies()) {
    names.push_back(policy.name);
  }
  return names;
}

// The compiled-in text is byte for byte policies/default.yaml.
TEST(BuiltinPolicyTest, TextIsTheSourceFile) {
  std::ifstream file(test::source_dir() + "/policies/default.yaml",
                     std::ios::binary);
  ASSERT_TRUE(file.good());
  std::ostringstream text;
  text << file.rdbuf();
  EXPECT_EQ(builtin_policy_text(), text.str());
}

// The built-in policy parses cleanly and is named default; no --policies means built-in.
TEST(BuiltinPolicyTest, LoadsAsDefault) {
  Result<PolicySet> set = load_builtin_policies();
  ASSERT_TRUE(set) << set.error().to_string();
  ASSERT_EQ(names_of(*set), std::vector<std::string>{"default"});
  const Policy& policy = set->policies()[0];
  EXPECT_EQ(policy.origin.file, std::string(kBuiltinPolicyFile));
  EXPECT_GT(policy.origin.line, 0);
  EXPECT_EQ(policy.alignment_attribute, "resource.kubernetes.io/pcieRoot");
  EXPECT_TRUE(policy.match.kinds.empty());
  EXPECT_FALSE(policy.match.selector.has_value());
  EXPECT_TRUE(policy.exceptions.empty());
  for (RuleId rule : kAllRules) {
    EXPECT_EQ(policy.rule(rule).action, default_rule_settings(rule).action) << rule_name(rule);
    EXPECT_EQ(policy.rule(rule).mutate, default_rule_settings(rule).mutate) << rule_name(rule);
  }

  Result<PolicySet> implicit = load_policies({});
  ASSERT_TRUE(implicit) << implicit.error().to_string();
  EXPECT_EQ(names_of(*implicit), std::vector<std::string>{"default"});
}

enum class Field {
  kGpuClass,
  kGpuDriver,
  kGpuResource,
  kNicClass,
  kNicDriver,
  kNicResource,
  kNumaAttribute,
  kExcludedNamespace,
};

struct RecognitionCase {
  std::string_view note;
  Field field;
  std::string name;
  bool expected;
};

void PrintTo(const RecognitionCase& c, std::ostream* os) { *os << c.note; }

class BuiltinRecognitionTest : public ::testing::TestWithParam<RecognitionCase> {
 protected:
  static const Policy& policy() {
    static const PolicySet set = *load_builtin_policies();
    return set.policies().at(0);
  }
};

// The default policy knows the real class, driver, resource and attribute names of the
// reference (dra-api.md sections 3-5) and of the corpus, and nothing next to them.
TEST_P(BuiltinRecognitionTest, Recognises) {
  const RecognitionCase& c = GetParam();
  const Policy& p = policy();
  const PatternList* list = nullptr;
  switch (c.field) {
    case Field::kGpuClass:
      list = &p.gpu.device_class_names;
      break;
    case Field::kGpuDriver:
      list = &p.gpu.drivers;
      break;
    case Field::kGpuResource:
      list = &p.gpu.extended_resources;
      break;
    case Field::kNicClass:
      list = &p.nic.device_class_names;
      break;
    case Field::kNicDriver:
      list = &p.nic.drivers;
      break;
    case Field::kNicResource:
      list = &p.nic.extended_resources;
      break;
    case Field::kNumaAttribute:
      list = &p.numa_attributes;
      break;
    case Field::kExcludedNamespace:
      list = &p.match.exclude_namespaces;
      break;
  }
  EXPECT_EQ(list->matches_any(c.name), c.expected) << c.name;
}

#define RC(note, field, name, expected) \
  RecognitionCase { note, Field::field, name, expected }

INSTANTIATE_TEST_SUITE_P(
    Gpu, BuiltinRecognitionTest,
    ::testing::Values(
        RC("nvidia_gpu_class", kGpuClass, "gpu.nvidia.com", true),
        RC("nvidia_mig_class", kGpuClass, "mig.nvidia.com", true),
        RC("nvidia_vfio_class", kGpuClass, "vfio.gpu.nvidia.com", true),
        RC("amd_class", kGpuClass, "gpu.amd.com", true),
        RC("intel_class", kGpuClass, "gpu.intel.com", true),
        RC("example_driver_class", kGpuClass, "gpu.example.com", true),
        RC("compute_domain_is_not_gpu", kGpuClass, "compute-domain.nvidia.com", false),
        RC("compute_domain_channel_is_not_gpu", kGpuClass,
           "compute-domain-default-channel.nvidia.com", false),
        RC("dots_are_escaped", kGpuClass, "gpuxnvidia.com", false),
        RC("nic_class_is_not_gpu", kGpuClass, "dra.net", false),
        RC("nvidia_driver", kGpuDriver, "gpu.nvidia.com", true),
        RC("amd_driver", kGpuDriver, "gpu.amd.com", true),
        RC("intel_driver", kGpuDriver, "gpu.intel.com", true),
        RC("example_driver", kGpuDriver, "gpu.example.com", true),
        RC("compute_domain_driver_is_not_gpu", kGpuDriver, "compute-domain.nvidia.com", false),
        RC("nvidia_gpu_resource", kGpuResource, "nvidia.com/gpu", true),
        RC("nvidia_mig_resource", kGpuResource, "nvidia.com/mig-1g.10gb", true),
        RC("amd_gpu_resource", kGpuResource, "amd.com/gpu", true),
        RC("intel_i915_resource", kGpuResource, "gpu.intel.com/i915", true),
        RC("intel_xe_resource", kGpuResource, "gpu.intel.com/xe", true),
        RC("nvidia_rdma_is_not_gpu", kGpuResource, "nvidia.com/rdma_shared", false),
        RC("nvidia_gpu_prefix_only", kGpuResource, "nvidia.com/gpu-extra", false)),
    topoguard::testing::NoteName());

INSTANTIATE_TEST_SUITE_P(
    Nic, BuiltinRecognitionTest,
    ::testing::Values(
        RC("sriov_class", kNicClass, "sriovnetwork.k8snetworkplumbingwg.io", true),
        RC("dranet_dra_net_class", kNicClass, "dra.net", true),
        RC("dranet_class", kNicClass, "dranet", true),
        RC("dranet_net_class", kNicClass, "dranet.net", true),
        RC("multinic_class", kNicClass, "multinic", true),
        RC("aws_efa_class", kNicClass, "efa.networking.k8s.aws", true),
        RC("alibaba_erdma_class", kNicClass, "erdma.alibaba.dra.net", true),
        RC("gke_mrdma_class", kNicClass, "mrdma.google.com", true),
        RC("gke_netdev_is_not_rdma", kNicClass, "netdev.google.com", false),
        RC("gpu_class_is_not_nic", kNicClass, "gpu.nvidia.com", false),
        RC("sriov_driver", kNicDriver, "sriovnetwork.k8snetworkplumbingwg.io", true),
        RC("dranet_driver", kNicDriver, "dra.net", true),
        RC("cpu_driver_is_not_nic", kNicDriver, "dra.cpu", false),
        RC("rdma_shared_plugin", kNicResource, "rdma/hca_shared_devices_a", true),
        RC("rdma_ib_coreweave", kNicResource, "rdma/ib", true),
        RC("mellanox_sriov", kNicResource, "mellanox.com/mlnx_rdma", true),
        RC("intel_sriov_default_prefix", kNicResource, "intel.com/intel_sriov_netdevice", true),
        RC("intel_sriov_dpdk", kNicResource, "intel.com/sriov_dpdk", true),
        RC("intel_qat_is_not_nic", kNicResource, "intel.com/qat", false),
        RC("openshift_sriov", kNicResource, "openshift.io/mlxnics", true),
        RC("nvidia_rdma", kNicResource, "nvidia.com/rdma_shared_device_a", true),
        RC("nvidia_sriov", kNicResource, "nvidia.com/sriov_rdma_vf", true),
        RC("nvidia_hca", kNicResource, "nvidia.com/hca_shared", true),
        RC("nvidia_mlnx", kNicResource, "nvidia.com/mlnx_sriov", true),
        RC("nvidia_gpu_is_not_nic", kNicResource, "nvidia.com/gpu", false),
        RC("aws_efa_resource", kNicResource, "vpc.amazonaws.com/efa", true),
        RC("gke_rdma_network", kNicResource, "networking.gke.io.networks/rdma-0", true),
        RC("gke_rdma_network_ip", kNicResource, "networking.gke.io.networks/rdma-0.IP", true),
        RC("gke_plain_network_is_not_rdma", kNicResource, "networking.gke.io.networks/gvnic-1",
           false)),
    topoguard::testing::NoteName());

INSTANTIATE_TEST_SUITE_P(
    AttributesAndNamespaces, BuiltinRecognitionTest,
    ::testing::Values(
        RC("standard_numa", kNumaAttribute, "resource.kubernetes.io/numaNode", true),
        RC("dranet_numa", kNumaAttribute, "dra.net/numaNode", true),
        RC("nvidia_vfio_numa", kNumaAttribute, "gpu.nvidia.com/numa", true),
        RC("cpu_driver_numa", kNumaAttribute, "dra.cpu/numaNodeID", true),
        RC("amd_bare_numa", kNumaAttribute, "gpu.amd.com/numaNode", true),
        RC("other_driver_numa", kNumaAttribute, "example.com/numaNode", true),
        RC("pcie_root_is_not_numa", kNumaAttribute, "resource.kubernetes.io/pcieRoot", false),
        RC("parent_uuid_is_not_numa", kNumaAttribute, "gpu.nvidia.com/parentUUID", false),
        RC("kube_system_excluded", kExcludedNamespace, "kube-system", true),
        RC("team_namespace_included", kExcludedNamespace, "team-a", false),
        RC("kube_system_prefix_included", kExcludedNamespace, "kube-system-gpu", false)),
    topoguard::testing::NoteName());

#undef RC

// Multi-document streams yield every policy; a broken document does not hide the others.
TEST(ParsePolicyStreamTest, MultiDocumentWithBrokenDocument) {
  PolicyStreamOutcome outcome = parse_policy_stream(
      policy_yaml("a") + "---\nkey: [unclosed\n---\n" + policy_yaml("b"), "multi.yaml");
  EXPECT_EQ(outcome.policies.size(), 2u);
  ASSERT_EQ(outcome.errors.size(), 1u) << all_errors(outcome.errors);
  EXPECT_EQ(outcome.errors[0].code, ErrorCode::kInvalidYaml);
  EXPECT_EQ(outcome.errors[0].location.file, "multi.yaml");
  // yaml-cpp notices the unclosed flow sequence on the line after it (the next "---").
  EXPECT_EQ(outcome.errors[0].location.line, 8);
}

// Errors of later documents carry their own lines in the stream.
TEST(ParsePolicyStreamTest, ErrorLinesAreStreamLines) {
  PolicyStreamOutcome outcome =
      parse_policy_stream(policy_yaml("a") + "---\n" + policy_yaml("b") + "status: {}\n", "m.yaml");
  ASSERT_EQ(outcome.errors.size(), 1u) << all_errors(outcome.errors);
  EXPECT_EQ(outcome.errors[0].location.line, 12);
  EXPECT_EQ(outcome.errors[0].location.field, "/status");
}

// Directories are walked recursively in sorted order, only *.yaml/*.yml/*.json, skipping
// hidden entries (ConfigMap volumes' ..data); explicit files are taken whatever their name.
TEST(LoadPolicyFilesTest, LoadsDirectoryRecursivelyInSortedOrder) {
  TempDir dir;
  dir.write("b.yaml", policy_yaml("b1") + "---\n" + policy_yaml("b2"));
  dir.write("a/z.yml", policy_yaml("az"));
  dir.write("c.json", R"({"apiVersion": "topoguard.dev/v1alpha1", "kind": "AlignmentPolicy",)"
                      R"( "metadata": {"name": "c"}, "spec": {}})");
  dir.write("notes.txt", "not a policy");
  dir.write("..2026_01_01/b.yaml", policy_yaml("b1"));
  dir.write(".hidden.yaml", policy_yaml("hidden"));
  TempDir other;
  const std::string extra = other.write("extra.policy", policy_yaml("extra"));

  Result<PolicySet> set = load_policy_files({dir.path(), extra});
  ASSERT_TRUE(set) << set.error().to_string();
  EXPECT_EQ(names_of(*set), (std::vector<std::string>{"az", "b1", "b2", "c", "extra"}));
  EXPECT_EQ(set->policies()[1].origin.file, dir.path() + "/b.yaml");
  EXPECT_EQ(set->policies()[2].origin.line, 7);
}

// Two policies with one name are an error that names both places.
TEST(LoadPolicyFilesTest, DuplicateNamesAcrossFiles) {
  TempDir dir;
  const std::string first = dir.write("one.yaml", policy_yaml("gpu"));
  const std::string second = dir.write("two.yaml", "# comment\n" + policy_yaml("gpu"));
  Result<PolicySet> set = load_policy_files({dir.path()});
  ASSERT_FALSE(set);
  EXPECT_EQ(set.error().code, ErrorCode::kInvalidValue);
  EXPECT_EQ(set.error().location.file, second);
  EXPECT_EQ(set.error().location.line, 2);
  EXPECT_EQ(set.error().location.field, "/metadata/name");
  EXPECT_THAT(set.error().message, HasSubstr("duplicate policy name \"gpu\""));
  EXPECT_THAT(set.error().message, HasSubstr(first + ":1"));
}

// A failed load reports the first error and how many more lint would list.
TEST(LoadPolicyFilesTest, FailureSummarisesRemainingErrors) {
  TempDir dir;
  dir.write("a.yaml", policy_yaml("a") + "extra: 1\n");
  dir.write("b.yaml", policy_yaml("Bad_Name") + "other: 2\n");
  Result<PolicySet> set = load_policy_files({dir.path()});
  ASSERT_FALSE(set);
  EXPECT_EQ(set.error().code, ErrorCode::kUnknownField);
  EXPECT_EQ(set.error().location.file, dir.path() + "/a.yaml");
  EXPECT_EQ(set.error().location.line, 6);
  EXPECT_THAT(set.error().message,
              HasSubstr("(and 2 more errors; `topoguard policy lint` lists them all)"));
}

struct BadPathCase {
  std::string_view note;
  std::string relative;  // created as an empty directory when it ends with '/'
  ErrorCode code;
  std::string message_part;
};

class BadPathTest : public ::testing::TestWithParam<BadPathCase> {};

// Paths that yield no policies fail the load and make lint report an I/O error.
TEST_P(BadPathTest, FailsLoadAndLint) {
  const BadPathCase& c = GetParam();
  TempDir dir;
  const std::string path = dir.path() + "/" + c.relative;
  if (!c.relative.empty() && c.relative.back() == '/') {
    fs::create_directories(path);
  }
  Result<PolicySet> set = load_policy_files({path});
  ASSERT_FALSE(set);
  EXPECT_EQ(set.error().code, c.code);
  EXPECT_THAT(set.error().message, HasSubstr(c.message_part));
  EXPECT_EQ(set.error().location.file, path);
  const PolicyLintReport report = lint_policy_files({path});
  ASSERT_EQ(report.errors.size(), 1u);
  EXPECT_EQ(report.has_io_error(), c.code == ErrorCode::kIo);
}

INSTANTIATE_TEST_SUITE_P(Paths, BadPathTest,
                         ::testing::Values(BadPathCase{"missing_file", "absent.yaml",
                                                       ErrorCode::kIo, "cannot read"},
                                           BadPathCase{"empty_directory", "empty/", ErrorCode::kIo,
                                                       "no .yaml, .yml or .json files"}),
                         topoguard::testing::NoteName());

// A file with no documents gives an empty set, which is refused: it would disable every rule.
TEST(LoadPolicyFilesTest, FileWithoutPoliciesIsRefused) {
  TempDir dir;
  const std::string file = dir.write("empty.yaml", "# nothing yet\n");
  Result<PolicySet> set = load_policy_files({file});
  ASSERT_FALSE(set);
  EXPECT_EQ(set.error().code, ErrorCode::kInvalidValue);
  EXPECT_THAT(set.error().message, HasSubstr("no AlignmentPolicy documents"));
}

// Lint reads everything and counts files, valid policies and every error of every file.
TEST(LintPolicyFilesTest, ReportsAllErrorsOfAllFiles) {
  TempDir dir;
  dir.write("good.yaml", policy_yaml("good"));
  dir.write("bad.yaml", policy_with_spec("bad",
                                         "  rules:\n    nope: {}\n"
                                         "    split-claims: {mutate: true}\n"));
  dir.write("worse.yaml", "apiVersion: v1\nkind: AlignmentPolicy\n---\n" + policy_yaml("ok2"));
  const PolicyLintReport report = lint_policy_files({dir.path()});
  EXPECT_EQ(report.files, 3u);
  EXPECT_EQ(report.valid_policies, 2u);
  EXPECT_FALSE(report.has_io_error());
  ASSERT_EQ(report.errors.size(), 3u) << all_errors(report.errors);
  EXPECT_EQ(report.errors[0].to_string(),
            dir.path() +
                "/bad.yaml:7: /spec/rules/nope: unknown rule \"nope\"; known rules: "
                "missing-pcie-alignment, numa-only-alignment, device-plugin-pairing, "
                "split-claims, multi-device-alignment, unresolved-claim, "
                "unsatisfiable-alignment, attribute-not-published, "
                "overridden-alignment-attribute [unknown_rule]");
  EXPECT_EQ(report.errors[1].location.line, 8);
  EXPECT_EQ(report.errors[1].location.field, "/spec/rules/split-claims/mutate");
  EXPECT_EQ(report.errors[2].location.file, dir.path() + "/worse.yaml");
  EXPECT_EQ(report.errors[2].location.line, 1);
  EXPECT_EQ(report.errors[2].location.field, "/apiVersion");
}

// Lint warns, without failing, about valid policies that can match nothing or that change
// nothing relative to the built-in policy; an ordinary policy gets no warning.
TEST(LintPolicyFilesTest, WarnsAboutPoliciesThatMatchNothingOrChangeNothing) {
  TempDir dir;
  std::string copy(builtin_policy_text());
  copy.replace(copy.find("name: default"), std::string("name: default").size(), "name: copy");
  dir.write("copy.yaml", copy);
  dir.write("no-gpu.yaml", policy_with_spec("no-gpu", "  devices:\n    gpu: {}\n"));
  std::string all_off = "  rules:\n";
  for (RuleId rule : kAllRules) {
    all_off += "    " + std::string(rule_name(rule)) + ": {action: off}\n";
  }
  dir.write("all-off.yaml", policy_with_spec("all-off", all_off));
  dir.write("nowhere.yaml",
            policy_with_spec("nowhere", "  match:\n    namespaces: {include: [prod, 'team\\.a'], "
                                        "exclude: ['prod|team\\..*']}\n"));
  dir.write("waived.yaml", policy_with_spec("waived", "  exceptions:\n  - {name: all, reason: "
                                                      "\"everything\", match: {}}\n"));
  dir.write("selector.yaml",
            policy_with_spec("selector", "  match:\n    selector:\n      matchLabels: {a: b}\n"
                                         "      matchExpressions: [{key: a, operator: "
                                         "DoesNotExist}]\n"));
  dir.write("fine.yaml", policy_with_spec("fine", "  rules:\n    split-claims: {action: warn}\n"));
  dir.write("impossible-off.yaml",
            policy_with_spec("impossible-off", "  rules:\n    numa-only-alignment: {action: off, "
                                               "whenAlignmentImpossible: warn}\n"));
  dir.write("impossible-same.yaml",
            policy_with_spec("impossible-same", "  rules:\n    numa-only-alignment: {action: "
                                                "deny, whenAlignmentImpossible: deny}\n"));
  dir.write("impossible-warn.yaml",
            policy_with_spec("impossible-warn", "  rules:\n    numa-only-alignment: {action: "
                                                "deny, whenAlignmentImpossible: warn}\n"));
  const PolicyLintReport report = lint_policy_files({dir.path()});
  EXPECT_TRUE(report.errors.empty()) << all_errors(report.errors);
  EXPECT_EQ(report.valid_policies, 10u);
  ASSERT_EQ(report.warnings.size(), 8u) << all_errors(report.warnings);
  const std::string text = all_errors(report.warnings);
  EXPECT_THAT(text, HasSubstr("impossible-off.yaml:1: /spec/rules/numa-only-alignment/"
                              "whenAlignmentImpossible: policy \"impossible-off\" sets "
                              "whenAlignmentImpossible on numa-only-alignment, which is off"));
  EXPECT_THAT(text, HasSubstr("policy \"impossible-same\" sets whenAlignmentImpossible to the "
                              "rule's own action, which changes nothing"));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("\"impossible-warn\"")));
  EXPECT_THAT(text, HasSubstr("all-off.yaml:1: /spec/rules: policy \"all-off\" can match "
                              "nothing: every rule is off"));
  EXPECT_THAT(text, HasSubstr("policy \"copy\" changes nothing relative to the built-in policy"));
  EXPECT_THAT(text, HasSubstr("/spec/devices/gpu: policy \"no-gpu\" can match nothing: "
                              "devices.gpu recognises no device"));
  EXPECT_THAT(text, HasSubstr("policy \"nowhere\" can match nothing: every namespace"));
  EXPECT_THAT(text, HasSubstr("policy \"selector\" can match nothing: its match.selector"));
  EXPECT_THAT(text, HasSubstr("exception \"all\" waives every rule for every object"));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("\"fine\"")));
}

// show --effective prints a document that parses back into the same policy.
TEST(PolicyJsonTest, EffectivePolicyParsesBackUnchanged) {
  TempDir dir;
  const std::string file = dir.write(
      "p.yaml", policy_with_spec("p", "  match: {kinds: [Deployment], selector: {matchExpressions:"
                                      " [{key: a, operator: In, values: [x]}]}}\n  rules:\n"
                                      "    split-claims: {action: warn}\n    numa-only-alignment: "
                                      "{action: deny, whenAlignmentImpossible: warn}\n"
                                      "  exceptions:\n  - {name: "
                                      "e, reason: r, rules: [split-claims], match: {names: [x]}}\n"));
  Result<PolicySet> loaded = load_policy_files({file});
  ASSERT_TRUE(loaded) << loaded.error().to_string();
  const Json written = policy_to_json(loaded->policies()[0]);
  EXPECT_EQ(written["spec"]["rules"]["numa-only-alignment"]["whenAlignmentImpossible"], "warn");
  const std::string again = dir.write("again.yaml", to_yaml(written));
  Result<PolicySet> reloaded = load_policy_files({again});
  ASSERT_TRUE(reloaded) << reloaded.error().to_string();
  EXPECT_EQ(policy_to_json(reloaded->policies()[0]), written);
  EXPECT_TRUE(reloaded->policies()[0].inherited.empty());
  EXPECT_EQ(policy_to_json(builtin_policy())["spec"]["match"],
            Json::parse(R"({"namespaces": {"exclude": ["kube-system"]}})"));
}

}  // namespace
}  // namespace topoguard::policy

namespace topoguard::policy {
namespace {

// A policy folder may hold its tests and their manifests: those documents are skipped and
// listed, while a policy with a typo in its kind or apiVersion stays an error.
TEST(LoadPolicyFilesTest, SkipsTestsAndManifestsBesideThePolicies) {
  TempDir dir;
  dir.write("policy.yaml", policy_yaml("team"));
  dir.write("tests/suite.yaml",
            "apiVersion: topoguard.dev/v1alpha1\nkind: AlignmentPolicyTest\nmetadata: {name: t}\n");
  dir.write("tests/manifests/claims.yaml",
            "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: a}\n"
            "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: b}\n");
  std::vector<SkippedDocument> skipped;
  Result<PolicySet> set = load_policy_files({dir.path()}, &skipped);
  ASSERT_TRUE(set) << set.error().to_string();
  EXPECT_EQ(names_of(*set), std::vector<std::string>{"team"});
  ASSERT_EQ(skipped.size(), 3u);
  EXPECT_EQ(skipped[0].where.file, dir.path() + "/tests/manifests/claims.yaml");
  EXPECT_EQ(skipped[1].where.line, 5);
  EXPECT_EQ(skipped_documents_text(skipped),
            "skipped 3 documents that are not policies in 2 files (AlignmentPolicyTest 1, "
            "Deployment 1, ResourceClaimTemplate 1)");
  EXPECT_EQ(skipped_documents_text({}), "");

  for (const std::string& typo :
       {std::string("apiVersion: topoguard.dev/v1alpha1\nkind: AlignmentPolcy\n"),
        std::string("apiVersion: topoguard.dev/v1alpha2\nkind: AlignmentPolicy\n"),
        std::string("kind: AlignmentPolicy\n"), std::string()}) {
    const std::string file = dir.write("typo.yaml", typo + "metadata: {name: typo}\nspec: {}\n");
    EXPECT_FALSE(load_policy_files({file})) << typo;
  }
}

}  // namespace
}  // namespace topoguard::policy
