#include "topoguard/cache/cluster_cache.h"

#include <algorithm>
#include <optional>
#include <sstream>
#include <utility>

#include "topoguard/common/free_memory.h"
#include "topoguard/kube/backoff.h"
#include "topoguard/kube/clock.h"
#include "topoguard/kube/discovery.h"

namespace topoguard::cache {

// One watched resource: its reflector and what it says of the resource's state. The reflector
// calls the handler on its own thread; the cache's readers read the atomics and, under
// errors_mutex, the error counts.
class ClusterCache::Feed final : public kube::ReflectorHandler {
 public:
  Feed(ClusterCache& cache, const kube::ResourceRef& resource)
      : cache_(cache),
        name_(resource.to_string()),
        group_(resource.group),
        plural_(resource.resource),
        reflector_(cache.client_, resource, *this, cache.options_.reflector) {}

  void start() { reflector_.start(); }
  void stop() { reflector_.stop(); }

  [[nodiscard]] const std::string& name() const { return name_; }
  [[nodiscard]] const std::string& group() const { return group_; }
  [[nodiscard]] const std::string& plural() const { return plural_; }
  [[nodiscard]] bool synced() const { return synced_.load(); }
  [[nodiscard]] bool not_served() const { return not_served_.load(); }
  // Zero while the watch follows the server.
  [[nodiscard]] std::chrono::nanoseconds broken_for(std::chrono::steady_clock::time_point now) const {
    const std::int64_t since = broken_since_.load();
    if (since == 0) {
      return std::chrono::nanoseconds(0);
    }
    return now.time_since_epoch() - std::chrono::nanoseconds(since);
  }
  [[nodiscard]] ResourceStatus status(std::chrono::steady_clock::time_point now,
                                      std::size_t objects) const {
    ResourceStatus status;
    status.resource = name_;
    status.synced = synced();
    status.not_served = not_served();
    status.objects = objects;
    status.broken_for = broken_for(now);
    status.stats = reflector_.stats();
    std::lock_guard lock(errors_mutex_);
    status.errors = errors_;
    return status;
  }

  // kube::ReflectorHandler
  void on_list_page(std::vector<Json>&& items) override {
    if (!listing_) {
      std::lock_guard lock(cache_.mutex_);
      listing_.emplace(cache_.store_.begin_list(name_));
    }
    listing_->add(std::move(items));  // unlocked: events of other resources go on meanwhile
  }
  void on_list_discarded() override { listing_.reset(); }
  void on_sync(const std::string& /*resource_version*/) override {
    {
      std::lock_guard lock(cache_.mutex_);
      if (!listing_) {
        listing_.emplace(cache_.store_.begin_list(name_));  // an empty list
      }
      cache_.store_.commit(std::move(*listing_));
      cache_.listed_ = true;
    }
    listing_.reset();
    not_served_ = false;
    healthy();
    if (!synced_.exchange(true)) {
      report({CacheEvent::Kind::kSynced, name_, "listed", {}});
    }
    cache_.mark_dirty();
  }
  void on_event(kube::WatchEventType type, Json&& object) override {
    {
      std::lock_guard lock(cache_.mutex_);
      cache_.store_.apply(name_, type, std::move(object));
    }
    healthy();
    cache_.mark_dirty();
  }
  void on_watching() override { healthy(); }
  void on_error(const kube::ReflectorError& error) override {
    {
      std::lock_guard lock(errors_mutex_);
      ++errors_[kube::reflector_error_kind_name(error.kind)];
    }
    report({CacheEvent::Kind::kReflectorError, name_, error.message, error.kind});
    if (error.kind == kube::ReflectorErrorKind::kNotServed) {
      // Nothing to follow: the resource holds no objects until the cluster serves it.
      {
        std::lock_guard lock(cache_.mutex_);
        cache_.store_.replace(name_, {});
      }
      not_served_ = true;
      healthy();
      synced_ = true;
      cache_.mark_dirty();
      return;
    }
    std::int64_t expected = 0;
    broken_since_.compare_exchange_strong(
        expected, cache_.client_->clock()->now().time_since_epoch().count());
  }

 private:
  void healthy() { broken_since_ = 0; }
  void report(const CacheEvent& event) const {
    if (cache_.events_) {
      cache_.events_(event);
    }
  }

