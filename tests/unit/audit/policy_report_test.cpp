// The OpenReports and wg-policy PolicyReport writers: one report per namespace, a cluster report
// for cluster-scoped objects and input errors, passes for checked rules without findings.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "audit_test_support.h"

namespace topoguard::audit {
namespace {

SortedJson reports_of(ReportFormat format, const AuditReport& report) {
  return SortedJson::parse(testing::render(format, report));
}

// The template (namespace ml) and the pod (default) each get their namespace's report, scoped
// to the Namespace; every checked rule is a result: fail for deny, warn for warn, pass else.
TEST(PolicyReportTest, OneReportPerNamespaceWithPasses) {
  const SortedJson list = reports_of(ReportFormat::kPolicyReport, testing::sample_report());
  EXPECT_EQ(list.at("apiVersion"), "v1");
  EXPECT_EQ(list.at("kind"), "List");
  const SortedJson& items = list.at("items");
  ASSERT_EQ(items.size(), 2u);
  const SortedJson& fallback = items.at(0);  // namespaces in sorted order
  EXPECT_EQ(fallback.at("apiVersion"), "wgpolicyk8s.io/v1alpha2");
  EXPECT_EQ(fallback.at("kind"), "PolicyReport");
  EXPECT_EQ(fallback.at("metadata").at("namespace"), "default");
  EXPECT_EQ(fallback.at("scope"),
            (SortedJson{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"name", "default"}}));
  EXPECT_FALSE(fallback.contains("source"));  // v1alpha2 has no report-level source
  EXPECT_EQ(fallback.at("summary"),
            (SortedJson{{"pass", 4}, {"fail", 0}, {"warn", 1}, {"error", 0}, {"skip", 0}}));

  const SortedJson& ml = items.at(1);
  EXPECT_EQ(ml.at("metadata").at("namespace"), "ml");
  EXPECT_EQ(ml.at("summary"),
            (SortedJson{{"pass", 3}, {"fail", 1}, {"warn", 0}, {"error", 0}, {"skip", 0}}));
  const SortedJson& fail = ml.at("results").at(0);
  EXPECT_EQ(fail.at("policy"), "default");
  EXPECT_EQ(fail.at("rule"), "missing-pcie-alignment");
  EXPECT_EQ(fail.at("result"), "fail");
  EXPECT_EQ(fail.at("severity"), "high");
  EXPECT_EQ(fail.at("source"), "topoguard");
  EXPECT_EQ(fail.at("resources"), (SortedJson::array({{{"apiVersion", "resource.k8s.io/v1"},
                                                            {"kind", "ResourceClaimTemplate"},
                                                            {"namespace", "ml"},
                                                            {"name", "gpu-nic"}}})));
  EXPECT_EQ(fail.at("properties").at("file"), "in.yaml");
  EXPECT_EQ(fail.at("properties").at("line"), "9");
  EXPECT_EQ(fail.at("properties").at("path"), "/spec/spec/devices");
  EXPECT_TRUE(fail.at("properties").contains("jsonPatch"));
  const SortedJson& pass = ml.at("results").at(1);
  EXPECT_EQ(pass.at("rule"), "numa-only-alignment");
  EXPECT_EQ(pass.at("result"), "pass");
  EXPECT_EQ(pass.at("message"), "no numa-only-alignment finding");
}

// A finding an exception waives is a `skip` result (not a pass) naming the exception, in both
// APIs.
TEST(PolicyReportTest, ExemptedFindingIsSkipWithTheException) {
  for (const ReportFormat format : {ReportFormat::kPolicyReport, ReportFormat::kOpenReports}) {
    const SortedJson ml =
        reports_of(format, testing::exempted_sample_report()).at("items").at(1);
    EXPECT_EQ(ml.at("summary"),
              (SortedJson{{"pass", 3}, {"fail", 0}, {"warn", 0}, {"error", 0}, {"skip", 1}}));
    const SortedJson& skip = ml.at("results").at(0);
    EXPECT_EQ(skip.at("rule"), "missing-pcie-alignment");
    EXPECT_EQ(skip.at("result"), "skip");
    EXPECT_THAT(skip.at("message").get<std::string>(), ::testing::StartsWith("GPU request"));
    EXPECT_EQ(skip.at("properties").at("exception"), "team-a-legacy");
    EXPECT_EQ(skip.at("properties").at("exceptionReason"), "validated by hand (TICKET-42)");
    EXPECT_EQ(skip.at("properties").at("action"), "deny");
    EXPECT_EQ(skip.at("properties").at("line"), "9");
  }
}

// OpenReports: same results, its own API names and a report-level source.
TEST(PolicyReportTest, OpenReportsNamesAndSource) {
  const SortedJson items =
      reports_of(ReportFormat::kOpenReports, testing::sample_report()).at("items");
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items.at(0).at("apiVersion"), "openreports.io/v1alpha1");
  EXPECT_EQ(items.at(0).at("kind"), "Report");
  EXPECT_EQ(items.at(0).at("source"), "topoguard");
  EXPECT_EQ(items.at(1).at("results"),
            reports_of(ReportFormat::kPolicyReport, testing::sample_report())
                .at("items").at(1).at("results"));
}

// Cluster-scoped objects and input errors go to the one cluster report, which has no
// namespace and no scope; an input error is an `error` result naming file and line.
TEST(PolicyReportTest, ClusterReportForClusterObjectsAndErrors) {
  const ManifestSet set = parse_manifests(
      {{"cluster.yaml", R"(apiVersion: resource.k8s.io/v1
kind: ClusterResourceClaimTemplate
metadata: {name: shared}
spec:
  spec:
    devices:
      requests:
      - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}
      - {name: nic, exactly: {deviceClassName: dranet}}
)"},
       {"bad.yaml", "kind: [\n"}});
  const SortedJson items =
      reports_of(ReportFormat::kOpenReports, run_audit(set, testing::builtin_policies()).report)
          .at("items");
  ASSERT_EQ(items.size(), 1u);
  const SortedJson& cluster = items.at(0);
  EXPECT_EQ(cluster.at("kind"), "ClusterReport");
  EXPECT_FALSE(cluster.at("metadata").contains("namespace"));
  EXPECT_FALSE(cluster.contains("scope"));
  EXPECT_EQ(cluster.at("summary").at("fail"), 1);
  EXPECT_EQ(cluster.at("summary").at("error"), 1);
  EXPECT_EQ(cluster.at("results").at(0).at("resources").at(0),
            (SortedJson{{"apiVersion", "resource.k8s.io/v1"},
                            {"kind", "ClusterResourceClaimTemplate"},
                            {"name", "shared"}}));
  const SortedJson& error = cluster.at("results").back();
  EXPECT_EQ(error.at("result"), "error");
  EXPECT_EQ(error.at("properties").at("file"), "bad.yaml");
  EXPECT_EQ(error.at("properties").at("code"), "invalid_yaml");
}

// No input, no report: an empty List.
TEST(PolicyReportTest, EmptyAuditIsEmptyList) {
  EXPECT_EQ(reports_of(ReportFormat::kPolicyReport, AuditReport{}).at("items"),
            SortedJson::array());
}

}  // namespace
}  // namespace topoguard::audit
