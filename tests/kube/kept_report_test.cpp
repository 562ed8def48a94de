// One report kept in step (reports/kept_report.h) against the fake API server: written by
// server-side apply when new or changed, not at all when unchanged, also after a restart.
#include "topoguard/reports/kept_report.h"

#include <gtest/gtest.h>

#include "fake_apiserver.h"
#include "topoguard/kube/objects.h"
#include "test_clock.h"

namespace topoguard::reports {
namespace {

const kube::ResourceRef kClusterReports{"openreports.io", "v1alpha1", "clusterreports", ""};

Json report(int warnings) {
  return {{"apiVersion", "openreports.io/v1alpha1"},
          {"kind", "ClusterReport"},
          {"metadata", {{"name", "0a1b2c3d-node"}}},
          {"summary", {{"warn", warnings}}}};
}

class KeptReportTest : public ::testing::Test {
 protected:
  KeptReportTest() {
    fake_.add_resource("openreports.io", "v1alpha1", "clusterreports", "ClusterReport", false);
    Result<kube::ApiClientPtr> made = kube::ApiClient::create(fake_.config(), {}, clock_);
    EXPECT_TRUE(made.has_value()) << made.error().to_string();
    api_ = *made;
  }
  int count(const std::string& method) { return fake_.api_requests(method); }
  testing::FakeApiServer fake_;
  std::shared_ptr<testing::TestClock> clock_ = std::make_shared<testing::TestClock>(true);
  kube::ApiClientPtr api_;
};

// New: one GET (404) and one apply; the same again: nothing sent; changed: one apply; a new
// writer (a restart) with unchanged content: one GET, no apply.
TEST_F(KeptReportTest, WritesOnlyWhatChanged) {
  KeptReport kept(api_);
  Result<KeptReport::Outcome> first = kept.keep(kClusterReports, report(3));
  ASSERT_TRUE(first.has_value()) << first.error().message;
  EXPECT_EQ(*first, KeptReport::Outcome::kWritten);
  EXPECT_EQ(count("GET"), 1);
  EXPECT_EQ(count("PATCH"), 1);
  EXPECT_EQ(*kept.keep(kClusterReports, report(3)), KeptReport::Outcome::kUnchanged);
  EXPECT_EQ(count("GET") + count("PATCH"), 2);
  EXPECT_EQ(*kept.keep(kClusterReports, report(0)), KeptReport::Outcome::kWritten);
  EXPECT_EQ(count("PATCH"), 2);
  KeptReport restarted(api_);
  EXPECT_EQ(*restarted.keep(kClusterReports, report(0)), KeptReport::Outcome::kUnchanged);
  EXPECT_EQ(count("GET"), 2);
  EXPECT_EQ(count("PATCH"), 2);
  // What was applied carries the content hash and topoguard as field manager.
  Result<kube::ObjectResponse> stored =
      kube::get_object(*api_, kClusterReports, "0a1b2c3d-node");
  ASSERT_TRUE(stored.has_value() && stored->ok());
  EXPECT_EQ(stored->object["summary"]["warn"], 0);
  EXPECT_FALSE(stored->object["metadata"]["annotations"]["topoguard.dev/content-hash"]
                   .get<std::string>()
                   .empty());
}

// A report without a usable name is an error, never a request.
TEST_F(KeptReportTest, UnnamedReportIsAnError) {
  KeptReport kept(api_);
  Json unnamed = report(1);
  unnamed["metadata"].erase("name");
  EXPECT_FALSE(kept.keep(kClusterReports, unnamed).has_value());
  EXPECT_EQ(count("PATCH"), 0);
}

}  // namespace
}  // namespace topoguard::reports