  ClusterCache& cache_;
  const std::string name_;
  const std::string group_;
  const std::string plural_;
  std::atomic<bool> synced_{false};
  std::atomic<bool> not_served_{false};
  std::atomic<std::int64_t> broken_since_{0};  // steady-clock ticks; 0: in step
  std::optional<ObjectStore::Listing> listing_;  // a list in progress; the reflector's thread only
  mutable std::mutex errors_mutex_;
  std::map<std::string, std::uint64_t, std::less<>> errors_;
  kube::Reflector reflector_;  // last: stopped (by its destructor) before the rest goes
};

ResourceResolver discover_cluster_state(CacheEventSink events) {
  return [events = std::move(events)](kube::ApiClient& client, std::stop_token stop)
             -> Result<std::vector<kube::ResourceRef>> {
    Result<std::vector<kube::DiscoveredResource>> found =
        kube::discover_resources(client, kube::cluster_state_resources(), std::move(stop));
    if (!found) {
      return found.error();
    }
    std::vector<kube::ResourceRef> refs;
    for (const kube::DiscoveredResource& resource : *found) {
      if (resource.served()) {
        refs.push_back(*resource.ref);
      } else if (events) {
        events({CacheEvent::Kind::kNotServed, resource.wanted.to_string(), resource.not_served,
                kube::ReflectorErrorKind::kNotServed});
      }
    }
    return refs;
  };
}

ClusterCache::ClusterCache(kube::ApiClientPtr client, ResourceResolver resolve,
                           ClusterCacheOptions options, CacheEventSink events)
    : client_(std::move(client)),
      options_(std::move(options)),
      events_(std::move(events)),
      resolve_(std::move(resolve)),
      feeds_(std::make_shared<const Feeds>()) {}

ClusterCache::~ClusterCache() { stop(); }

void ClusterCache::start() {
  publisher_ = std::jthread([this](std::stop_token stop) { run(std::move(stop)); });
}

void ClusterCache::stop() {
  if (publisher_.joinable()) {
    publisher_.request_stop();
    wake_.notify_all();
    publisher_.join();
  }
  if (rediscoverer_.joinable()) {
    rediscoverer_.request_stop();
    rediscoverer_.join();
  }
  for (const auto& feed : *feeds()) {
    feed->stop();
  }
}

std::shared_ptr<const ClusterCache::Feeds> ClusterCache::feeds() const {
  std::lock_guard lock(feeds_mutex_);
  return feeds_;
}

void ClusterCache::mark_dirty() {
  {
    std::lock_guard lock(mutex_);
    dirty_ = true;
  }
  wake_.notify_all();
}

bool ClusterCache::all_synced() const {
  const std::shared_ptr<const Feeds> current = feeds();
  return resolved_.load() && std::all_of(current->begin(), current->end(),
                                         [](const auto& feed) { return feed->synced(); });
}

void ClusterCache::run(std::stop_token stop) {
  if (!start_feeds(stop)) {
    return;
  }
  if (options_.rediscover_every.count() > 0) {
    rediscoverer_ = std::jthread([this](std::stop_token own) { rediscover_loop(own); });
  }
  publish_loop(stop);
}

std::string ClusterCache::add_feeds(const std::vector<kube::ResourceRef>& resources) {
  Feeds added;
  {
    std::lock_guard lock(feeds_mutex_);
    auto next = std::make_shared<Feeds>(*feeds_);
    for (const kube::ResourceRef& resource : resources) {
      const bool watched = std::any_of(next->begin(), next->end(), [&](const auto& feed) {
        return feed->group() == resource.group && feed->plural() == resource.resource;
      });
      if (!watched) {
        added.push_back(std::make_shared<Feed>(*this, resource));
        next->push_back(added.back());
      }
    }
    feeds_ = std::move(next);
  }
  std::string names;
  for (const auto& feed : added) {
    names += (names.empty() ? "" : ", ") + feed->name();
    feed->start();
  }
  return names;
}

void ClusterCache::rediscover_loop(const std::stop_token& stop) {
  while (client_->clock()->sleep_for(options_.rediscover_every, stop)) {
    Result<std::vector<kube::ResourceRef>> resources = resolve_(*client_, stop);
    if (stop.stop_requested()) {
      return;
    }
    if (!resources) {
      if (events_) {
        events_({CacheEvent::Kind::kResolveError, "",
                 resources.error().to_string() + "; the resources watched stay as they are", {}});
      }
      continue;
    }
    const std::string names = add_feeds(*resources);
    if (!names.empty() && events_) {
      events_({CacheEvent::Kind::kResolved, "", "now also watching " + names, {}});
    }
  }
}

bool ClusterCache::start_feeds(const std::stop_token& stop) {
  kube::Backoff backoff(options_.reflector.backoff, client_->clock());
  while (true) {
    Result<std::vector<kube::ResourceRef>> resources = resolve_(*client_, stop);
    if (stop.stop_requested()) {
      return false;
    }
    if (resources) {
      resolved_ = true;
      const std::string names = add_feeds(*resources);
      if (events_) {
        events_({CacheEvent::Kind::kResolved, "", "watching " + names, {}});
      }
      if (names.empty()) {
        mark_dirty();  // nothing to wait for: an empty snapshot
      }
      return true;
    }
    const std::chrono::nanoseconds wait = backoff.next();
    if (events_) {
      events_({CacheEvent::Kind::kResolveError, "",
               resources.error().to_string() + "; trying again in " +
                   std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(wait)
                                      .count()) +
                   " ms",
               {}});
    }
    if (!client_->clock()->sleep_for(wait, stop)) {
      return false;
    }
  }
}

