// The pure half of background reports: which reports a cache snapshot calls for (named and owned
// by their object's uid, generated claims left to their template, a content hash that changes
// with the content only) and their metrics.
#include "topoguard/reports/report_sync.h"

#include <gtest/gtest.h>

#include "dra_objects.h"
#include "topoguard/policy/policy_loader.h"

namespace topoguard::reports {
namespace {

const std::string kClaims = "resourceclaims.v1.resource.k8s.io";
const std::string kTemplates = "resourceclaimtemplates.v1.resource.k8s.io";
const std::string kClasses = "deviceclasses.v1.resource.k8s.io";

Json metadata(const std::string& name, const std::string& namespace_name, const std::string& uid) {
  Json object = {{"name", name}};
  if (!namespace_name.empty()) {
    object["namespace"] = namespace_name;
  }
  if (!uid.empty()) {
    object["uid"] = uid;
  }
  return object;
}

Json device_class(const std::string& name, const std::string& expression, const std::string& uid) {
  Json object = testing::dra_device_class(name, expression);
  object["metadata"] = metadata(name, "", uid);
  return object;
}

Json claim_template(const std::string& name, bool aligned, const std::string& uid) {
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "ResourceClaimTemplate"},
          {"metadata", metadata(name, "ml", uid)},
          {"spec", {{"spec", testing::dra_claim_spec(aligned)}}}};
}

Json claim(const std::string& name, bool aligned, const std::string& uid) {
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "ResourceClaim"},
          {"metadata", metadata(name, "ml", uid)},
          {"spec", testing::dra_claim_spec(aligned)}};
}

const policy::PolicySet& policies() {
  static const policy::PolicySet set = *policy::load_builtin_policies();
  return set;
}

class DesiredReportsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_.replace(
        kClasses,
        {device_class("gpu.nvidia.com", "device.driver == \"gpu.nvidia.com\"",
                      "c0000000-0000-0000-0000-000000000001"),
         device_class("dra.net", "device.driver == \"dra.net\"",
                      "c0000000-0000-0000-0000-000000000002"),
         device_class("broken", "device.driver ==", "c0000000-0000-0000-0000-000000000003")});
    Json generated = claim("worker-pair-x7k2", false, "b0000000-0000-0000-0000-000000000002");
    generated["metadata"]["ownerReferences"] = Json::array({{{"apiVersion", "v1"},
                                                             {"kind", "Pod"},
                                                             {"name", "worker"},
                                                             {"uid", "p1"},
                                                             {"controller", true}}});
    store_.replace(kClaims, {claim("aligned", true, "b0000000-0000-0000-0000-000000000001"),
                             std::move(generated), claim("no-uid", false, "")});
    store_.replace(kTemplates,
                   {claim_template("pair", false, "a0000000-0000-0000-0000-000000000001")});
  }

  DesiredReports desired(const audit::ResourceReportOptions& options = {}) {
    return desired_reports(*cache::build_snapshot(store_, 1), policies(), options);
  }
  static const DesiredReport* named(const DesiredReports& reports, const std::string& name) {
    for (const DesiredReport& report : reports.reports) {
      if (report.name == name) {
        return &report;
      }
    }
    return nullptr;
  }

  cache::ObjectStore store_;
};

TEST_F(DesiredReportsTest, OneReportPerObjectNamedAndOwnedByItsUid) {
  const DesiredReports reports = desired();
  EXPECT_EQ(reports.controlled, 1u);      // the Pod's claim: judged through its template
  EXPECT_EQ(reports.without_uid, 1u);     // no uid, nothing to own a report
  ASSERT_EQ(reports.reports.size(), 3u);  // the aligned claim, the template, the broken class

  const DesiredReport* pair = named(reports, "a0000000-0000-0000-0000-000000000001");
  ASSERT_NE(pair, nullptr);
  EXPECT_EQ(pair->namespace_, "ml");
  const Json& document = pair->document;
  EXPECT_EQ(document.at("kind"), "Report");
  EXPECT_EQ(document.at("metadata").at("name"), pair->name);
  EXPECT_EQ(document.at("metadata").at("namespace"), "ml");
  EXPECT_EQ(document.at("metadata").at("ownerReferences"),
            Json::array({{{"apiVersion", "resource.k8s.io/v1"},
                          {"kind", "ResourceClaimTemplate"},
                          {"name", "pair"},
                          {"uid", pair->name}}}));
  EXPECT_EQ(document.at("scope").at("uid"), pair->name);
  EXPECT_EQ(document.at("scope").at("name"), "pair");
  EXPECT_EQ(document.at("summary").at("fail"), 1);
  EXPECT_EQ(document.at("metadata").at("labels"),
            (Json{{"app.kubernetes.io/managed-by", "topoguard"}, {"topoguard.dev/background", "true"}}));

  // The hash annotation is the hash of the rest of the document.
  Json without_hash = document;
  EXPECT_EQ(without_hash["metadata"]["annotations"][std::string(kContentHashAnnotation)],
            pair->hash);
  without_hash["metadata"].erase("annotations");
  EXPECT_EQ(content_hash(without_hash), pair->hash);
  EXPECT_EQ(pair->hash.size(), 64u);

  const DesiredReport* aligned = named(reports, "b0000000-0000-0000-0000-000000000001");
  ASSERT_NE(aligned, nullptr);
  EXPECT_EQ(aligned->document.at("summary").at("fail"), 0);

  const DesiredReport* broken = named(reports, "c0000000-0000-0000-0000-000000000003");
  ASSERT_NE(broken, nullptr);
  EXPECT_EQ(broken->namespace_, "");
  EXPECT_EQ(broken->document.at("kind"), "ClusterReport");
  EXPECT_EQ(broken->document.at("summary").at("error"), 1);
}

