// Background reports (reports::ReportSyncer) against the fake API server: reports follow the
// cluster (a failing template's report turns to pass once fixed, a deleted object's report goes
// with it), nothing is written while nothing changes (across a restart too), one replica writes,
// a stale cache writes nothing, and a write the server refuses is counted, not fatal.
#include "topoguard/reports/report_sync.h"

#include <gtest/gtest.h>

#include "dra_objects.h"
#include "eventually.h"
#include "fake_apiserver.h"
#include "topoguard/kube/objects.h"
#include "topoguard/policy/policy_loader.h"

namespace topoguard::reports {
namespace {

using namespace std::chrono_literals;
using testing::eventually;

const kube::ResourceRef kReports{"openreports.io", "v1alpha1", "reports", ""};
const kube::ResourceRef kClusterReports{"openreports.io", "v1alpha1", "clusterreports", ""};

Json claim_template(const std::string& name, bool aligned) {
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "ResourceClaimTemplate"},
          {"metadata", {{"name", name}, {"namespace", "ml"}}},
          {"spec", {{"spec", testing::dra_claim_spec(aligned)}}}};
}

class ReportSyncTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fake_.apply("ADDED",
                testing::dra_device_class("gpu.nvidia.com", "device.driver == \"gpu.nvidia.com\""));
    fake_.apply("ADDED", testing::dra_device_class("dra.net", "device.driver == \"dra.net\""));
    fake_.apply("ADDED", testing::dra_device_class("broken", "device.driver =="));
    template_uid_ =
        fake_.apply("ADDED", claim_template("prefill", false))["objects"][0]["metadata"]["uid"];
    fake_.apply("ADDED", claim_template("decode", true));
    policies_ = std::make_shared<const policy::PolicySet>(*policy::load_builtin_policies());
  }

  kube::ApiClientPtr client() {
    Result<kube::ApiClientPtr> made = kube::ApiClient::create(fake_.config());
    EXPECT_TRUE(made.has_value()) << made.error().to_string();
    return *made;
  }
  cache::ClusterCachePtr started_cache() {
    auto made =
        std::make_shared<cache::ClusterCache>(client(), cache::discover_cluster_state(nullptr));
    made->start();
    EXPECT_TRUE(eventually([&] { return made->synced(); }));
    return made;
  }
  std::unique_ptr<ReportSyncer> syncer(
      cache::ClusterCachePtr cluster, const std::string& identity,
      audit::ReportFormat format = audit::ReportFormat::kOpenReports) {
    ReportSyncOptions options;
    options.interval = 1h;  // passes are asked for with poke()
    options.identity = identity;
    options.retry_period = 1s;
    options.report.format = format;
    auto policies = policies_;
    auto made = std::make_unique<ReportSyncer>(
        client(), std::move(cluster), [policies] { return policies; }, options, kube::real_clock());
    made->start();
    return made;
  }
  // Pokes and waits for the next completed pass.
  static bool pass(ReportSyncer& syncer) {
    const std::uint64_t before = syncer.status().passes;
    syncer.poke();
    return eventually([&] { return syncer.status().passes > before; });
  }
  std::vector<Json> stored(const kube::ResourceRef& resource) {
    return kube::list_resource(*client(), resource, {}).items;
  }
  Json report_of(const std::string& uid, const std::string& namespace_name = "ml") {
    kube::ResourceRef resource = kReports;
    resource.namespace_ = namespace_name;
    Result<kube::ObjectResponse> got = kube::get_object(*client(), resource, uid);
    return got && got->ok() ? got->object : Json();
  }
  // Successful report writes (applies and deletes) the fake has served.
  int report_writes() {
    int writes = 0;
    for (const Json& request : fake_.requests()) {
      const std::string path = request["path"];
      const int status = request["status"];
      writes += request["method"] != "GET" && path.find("/openreports.io/") != std::string::npos &&
                status < 300;
    }
    return writes;
  }

  testing::FakeApiServer fake_;
  std::string template_uid_;
  policy::PolicySetPtr policies_;
};

TEST_F(ReportSyncTest, ReportsFollowTheClusterWithoutIdleWrites) {
  cache::ClusterCachePtr cluster = started_cache();
  auto writer = syncer(cluster, "a");
  ASSERT_TRUE(pass(*writer));
  ReportSyncStatus status = writer->status();
  EXPECT_TRUE(status.leader);
  EXPECT_EQ(status.writes, 3u) << status.last_error;  // two templates, the broken class
  EXPECT_EQ(status.write_errors, 0u);
  EXPECT_EQ(stored(kReports).size(), 2u);
  ASSERT_EQ(stored(kClusterReports).size(), 1u);
  EXPECT_EQ(stored(kClusterReports)[0]["scope"]["name"], "broken");

  Json report = report_of(template_uid_);
  ASSERT_TRUE(report.is_object());
  EXPECT_EQ(report["scope"]["name"], "prefill");
  EXPECT_EQ(report["summary"]["fail"], 1);
  EXPECT_EQ(report["metadata"]["ownerReferences"][0]["uid"], template_uid_);
  // Written by server-side apply as topoguard, forced.
  bool applied = false;
  for (const Json& request : fake_.requests()) {
    if (request["method"] == "PATCH" &&
        request["path"].get<std::string>().find(template_uid_) != std::string::npos) {
      applied = true;
      EXPECT_EQ(request["contentType"], "application/apply-patch+yaml");
      EXPECT_EQ(request["query"]["fieldManager"][0], "topoguard");
      EXPECT_EQ(request["query"]["force"][0], "true");
    }
  }
  EXPECT_TRUE(applied);

  // Nothing changed: no write. (The writer's own first pass and the one asked for may both
  // have run: every pass after the first skips all three.)
  const int writes = report_writes();
  ASSERT_TRUE(pass(*writer));
  EXPECT_EQ(report_writes(), writes);
  status = writer->status();
  EXPECT_EQ(status.skipped, 3 * (status.passes - 1));

  // Fixed: the report turns to pass, and only it is written.
  fake_.apply("MODIFIED", claim_template("prefill", true));
  ASSERT_TRUE(eventually(
      [&] { return pass(*writer) && report_of(template_uid_)["summary"]["fail"] == 0; }));
  EXPECT_GT(report_of(template_uid_)["summary"]["pass"], 0);
  EXPECT_EQ(report_writes(), writes + 1);

  // Deleted: the garbage collector takes the report with its owner.
  fake_.apply("DELETED", claim_template("prefill", true));
  EXPECT_TRUE(report_of(template_uid_).is_null());
  ASSERT_TRUE(eventually([&] { return pass(*writer) && writer->status().reports == 2; }));
  EXPECT_EQ(stored(kReports).size(), 1u);
  EXPECT_EQ(writer->status().write_errors, 0u);
}