void ClusterCache::publish_loop(const std::stop_token& stop) {
  const kube::ClockPtr& clock = client_->clock();
  while (!stop.stop_requested()) {
    ObjectStore objects;
    {
      std::unique_lock lock(mutex_);
      const bool woken = wake_.wait(lock, stop, [this] { return dirty_ && all_synced(); });
      if (!woken) {
        return;
      }
    }
    // Events that arrive meanwhile join this build: one snapshot per burst.
    if (!clock->sleep_for(options_.publish_interval, stop)) {
      return;
    }
    bool listed = false;
    {
      std::lock_guard lock(mutex_);
      objects = store_;  // shares the objects: a copy of the maps only
      dirty_ = false;
      listed = std::exchange(listed_, false);
    }
    const auto began = std::chrono::steady_clock::now();
    const std::uint64_t generation = snapshots_.load() + 1;
    CacheSnapshotPtr next = builder_.build(objects, generation);
    last_build_ns_ = (std::chrono::steady_clock::now() - began).count();
    if (!next->errors.empty() && events_) {
      events_({CacheEvent::Kind::kSnapshotErrors, "",
               std::to_string(next->errors.size()) +
                   " objects could not be read into the cluster state; the first: " +
                   next->errors.front().to_string(),
               {}});
    }
    {
      std::lock_guard lock(snapshot_mutex_);
      std::swap(snapshot_, next);
    }
    snapshots_ = generation;
    if (listed) {
      // A list leaves behind what it decoded and, after a relist, the objects it replaced (with
      // the snapshot just swapped out, unless a review still reads it): handed back to the
      // system, so that resident memory settles near what is held.
      next.reset();
      objects = ObjectStore();
      release_free_memory();
    }
  }
}

CacheSnapshotPtr ClusterCache::snapshot() const {
  std::lock_guard lock(snapshot_mutex_);
  return snapshot_;
}

bool ClusterCache::stale() const {
  if (!resolved_.load()) {
    return false;
  }
  const auto now = client_->clock()->now();
  const std::shared_ptr<const Feeds> current = feeds();
  return std::any_of(current->begin(), current->end(), [&](const auto& feed) {
    return feed->broken_for(now) > options_.stale_after;
  });
}

CacheSnapshotPtr ClusterCache::fresh_snapshot() const {
  CacheSnapshotPtr current = snapshot();
  if (current == nullptr) {
    return nullptr;
  }
  if (stale()) {
    ++stale_reads_;
    return nullptr;
  }
  return current;
}

CacheStatus ClusterCache::status() const {
  CacheStatus status;
  const auto now = client_->clock()->now();
  if (!resolved_.load()) {
    return status;
  }
  const std::shared_ptr<const Feeds> current_feeds = feeds();
  std::vector<std::size_t> counts;
  {
    std::lock_guard lock(mutex_);
    for (const auto& feed : *current_feeds) {
      counts.push_back(store_.count(feed->name()));
    }
  }
  for (std::size_t i = 0; i < current_feeds->size(); ++i) {
    status.resources.push_back((*current_feeds)[i]->status(now, counts[i]));
    status.objects += counts[i];
  }
  const CacheSnapshotPtr current = snapshot();
  status.synced = current != nullptr;
  status.stale = stale();
  if (current != nullptr) {
    status.generation = current->generation;
    status.snapshot_age = std::chrono::steady_clock::now() - current->built_at;
  }
  status.last_build = std::chrono::nanoseconds(last_build_ns_.load());
  status.snapshots = snapshots_.load();
  status.stale_reads = stale_reads_.load();
  return status;
}