// Same objects, same hashes (what lets an unchanged cluster cost no writes); a fixed template
// changes its report, and only its report.
TEST_F(DesiredReportsTest, HashChangesWithContentOnly) {
  const DesiredReports before = desired();
  const DesiredReports again = desired();
  ASSERT_EQ(before.reports.size(), again.reports.size());
  for (std::size_t i = 0; i < before.reports.size(); ++i) {
    EXPECT_EQ(before.reports[i].hash, again.reports[i].hash);
  }
  store_.replace(kTemplates,
                 {claim_template("pair", true, "a0000000-0000-0000-0000-000000000001")});
  const DesiredReports after = desired();
  const DesiredReport* fixed = named(after, "a0000000-0000-0000-0000-000000000001");
  ASSERT_NE(fixed, nullptr);
  EXPECT_NE(fixed->hash, named(before, fixed->name)->hash);
  EXPECT_EQ(fixed->document.at("summary").at("fail"), 0);
  EXPECT_GT(fixed->document.at("summary").at("pass"), 0);
  const std::string unchanged = "b0000000-0000-0000-0000-000000000001";
  EXPECT_EQ(named(after, unchanged)->hash, named(before, unchanged)->hash);
}

TEST_F(DesiredReportsTest, PolicyReportFormatAndCut) {
  audit::ResourceReportOptions options;
  options.format = audit::ReportFormat::kPolicyReport;
  options.max_results = 1;
  const DesiredReports reports = desired(options);
  const DesiredReport* pair = named(reports, "a0000000-0000-0000-0000-000000000001");
  ASSERT_NE(pair, nullptr);
  EXPECT_EQ(pair->document.at("apiVersion"), "wgpolicyk8s.io/v1alpha2");
  EXPECT_EQ(pair->document.at("kind"), "PolicyReport");
  EXPECT_GT(pair->omitted, 0u);
  EXPECT_EQ(pair->document.at("results").size(), 1u);
  EXPECT_EQ(pair->document.at("results").at(0).at("result"), "fail");
  EXPECT_EQ(pair->document.at("metadata").at("annotations").at("topoguard.dev/omitted-results"),
            std::to_string(pair->omitted));
  EXPECT_EQ(report_resources(audit::ReportFormat::kPolicyReport).cluster.resource,
            "clusterpolicyreports");
  EXPECT_EQ(report_resources(audit::ReportFormat::kOpenReports).namespaced.path(),
            "/apis/openreports.io/v1alpha1/reports");
}

TEST(ReportMetricsTest, RendersCountersAndLastPass) {
  ReportSyncStatus status;
  EXPECT_EQ(render_report_metrics(status).find("last_pass_timestamp"), std::string::npos);
  status.leader = true;
  status.writes = 3;
  status.skipped = 7;
  status.last_pass = std::chrono::system_clock::time_point(std::chrono::seconds(1700000000));
  const std::string text = render_report_metrics(status);
  EXPECT_NE(text.find("topoguard_reports_leader 1"), std::string::npos);
  EXPECT_NE(text.find("topoguard_reports_writes_total 3"), std::string::npos);
  EXPECT_NE(text.find("topoguard_reports_skipped_total 7"), std::string::npos);
  EXPECT_NE(text.find("topoguard_reports_last_pass_timestamp_seconds 1700000000"),
            std::string::npos);
  EXPECT_NE(text.find("# TYPE topoguard_reports_writes_total counter"), std::string::npos);
}

}  // namespace
}  // namespace topoguard::reports
