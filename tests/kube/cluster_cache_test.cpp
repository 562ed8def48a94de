// The cluster cache against the fake API server: it syncs, then follows slice events into new
// snapshots within a second; it survives a 410 (relist) and a rotated service-account token; a
// resource the cluster does not serve is held empty and reported; a watch broken longer than the
// staleness bound makes fresh_snapshot() answer nullptr until the watch is back; a resource the
// cluster comes to serve later is watched once discovery runs again.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "eventually.h"
#include "fake_apiserver.h"
#include "topoguard/cache/cluster_cache.h"
#include "topoguard/kube/api_client.h"

namespace topoguard::cache {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::eventually;

Json slice_object(const std::string& node, const std::string& root) {
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "ResourceSlice"},
          {"metadata", {{"name", node + "-gpu"}}},
          {"spec",
           {{"driver", "gpu.nvidia.com"},
            {"nodeName", node},
            {"pool", {{"name", node}, {"generation", 1}, {"resourceSliceCount", 1}}},
            {"devices",
             Json::array({{{"name", "gpu-0"},
                           {"attributes",
                            {{"resource.kubernetes.io/pcieRoot", {{"string", root}}}}}}})}}}};
}

// What the fake serves: resource.k8s.io/v1 (DeviceTaintRules at v1alpha3) and namespaces; no
// NetworkAttachmentDefinition CRD.
std::vector<kube::ResourceRef> fake_resources() {
  return {{"resource.k8s.io", "v1", "deviceclasses", ""},
          {"resource.k8s.io", "v1", "resourceslices", ""},
          {"resource.k8s.io", "v1alpha3", "devicetaintrules", ""},
          {"resource.k8s.io", "v1", "resourceclaimtemplates", ""},
          {"resource.k8s.io", "v1", "resourceclaims", ""},
          {"k8s.cni.cncf.io", "v1", "network-attachment-definitions", ""},
          {"", "v1", "namespaces", ""}};
}

class ClusterCacheTest : public ::testing::Test {
 protected:
  ClusterCacheTest() : fake_({"--bookmark-interval", "0.2"}) {}
  ~ClusterCacheTest() override {
    if (cache_) {
      cache_->stop();
    }
  }

  static ClusterCacheOptions quick_options() {
    ClusterCacheOptions options;
    options.publish_interval = milliseconds(20);
    options.stale_after = seconds(1);
    options.reflector.min_watch_timeout = seconds(2);
    options.reflector.max_watch_timeout = seconds(2);
    options.reflector.not_served_retry = seconds(1);
    options.reflector.backoff.initial = milliseconds(50);
    options.reflector.backoff.cap = milliseconds(200);
    return options;
  }

  void start(const kube::ClientConfig& config, ResourceResolver resolve = nullptr) {
    // No client-side rate limit: at client-go's 5 QPS the reconnects after a cut take longer
    // than the one-second staleness bound used here.
    kube::ApiClientOptions client_options;
    client_options.rate_limit.qps = 0;
    Result<kube::ApiClientPtr> client = kube::ApiClient::create(config, client_options);
    ASSERT_TRUE(client.has_value()) << client.error().to_string();
    if (!resolve) {
      resolve = [](kube::ApiClient&, std::stop_token) {
        return Result<std::vector<kube::ResourceRef>>(fake_resources());
      };
    }
    CacheEventSink sink = [this](const CacheEvent& event) {
      std::lock_guard lock(events_mutex_);
      events_.push_back(event);
    };
    cache_ = std::make_unique<ClusterCache>(*client, std::move(resolve), quick_options(), sink);
    cache_->start();
  }

  std::size_t devices() const {
    CacheSnapshotPtr snapshot = cache_->snapshot();
    return snapshot ? snapshot->cluster_state.devices().size() : 0;
  }
  const ResourceStatus* resource(const CacheStatus& status, const std::string& prefix) const {
    for (const ResourceStatus& entry : status.resources) {
      if (entry.resource.rfind(prefix, 0) == 0) {
        return &entry;
      }
    }
    return nullptr;
  }

  testing::FakeApiServer fake_;
  std::unique_ptr<ClusterCache> cache_;
  std::mutex events_mutex_;
  std::vector<CacheEvent> events_;
};

