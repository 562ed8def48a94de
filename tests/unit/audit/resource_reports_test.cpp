// Per-resource report CRDs (background reports): one report per audited object scoped to it,
// cluster reports for cluster-scoped objects, input errors with their object, and the cut that
// keeps a report small without losing its counts or its failures.
#include "topoguard/audit/resource_reports.h"

#include <gtest/gtest.h>

#include "audit_test_support.h"
#include "topoguard/k8s/object.h"

namespace topoguard::audit {
namespace {

SortedJson summary(int pass, int fail, int warn, int error, int skip) {
  return {{"pass", pass}, {"fail", fail}, {"warn", warn}, {"error", error}, {"skip", skip}};
}

TEST(ResourceReportsTest, OneReportPerResourceScopedToIt) {
  const std::vector<ResourceReport> reports =
      resource_reports(testing::sample_report(), {}, ResourceReportOptions{});
  ASSERT_EQ(reports.size(), 2u);  // the template and the pod; the ConfigMap is skipped
  const SortedJson& claims = reports[0].document;
  EXPECT_EQ(reports[0].file, "in.yaml");
  EXPECT_EQ(reports[0].subject.kind, "ResourceClaimTemplate");
  EXPECT_EQ(claims.at("apiVersion"), "openreports.io/v1alpha1");
  EXPECT_EQ(claims.at("kind"), "Report");
  EXPECT_EQ(claims.at("metadata"),
            (SortedJson{{"namespace", "ml"},
                            {"labels", {{"app.kubernetes.io/managed-by", "topoguard"}}}}));
  EXPECT_EQ(claims.at("scope"), (SortedJson{{"apiVersion", "resource.k8s.io/v1"},
                                                {"kind", "ResourceClaimTemplate"},
                                                {"namespace", "ml"},
                                                {"name", "gpu-nic"}}));
  EXPECT_EQ(claims.at("source"), "topoguard");
  EXPECT_EQ(claims.at("summary"), summary(3, 1, 0, 0, 0));
  EXPECT_EQ(claims.at("results").at(0).at("result"), "fail");
  EXPECT_EQ(claims.at("results").at(0).at("rule"), "missing-pcie-alignment");
  EXPECT_EQ(reports[0].omitted, 0u);

  const SortedJson& pod = reports[1].document;
  EXPECT_EQ(pod.at("metadata").at("namespace"), "default");  // no namespace: the default one
  EXPECT_EQ(pod.at("scope").at("kind"), "Pod");
  EXPECT_EQ(pod.at("summary"), summary(4, 0, 1, 0, 0));
  for (const SortedJson& result : pod.at("results")) {
    EXPECT_EQ(result.at("resources").at(0).at("name"), "p");  // only its own results
  }
}

TEST(ResourceReportsTest, PolicyReportFormatHasNoReportSource) {
  ResourceReportOptions options;
  options.format = ReportFormat::kPolicyReport;
  const std::vector<ResourceReport> reports =
      resource_reports(testing::sample_report(), {}, options);
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_EQ(reports[0].document.at("apiVersion"), "wgpolicyk8s.io/v1alpha2");
  EXPECT_EQ(reports[0].document.at("kind"), "PolicyReport");
  EXPECT_FALSE(reports[0].document.contains("source"));
}

// The cut keeps failures first and the original order among what it keeps; the summary counts
// every result and the annotation says how many were left out.
TEST(ResourceReportsTest, CutKeepsFailuresAndCounts) {
  ResourceReportOptions options;
  options.max_results = 2;
  const std::vector<ResourceReport> reports =
      resource_reports(testing::sample_report(), {}, options);
  const SortedJson& claims = reports[0].document;
  EXPECT_EQ(reports[0].omitted, 2u);
  EXPECT_EQ(claims.at("summary"), summary(3, 1, 0, 0, 0));
  ASSERT_EQ(claims.at("results").size(), 2u);
  EXPECT_EQ(claims.at("results").at(0).at("result"), "fail");
  EXPECT_EQ(claims.at("results").at(1).at("result"), "pass");
  EXPECT_EQ(claims.at("metadata").at("annotations").at("topoguard.dev/omitted-results"), "2");
  // The pod's warning is kept over its passes, wherever it stood.
  const SortedJson& pod = reports[1].document;
  ASSERT_EQ(pod.at("results").size(), 2u);
  EXPECT_TRUE(pod.at("results").at(0).at("result") == "warn" ||
              pod.at("results").at(1).at("result") == "warn");

  options.max_results = 1000;
  options.max_result_bytes = 1;  // no result fits
  const std::vector<ResourceReport> empty = resource_reports(testing::sample_report(), {}, options);
  EXPECT_EQ(empty[0].omitted, 4u);
  EXPECT_TRUE(empty[0].document.at("results").empty());
  EXPECT_EQ(empty[0].document.at("summary"), summary(3, 1, 0, 0, 0));
}

// What could not be decided is a skip, never a pass or a failure.
TEST(ResourceReportsTest, UnknownIsASkip) {
  AuditReport report = testing::sample_report();
  report.resources[0].unknown.push_back("namespaceSelector of policy p: Namespace ml unknown");
  const std::vector<ResourceReport> reports = resource_reports(report, {}, ResourceReportOptions{});
  const SortedJson& claims = reports[0].document;
  EXPECT_EQ(claims.at("summary"), summary(3, 1, 0, 0, 1));
  const SortedJson& skip = claims.at("results").back();
  EXPECT_EQ(skip.at("result"), "skip");
  EXPECT_EQ(skip.at("rule"), "unknown");
  EXPECT_EQ(skip.at("scored"), false);
  EXPECT_NE(skip.at("message").get<std::string>().find("Namespace ml unknown"), std::string::npos);
}

// A DeviceClass whose selector does not compile: an error result in a ClusterReport scoped to
// the class (it is cluster-scoped); the claim's report carries its own errors only.
TEST(ResourceReportsTest, InputErrorsGoToTheirObjectsReport) {
  const std::string device_class = R"(apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.nvidia.com}
spec:
  selectors:
  - cel: {expression: 'device.driver =='}
)";
  const ManifestSet set = parse_manifests(
      {{"class.yaml", device_class}, {"template.yaml", testing::kUnalignedTemplate}});
  const AuditReport report = run_audit(set, testing::builtin_policies()).report;
  ASSERT_FALSE(report.errors.empty());
  std::map<std::string, k8s::ObjectRef> subjects;
  for (const Manifest& manifest : set.manifests) {
    subjects.emplace(set.path_of(manifest), k8s::object_ref(*manifest.object));
  }
  const std::vector<ResourceReport> reports =
      resource_reports(report, subjects, ResourceReportOptions{});
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_EQ(reports[0].file, "template.yaml");
  EXPECT_EQ(reports[0].document.at("summary").at("error"), 0);
  const SortedJson& cluster = reports[1].document;
  EXPECT_EQ(reports[1].file, "class.yaml");
  EXPECT_EQ(cluster.at("kind"), "ClusterReport");
  EXPECT_FALSE(cluster.at("metadata").contains("namespace"));
  EXPECT_EQ(cluster.at("scope"), (SortedJson{{"apiVersion", "resource.k8s.io/v1"},
                                                 {"kind", "DeviceClass"},
                                                 {"name", "gpu.nvidia.com"}}));
  EXPECT_EQ(cluster.at("summary").at("error"), static_cast<int>(report.errors.size()));
  EXPECT_EQ(cluster.at("results").at(0).at("result"), "error");
  EXPECT_EQ(cluster.at("results").at(0).at("properties").at("field"),
            "/spec/selectors/0/cel/expression");

  // Without the class among the subjects its errors are not this function's to report.
  EXPECT_EQ(resource_reports(report, {}, ResourceReportOptions{}).size(), 1u);
}

}  // namespace
}  // namespace topoguard::audit
