// The live cluster behind admission: one reflector per watched resource (kube/reflector.h) feeds
// an ObjectStore per event, and a publisher thread turns each change into a new CacheSnapshot,
// coalescing bursts (at most one build per publish_interval). Readers take the current snapshot
// as a shared_ptr copy under a mutex held for that copy only (as Reloadable does), never a copy
// of the snapshot: it is immutable, as Envoy's configs are. (libstdc++ 12's
// atomic<shared_ptr> locks with a bit ThreadSanitizer cannot see, so it is not used.)
// - Synced once every resource has been listed (or found not served): until then there is no
//   snapshot, and the server is not ready.
// - Stale when some watch has been broken (an error not yet followed by a list, an open watch or
//   an event) for longer than `stale_after`: fresh_snapshot() then answers nullptr, so decisions
//   that need the cluster say unknown instead of judging on old data.
// - A resource the cluster does not serve (404: a CRD not installed) is held as empty and
//   reported; its reflector looks again every few minutes.
// The resources are resolved first (discovery: which versions the cluster serves), on the
// publisher's thread, again after a backoff while that fails, so a server started before the API
// server answers gets there. Then again every `rediscover_every`: a resource the cluster has come
// to serve since (a CRD installed after start) gets its reflector; one already watched keeps its
// version.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "topoguard/cache/cache_snapshot.h"
#include "topoguard/cache/object_store.h"
#include "topoguard/kube/api_client.h"
#include "topoguard/kube/list.h"
#include "topoguard/kube/reflector.h"

namespace topoguard::cache {

struct ClusterCacheOptions {
  std::chrono::milliseconds publish_interval{100};
  std::chrono::seconds stale_after{60};
  // Zero: resolve once.
  std::chrono::milliseconds rediscover_every{std::chrono::minutes(5)};
  // Lists in pages of 100 (client-go's pager asks for 500), fewer when objects are large: a page
  // is held decoded while it is read (about 8x its JSON: the body, the parser's buffers and the
  // tree), and 500 ResourceSlices of 16 devices are 2.3 MB of JSON; so a page stays near
  // 512 KiB (bench/cache_rss.py: resident memory through a sync and a relist).
  kube::ReflectorOptions reflector = [] {
    kube::ReflectorOptions paged;
    paged.page_size = 100;
    paged.page_bytes = 512 * 1024;
    return paged;
  }();
};

// What the cache tells its owner (to log): a reflector's error, a resource not served, a
// snapshot that read objects with errors. Called on the cache's threads.
struct CacheEvent {
  enum class Kind { kResolveError, kResolved, kNotServed, kReflectorError, kSynced, kSnapshotErrors };
  Kind kind = Kind::kReflectorError;
  std::string resource;  // for kReflectorError
  std::string message;
  kube::ReflectorErrorKind error_kind = kube::ReflectorErrorKind::kListFailed;
};
using CacheEventSink = std::function<void(const CacheEvent& event)>;

// Per resource, for metrics.
struct ResourceStatus {
  std::string resource;  // ResourceRef::to_string()
  bool synced = false;
  bool not_served = false;
  std::size_t objects = 0;
  // How long the resource's watch has been broken; zero while it follows the server.
  std::chrono::nanoseconds broken_for{0};
  kube::ReflectorStats stats;
  std::map<std::string, std::uint64_t, std::less<>> errors;  // by reflector_error_kind_name
};

struct CacheStatus {
  bool synced = false;
  bool stale = false;
  std::vector<ResourceStatus> resources;
  std::uint64_t generation = 0;
  std::size_t objects = 0;
  std::chrono::nanoseconds snapshot_age{0};
  std::chrono::nanoseconds last_build{0};  // how long the last snapshot took to build
  std::uint64_t snapshots = 0;
  std::uint64_t stale_reads = 0;  // fresh_snapshot() calls answered nullptr for staleness
};

// The resources to watch, as the cluster serves them.
using ResourceResolver =
    std::function<Result<std::vector<kube::ResourceRef>>(kube::ApiClient& client,
                                                         std::stop_token stop)>;

// What `serve` watches: kube::cluster_state_resources() as discovery finds them served. A
// resource the cluster does not serve (an absent CRD) is left out and reported to `events`; the
// cache picks it up when it resolves again.
[[nodiscard]] ResourceResolver discover_cluster_state(CacheEventSink events);

class ClusterCache {
 public:
  ClusterCache(kube::ApiClientPtr client, ResourceResolver resolve,
               ClusterCacheOptions options = {}, CacheEventSink events = nullptr);
  ~ClusterCache();  // stop()
  ClusterCache(const ClusterCache&) = delete;
  ClusterCache& operator=(const ClusterCache&) = delete;

  // Starts the reflectors and the publisher.
  void start();
  // Stops and joins them. Idempotent.
  void stop();

  // The newest snapshot; nullptr before the first sync.
  [[nodiscard]] CacheSnapshotPtr snapshot() const;
  // The newest snapshot unless the cache is stale (or not synced): then nullptr.
  [[nodiscard]] CacheSnapshotPtr fresh_snapshot() const;
  [[nodiscard]] bool synced() const { return snapshot() != nullptr; }
  [[nodiscard]] bool stale() const;
  [[nodiscard]] CacheStatus status() const;
  // Prometheus text lines (topoguard_cluster_cache_*), with their HELP and TYPE.
  [[nodiscard]] std::string render_metrics() const;

 private:
  class Feed;
  using Feeds = std::vector<std::shared_ptr<Feed>>;

  void run(std::stop_token stop);
  // Resolves the resources and starts their reflectors; false when stopped first.
  bool start_feeds(const std::stop_token& stop);
  // Starts reflectors for those of `resources` not watched yet; returns their names.
  std::string add_feeds(const std::vector<kube::ResourceRef>& resources);
  void rediscover_loop(const std::stop_token& stop);
  [[nodiscard]] std::shared_ptr<const Feeds> feeds() const;
  void publish_loop(const std::stop_token& stop);
  void mark_dirty();
  [[nodiscard]] bool all_synced() const;

  const kube::ApiClientPtr client_;
  const ClusterCacheOptions options_;
  const CacheEventSink events_;

  mutable std::mutex mutex_;  // guards store_, dirty_, listed_
  std::condition_variable_any wake_;
  ObjectStore store_;
  bool dirty_ = false;
  bool listed_ = false;  // a list has replaced objects since the last snapshot
  SnapshotBuilder builder_;  // the publisher's only

  const ResourceResolver resolve_;
  mutable std::mutex feeds_mutex_;
  std::shared_ptr<const Feeds> feeds_;  // guarded by feeds_mutex_; replaced, never changed
  std::atomic<bool> resolved_{false};
  mutable std::mutex snapshot_mutex_;
  CacheSnapshotPtr snapshot_;  // guarded by snapshot_mutex_
  std::atomic<std::uint64_t> snapshots_{0};
  std::atomic<std::int64_t> last_build_ns_{0};
  mutable std::atomic<std::uint64_t> stale_reads_{0};
  std::jthread publisher_;
  std::jthread rediscoverer_;  // started by the publisher's thread, joined after it
};

using ClusterCachePtr = std::shared_ptr<ClusterCache>;

}  // namespace topoguard::cache