// Without a garbage collector (or before it runs) the writer deletes the report itself, and
// only its own: a namespace report `topoguard audit --format openreports` made stays.
TEST_F(ReportSyncTest, DeletesTheReportOfAnObjectThatLeft) {
  fake_.control("config", {{"garbageCollection", false}});
  fake_.apply("ADDED", {{"apiVersion", "openreports.io/v1alpha1"},
                        {"kind", "Report"},
                        {"metadata",
                         {{"name", "topoguard"},
                          {"namespace", "ml"},
                          {"labels", {{"app.kubernetes.io/managed-by", "topoguard"}}}}},
                        {"summary", {{"pass", 1}}}});
  cache::ClusterCachePtr cluster = started_cache();
  auto writer = syncer(cluster, "a");
  ASSERT_TRUE(pass(*writer));
  ASSERT_FALSE(report_of(template_uid_).is_null());
  fake_.apply("DELETED", claim_template("prefill", false));
  ASSERT_FALSE(report_of(template_uid_).is_null());
  ASSERT_TRUE(eventually([&] { return pass(*writer) && report_of(template_uid_).is_null(); }));
  EXPECT_EQ(writer->status().deletes, 1u);
  EXPECT_FALSE(report_of("topoguard").is_null());
}

// A new writer (a restart, another replica taking over) reads the reports' hashes and writes
// nothing for an unchanged cluster; while one replica holds the Lease the other writes nothing.
TEST_F(ReportSyncTest, RestartAndSecondReplicaWriteNothing) {
  cache::ClusterCachePtr cluster = started_cache();
  auto first = syncer(cluster, "a");
  ASSERT_TRUE(pass(*first));
  const int writes = report_writes();
  auto second = syncer(cluster, "b");
  second->poke();
  // Time is the subject: over more than one retry period (1 s) of its Lease, a replica that is
  // not the leader writes nothing and runs no pass. Nothing it does not do can be waited for.
  std::this_thread::sleep_for(1500ms);
  EXPECT_FALSE(second->status().leader);
  EXPECT_EQ(second->status().passes, 0u);
  first->stop();  // releases the Lease
  ASSERT_TRUE(eventually([&] { return second->status().leader; }));
  ASSERT_TRUE(pass(*second));  // its own first pass may have run already: one or two
  const ReportSyncStatus status = second->status();
  EXPECT_EQ(status.writes, 0u);
  EXPECT_EQ(status.skipped, 3 * status.passes);
  EXPECT_EQ(report_writes(), writes);
}

// A cache that has not synced (or is stale) gives no snapshot: the pass is skipped, not run on
// nothing (which would delete every report).
TEST_F(ReportSyncTest, NoFreshCacheNoWrites) {
  auto cluster =
      std::make_shared<cache::ClusterCache>(client(), cache::discover_cluster_state(nullptr));
  auto writer = syncer(cluster, "a");
  writer->poke();
  ASSERT_TRUE(eventually([&] { return writer->status().stale_skips > 0; }));
  EXPECT_EQ(writer->status().passes, 0u);
  EXPECT_EQ(report_writes(), 0);
}

// The server refuses a write (an object above its limit): counted and reported, the pass goes
// on with the others and the next pass tries again.
TEST_F(ReportSyncTest, RefusedWriteIsCountedAndRetried) {
  fake_.control("config", {{"maxObjectBytes", 2000}});
  cache::ClusterCachePtr cluster = started_cache();
  auto writer = syncer(cluster, "a", audit::ReportFormat::kPolicyReport);
  ASSERT_TRUE(pass(*writer));
  ReportSyncStatus status = writer->status();
  EXPECT_GT(status.write_errors, 0u);
  EXPECT_NE(status.last_error.find("policyreports"), std::string::npos) << status.last_error;
  // A pass already under way may still meet the old limit; a later one writes them all.
  fake_.control("config", {{"maxObjectBytes", 1572864}});
  ASSERT_TRUE(eventually([&] { return pass(*writer) && writer->status().writes == 3; }));
  kube::ResourceRef policy_reports{"wgpolicyk8s.io", "v1alpha2", "policyreports", ""};
  EXPECT_EQ(stored(policy_reports).size(), 2u);
}

}  // namespace
}  // namespace topoguard::reports