TEST_F(ClusterCacheTest, SyncsThenFollowsSliceEventsWithinASecond) {
  fake_.apply("ADDED", slice_object("node-a", "pci0000:10"));
  start(fake_.config());
  ASSERT_TRUE(eventually([&] { return cache_->synced(); }));
  EXPECT_EQ(devices(), 1u);
  const std::uint64_t generation = cache_->snapshot()->generation;

  fake_.apply("ADDED", slice_object("node-b", "pci0000:20"));
  const auto added = std::chrono::steady_clock::now();
  ASSERT_TRUE(eventually([&] { return devices() == 2; }, milliseconds(1000)));
  EXPECT_LT(std::chrono::steady_clock::now() - added, seconds(1));
  EXPECT_GT(cache_->snapshot()->generation, generation);

  fake_.apply("DELETED", slice_object("node-a", "pci0000:10"));
  ASSERT_TRUE(eventually([&] { return devices() == 1; }, milliseconds(1000)));
  EXPECT_EQ(cache_->snapshot()->cluster_state.nodes().at(0).name, "node-b");

  // The NetworkAttachmentDefinition CRD is not installed: held empty, reported, not blocking.
  const CacheStatus status = cache_->status();
  const ResourceStatus* nads = resource(status, "network-attachment-definitions");
  ASSERT_NE(nads, nullptr);
  EXPECT_TRUE(nads->not_served);
  EXPECT_FALSE(status.stale);
  const std::string metrics = cache_->render_metrics();
  EXPECT_NE(metrics.find("topoguard_cluster_cache_synced 1"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("topoguard_cluster_cache_not_served{resource=\"network-attachment-"
                         "definitions.v1.k8s.cni.cncf.io\"} 1"),
            std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("topoguard_cluster_cache_objects{resource=\"resourceslices.v1."
                         "resource.k8s.io\"} 1"),
            std::string::npos)
      << metrics;
}

// What serve watches: discovery finds DeviceTaintRules at the version the fake serves (v1alpha3)
// and leaves out the NetworkAttachmentDefinition CRD, which is not installed, saying so.
TEST_F(ClusterCacheTest, DiscoversWhatTheClusterServes) {
  fake_.apply("ADDED", slice_object("node-a", "pci0000:10"));
  start(fake_.config(), discover_cluster_state([this](const CacheEvent& event) {
          std::lock_guard lock(events_mutex_);
          events_.push_back(event);
        }));
  ASSERT_TRUE(eventually([&] { return cache_->synced(); }));
  EXPECT_EQ(devices(), 1u);
  std::vector<std::string> watched;
  for (const ResourceStatus& resource : cache_->status().resources) {
    watched.push_back(resource.resource);
  }
  EXPECT_EQ(watched, (std::vector<std::string>{"deviceclasses.v1.resource.k8s.io",
                                               "resourceslices.v1.resource.k8s.io",
                                               "resourceclaimtemplates.v1.resource.k8s.io",
                                               "resourceclaims.v1.resource.k8s.io",
                                               "devicetaintrules.v1alpha3.resource.k8s.io",
                                               "namespaces.v1"}));
  std::lock_guard lock(events_mutex_);
  bool reported = false;
  for (const CacheEvent& event : events_) {
    reported = reported || (event.kind == CacheEvent::Kind::kNotServed &&
                            event.resource.find("NetworkAttachmentDefinition") != std::string::npos);
  }
  EXPECT_TRUE(reported);
}

// A CRD installed after start (Multus's NetworkAttachmentDefinition) is watched once discovery
// runs again; the resources already watched keep their reflectors.
TEST_F(ClusterCacheTest, WatchesAResourceTheClusterComesToServe) {
  kube::ApiClientOptions client_options;
  client_options.rate_limit.qps = 0;
  Result<kube::ApiClientPtr> client = kube::ApiClient::create(fake_.config(), client_options);
  ASSERT_TRUE(client.has_value()) << client.error().to_string();
  ClusterCacheOptions options = quick_options();
  options.rediscover_every = milliseconds(200);
  CacheEventSink sink = [this](const CacheEvent& event) {
    std::lock_guard lock(events_mutex_);
    events_.push_back(event);
  };
  cache_ = std::make_unique<ClusterCache>(*client, discover_cluster_state(sink), options, sink);
  cache_->start();
  ASSERT_TRUE(eventually([&] { return cache_->synced(); }));
  const std::size_t watched = cache_->status().resources.size();
  EXPECT_EQ(resource(cache_->status(), "network-attachment-definitions"), nullptr);

  fake_.add_resource("k8s.cni.cncf.io", "v1", "network-attachment-definitions",
                     "NetworkAttachmentDefinition", true);
  fake_.apply("ADDED",
              {{"apiVersion", "k8s.cni.cncf.io/v1"},
               {"kind", "NetworkAttachmentDefinition"},
               {"metadata",
                {{"name", "rdma-net"},
                 {"namespace", "ml"},
                 {"annotations", {{"k8s.v1.cni.cncf.io/resourceName", "rdma/ib"}}}}}});
  ASSERT_TRUE(eventually(
      [&] {
        const CacheSnapshotPtr snapshot = cache_->snapshot();
        return snapshot && snapshot->inventory.network_resource("ml", "rdma-net") != nullptr;
      },
      milliseconds(5000)));
  EXPECT_EQ(*cache_->snapshot()->inventory.network_resource("ml", "rdma-net"), "rdma/ib");
  const CacheStatus status = cache_->status();
  EXPECT_EQ(status.resources.size(), watched + 1);
  const ResourceStatus* slices = resource(status, "resourceslices");
  ASSERT_NE(slices, nullptr);
  EXPECT_EQ(slices->stats.lists, 1u);  // not listed again
}

TEST_F(ClusterCacheTest, RelistsAfterAnExpiredWatchAndMissesNothing) {
  fake_.apply("ADDED", slice_object("node-a", "pci0000:10"));
  start(fake_.config());
  ASSERT_TRUE(eventually([&] { return cache_->synced(); }));
  ASSERT_TRUE(eventually([&] { return fake_.state()["watches"].get<int>() >= 6; }));
  // History is compacted and open watches get an in-stream 410; meanwhile an object changes.
  fake_.control("compact");
  fake_.control("expire-watches");
  fake_.apply("ADDED", slice_object("node-b", "pci0000:20"));
  ASSERT_TRUE(eventually([&] { return devices() == 2; }));
  const CacheStatus status = cache_->status();
  const ResourceStatus* slices = resource(status, "resourceslices");
  ASSERT_NE(slices, nullptr);
  EXPECT_GE(slices->stats.lists, 2u);
  EXPECT_GE(slices->errors.count("expired"), 1u);
  EXPECT_FALSE(cache_->stale());
}

TEST_F(ClusterCacheTest, FollowsARotatedServiceAccountToken) {
  fake_.control("tokens", {{"add", {"token-1", "token-2"}}});
  kube::ClientConfig config = fake_.config("");
  config.token_file = fake_.dir().write("token", "token-1\n");
  start(config);
  ASSERT_TRUE(eventually([&] { return cache_->synced(); }));
  fake_.dir().write("token", "token-2\n");
  fake_.control("tokens", {{"revoke", {"token-1"}}});
  fake_.control("cut-watches");  // every watch reconnects, now with a token that is refused
  fake_.apply("ADDED", slice_object("node-b", "pci0000:20"));
  ASSERT_TRUE(eventually([&] { return devices() == 1; }));
  EXPECT_FALSE(cache_->stale()) << [&] {
    std::string text;
    for (const ResourceStatus& entry : cache_->status().resources) {
      text += entry.resource + " broken " + std::to_string(entry.broken_for.count()) + "\n";
    }
    std::lock_guard lock(events_mutex_);
    for (const CacheEvent& event : events_) {
      text += event.resource + ": " + event.message + "\n";
    }
    return text;
  }();
  bool rotated = false;
  for (const Json& request : fake_.requests()) {
    rotated = rotated || request["auth"] == "bearer:token-2";
  }
  EXPECT_TRUE(rotated);
}

TEST_F(ClusterCacheTest, ABrokenWatchMakesTheCacheStaleUntilItIsBack) {
  fake_.control("tokens", {{"add", {"token-1"}}});
  kube::ClientConfig config = fake_.config("");
  config.token_file = fake_.dir().write("token", "token-1\n");
  start(config);
  ASSERT_TRUE(eventually([&] { return cache_->synced(); }));
  ASSERT_NE(cache_->fresh_snapshot(), nullptr);
  // No valid token any more: every watch and list fails from now on.
  fake_.control("tokens", {{"revoke", {"token-1"}}});
  fake_.control("cut-watches");
  ASSERT_TRUE(eventually([&] { return cache_->stale(); }));
  EXPECT_EQ(cache_->fresh_snapshot(), nullptr);
  EXPECT_NE(cache_->snapshot(), nullptr);  // the old data is kept, not used for decisions
  EXPECT_NE(cache_->render_metrics().find("topoguard_cluster_cache_stale 1"), std::string::npos);
  EXPECT_GE(cache_->status().stale_reads, 1u);
  // A new token: the watches come back and the cache is fresh again.
  fake_.control("tokens", {{"add", {"token-2"}}});
  fake_.dir().write("token", "token-2\n");
  ASSERT_TRUE(eventually([&] { return !cache_->stale(); }, milliseconds(10000)));
  EXPECT_NE(cache_->fresh_snapshot(), nullptr);
}

TEST_F(ClusterCacheTest, ResolvesAgainUntilTheClusterAnswers) {
  int calls = 0;
  start(fake_.config(), [&calls](kube::ApiClient&, std::stop_token) {
    ++calls;
    if (calls < 3) {
      return Result<std::vector<kube::ResourceRef>>(
          Error{ErrorCode::kIo, "discovery failed: connection refused", {}});
    }
    return Result<std::vector<kube::ResourceRef>>(fake_resources());
  });
  ASSERT_TRUE(eventually([&] { return cache_->synced(); }));
  EXPECT_EQ(calls, 3);
  std::lock_guard lock(events_mutex_);
  std::size_t resolve_errors = 0;
  for (const CacheEvent& event : events_) {
    resolve_errors += event.kind == CacheEvent::Kind::kResolveError ? 1 : 0;
  }
  EXPECT_EQ(resolve_errors, 2u);
}

}  // namespace
}  // namespace topoguard::cache