namespace {

double seconds_of(std::chrono::nanoseconds duration) {
  return std::chrono::duration<double>(duration).count();
}

}  // namespace

std::string ClusterCache::render_metrics() const {
  const CacheStatus current = status();
  std::ostringstream out;
  const auto family = [&out](const char* name, const char* type, const char* help) {
    out << "# HELP " << name << ' ' << help << "\n# TYPE " << name << ' ' << type << '\n';
  };
  family("topoguard_cluster_cache_synced", "gauge",
         "1 once every watched resource has been listed and a snapshot published.");
  out << "topoguard_cluster_cache_synced " << (current.synced ? 1 : 0) << '\n';
  family("topoguard_cluster_cache_stale", "gauge",
         "1 while some watch has been broken longer than the staleness bound: decisions that "
         "need the cluster answer unknown.");
  out << "topoguard_cluster_cache_stale " << (current.stale ? 1 : 0) << '\n';
  family("topoguard_cluster_cache_snapshot_age_seconds", "gauge",
         "Seconds since the current snapshot was built (it is rebuilt on every change).");
  out << "topoguard_cluster_cache_snapshot_age_seconds " << seconds_of(current.snapshot_age)
      << '\n';
  family("topoguard_cluster_cache_snapshot_build_seconds", "gauge",
         "How long the last snapshot took to build.");
  out << "topoguard_cluster_cache_snapshot_build_seconds " << seconds_of(current.last_build)
      << '\n';
  family("topoguard_cluster_cache_snapshots_total", "counter", "Snapshots published.");
  out << "topoguard_cluster_cache_snapshots_total " << current.snapshots << '\n';
  family("topoguard_cluster_cache_stale_reads_total", "counter",
         "Decisions that asked for the cluster while the cache was stale.");
  out << "topoguard_cluster_cache_stale_reads_total " << current.stale_reads << '\n';

  family("topoguard_cluster_cache_objects", "gauge", "Objects held, per resource.");
  for (const ResourceStatus& resource : current.resources) {
    out << "topoguard_cluster_cache_objects{resource=\"" << resource.resource << "\"} "
        << resource.objects << '\n';
  }
  family("topoguard_cluster_cache_not_served", "gauge",
         "1 for a resource the cluster does not serve (a CRD that is not installed).");
  for (const ResourceStatus& resource : current.resources) {
    out << "topoguard_cluster_cache_not_served{resource=\"" << resource.resource << "\"} "
        << (resource.not_served ? 1 : 0) << '\n';
  }
  family("topoguard_cluster_cache_watch_broken_seconds", "gauge",
         "How long a resource's watch has been broken; 0 while it follows the server.");
  for (const ResourceStatus& resource : current.resources) {
    out << "topoguard_cluster_cache_watch_broken_seconds{resource=\"" << resource.resource
        << "\"} " << seconds_of(resource.broken_for) << '\n';
  }
  family("topoguard_cluster_cache_lists_total", "counter",
         "Complete lists per resource: the first sync, then every relist.");
  for (const ResourceStatus& resource : current.resources) {
    out << "topoguard_cluster_cache_lists_total{resource=\"" << resource.resource << "\"} "
        << resource.stats.lists << '\n';
  }
  family("topoguard_cluster_cache_events_total", "counter", "Watch events applied per resource.");
  for (const ResourceStatus& resource : current.resources) {
    out << "topoguard_cluster_cache_events_total{resource=\"" << resource.resource << "\"} "
        << resource.stats.events << '\n';
  }
  family("topoguard_cluster_cache_watch_errors_total", "counter",
         "Reflector errors per resource and kind (list_failed, watch_failed, expired, "
         "not_served, invalid_stream).");
  for (const ResourceStatus& resource : current.resources) {
    for (const auto& [kind, count] : resource.errors) {
      out << "topoguard_cluster_cache_watch_errors_total{resource=\"" << resource.resource
          << "\",kind=\"" << kind << "\"} " << count << '\n';
    }
  }
  return out.str();
}

}  // namespace topoguard::cache
