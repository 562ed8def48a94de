#include "topoguard/k8s/pod_template.h"

#include <gtest/gtest.h>

#include <set>
#include <utility>

#include "note_name.h"

#include "topoguard/common/yaml_document.h"

namespace topoguard::k8s {
namespace {

struct TemplateCase {
  std::string_view note;
  std::string yaml;
  std::vector<std::string> expected_specs;
};

class LocatePodTemplatesTest : public ::testing::TestWithParam<TemplateCase> {};

// The one kinds table finds every pod template of every supported workload kind.
TEST_P(LocatePodTemplatesTest, FindsSpecs) {
  const TemplateCase& c = GetParam();
  YamlStream stream = parse_yaml_stream(c.yaml, "t.yaml");
  ASSERT_TRUE(stream.errors.empty());
  std::vector<std::string> specs;
  for (const auto& location : locate_pod_templates(stream.documents.at(0).value)) {
    specs.push_back(location.spec_pointer);
  }
  EXPECT_EQ(specs, c.expected_specs);
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, LocatePodTemplatesTest,
    ::testing::Values(
        TemplateCase{"pod", "apiVersion: v1\nkind: Pod\nspec: {containers: []}", {"/spec"}},
        // A PodGroup's spec holds the claims its pods share (DRAWorkloadResourceClaims).
        TemplateCase{"podgroup",
                     "apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\n"
                     "spec: {resourceClaims: [{name: a, resourceClaimTemplateName: t}]}",
                     {"/spec"}},
        TemplateCase{"deployment",
                     "apiVersion: apps/v1\nkind: Deployment\nspec: {template: {spec: {}}}",
                     {"/spec/template/spec"}},
        TemplateCase{"statefulset",
                     "apiVersion: apps/v1\nkind: StatefulSet\nspec: {template: {spec: {}}}",
                     {"/spec/template/spec"}},
        TemplateCase{"daemonset",
                     "apiVersion: apps/v1\nkind: DaemonSet\nspec: {template: {spec: {}}}",
                     {"/spec/template/spec"}},
        TemplateCase{"replicaset",
                     "apiVersion: apps/v1\nkind: ReplicaSet\nspec: {template: {spec: {}}}",
                     {"/spec/template/spec"}},
        TemplateCase{"job", "apiVersion: batch/v1\nkind: Job\nspec: {template: {spec: {}}}",
                     {"/spec/template/spec"}},
        TemplateCase{"cronjob",
                     "apiVersion: batch/v1\nkind: CronJob\nspec: {jobTemplate: {spec: "
                     "{template: {spec: {}}}}}",
                     {"/spec/jobTemplate/spec/template/spec"}},
        TemplateCase{"replicationcontroller",
                     "apiVersion: v1\nkind: ReplicationController\nspec: {template: {spec: {}}}",
                     {"/spec/template/spec"}},
        TemplateCase{"leaderworkerset",
                     "apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nspec: "
                     "{leaderWorkerTemplate: {leaderTemplate: {spec: {}}, workerTemplate: "
                     "{spec: {}}}}",
                     {"/spec/leaderWorkerTemplate/leaderTemplate/spec",
                      "/spec/leaderWorkerTemplate/workerTemplate/spec"}},
        TemplateCase{"disaggregatedset",
                     "apiVersion: disaggregatedset.x-k8s.io/v1\nkind: DisaggregatedSet\nspec: "
                     "{roles: [{spec: {leaderWorkerTemplate: {workerTemplate: {spec: {}}}}}, "
                     "{spec: {leaderWorkerTemplate: {leaderTemplate: {spec: {}}, "
                     "workerTemplate: {spec: {}}}}}]}",
                     {"/spec/roles/1/spec/leaderWorkerTemplate/leaderTemplate/spec",
                      "/spec/roles/0/spec/leaderWorkerTemplate/workerTemplate/spec",
                      "/spec/roles/1/spec/leaderWorkerTemplate/workerTemplate/spec"}},
        TemplateCase{"mpijob",
                     "apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\nspec: {mpiReplicaSpecs: "
                     "{Launcher: {template: {spec: {}}}, Worker: {template: {spec: {}}}}}",
                     {"/spec/mpiReplicaSpecs/Launcher/template/spec",
                      "/spec/mpiReplicaSpecs/Worker/template/spec"}},
        TemplateCase{"wrong_group", "apiVersion: example.com/v1\nkind: Deployment\nspec: "
                                    "{template: {spec: {}}}",
                     {}},
        TemplateCase{"missing_template", "apiVersion: apps/v1\nkind: Deployment\nspec: {}", {}},
        TemplateCase{"template_is_scalar",
                     "apiVersion: apps/v1\nkind: Deployment\nspec: {template: 3}", {}}),
    topoguard::testing::NoteName());

// workload_kinds() lists the table's rows, each a workload kind, Pod first, each (group, kind)
// once: what `audit --cluster` lists and discovery resolves.
TEST(WorkloadKindsTest, ListsEveryRowOnce) {
  const std::vector<WorkloadKindName> kinds = workload_kinds();
  ASSERT_FALSE(kinds.empty());
  EXPECT_EQ(kinds.front().group, "");
  EXPECT_EQ(kinds.front().kind, "Pod");
  std::set<std::pair<std::string_view, std::string_view>> seen;
  for (const WorkloadKindName& kind : kinds) {
    EXPECT_TRUE(is_workload_kind(kind.group, kind.kind)) << kind.kind;
    EXPECT_TRUE(seen.emplace(kind.group, kind.kind).second) << kind.kind;
  }
  EXPECT_TRUE(seen.contains({"batch", "CronJob"}));
  EXPECT_TRUE(seen.contains({"apps", "Deployment"}));
}

}  // namespace
}  // namespace topoguard::k8s
