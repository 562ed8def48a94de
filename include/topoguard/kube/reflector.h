// A reflector keeps a handler in step with one resource of the cluster, with the API machinery's
// list/watch contract (kubernetes.io "API Concepts", client-go's reflector):
//  - List with list_resource_pages (list.h): pages of `page_size` (500) chained by `continue`,
//    restarted when a continue token expires. The handler takes each page as it is read
//    (on_list_page), so the list is never held decoded whole; on_sync says the list is complete
//    and replaces whatever the handler held; on_list_discarded drops the pages of a list that
//    failed or starts over.
//  - Watch from the list's resourceVersion with allowWatchBookmarks=true and timeoutSeconds drawn
//    in [300, 600] s. ADDED/MODIFIED/DELETED go to on_event; BOOKMARK only moves the version.
//    resourceVersion is opaque: stored and sent back, never parsed or compared for order.
//  - 410 (HTTP status or an in-stream ERROR event with code 410) means the version is gone: list
//    again, after one backoff step as client-go (0.8-1.6 s after a healthy stretch). A clean end
//    of the stream means watch again from the last version, at once (unless the watch lasted
//    under a second with no event: then it counts as a failure). A cut stream, a connection error
//    or another error status means watch again from the last version after a backoff (800 ms
//    doubling to 30 s, jittered); an undecodable event means list again (an event was lost).
//  - 404 for the resource (a CRD that is not installed) is reported as not served; the reflector
//    tries again every `not_served_retry` (5 min; zero: it stops), so a CRD installed later is
//    picked up.
//  - Streaming lists (sendInitialEvents=true, resourceVersionMatch=NotOlderThan; KEP-3157) only
//    when `streaming_list` is set; a server that refuses them gets the paginated list instead.
// Threading: start() runs the loop on a thread of its own (blocking I/O on its own connection);
// the handler is called on that thread only. stop() cancels the request in flight and any wait,
// and joins. run() is the same loop on the caller's thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <random>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "topoguard/common/json.h"
#include "topoguard/kube/api_client.h"
#include "topoguard/kube/backoff.h"
#include "topoguard/kube/list.h"
#include "topoguard/kube/watch_stream.h"

namespace topoguard::kube {

enum class ReflectorErrorKind {
  kListFailed,     // the list failed; it is tried again after retry_in
  kWatchFailed,    // a watch failed or was cut; watched again from the last version
  kExpired,        // 410: the version or continue token is gone; listed again
  kNotServed,      // 404: the cluster does not serve the resource
  kInvalidStream,  // an undecodable list or event; listed again
};

[[nodiscard]] const char* reflector_error_kind_name(ReflectorErrorKind kind);

struct ReflectorError {
  ReflectorErrorKind kind = ReflectorErrorKind::kListFailed;
  std::string message;
  std::optional<ApiStatus> status;  // when the server answered with an error
  std::chrono::nanoseconds retry_in{0};
};

// What a reflector feeds. Called on the reflector's thread only.
class ReflectorHandler {
 public:
  virtual ~ReflectorHandler() = default;
  // Objects of a list in progress, a page at a time (a streaming list's initial events as they
  // come), kind and apiVersion set: kept aside until on_sync, since a list that fails or starts
  // over replaces nothing.
  virtual void on_list_page(std::vector<Json>&& items) = 0;
  // The pages given since the last on_sync are dropped: their list failed or starts over.
  virtual void on_list_discarded() = 0;
  // The list is complete at `resource_version`: the objects of its pages replace all the
  // handler held.
  virtual void on_sync(const std::string& resource_version) = 0;
  // kAdded, kModified or kDeleted, with the object (kind and apiVersion set).
  virtual void on_event(WatchEventType type, Json&& object) = 0;
  virtual void on_error(const ReflectorError& error) = 0;
  // A watch stream is open (its 2xx header arrived): from here the handler follows the server.
  virtual void on_watching() {}
};

struct ReflectorOptions {
  std::size_t page_size = 500;
  std::size_t page_bytes = 0;  // ListOptions::page_bytes
  std::chrono::seconds min_watch_timeout{300};
  std::chrono::seconds max_watch_timeout{600};
  // A watch read may wait this long beyond its timeoutSeconds before the stream counts as dead.
  std::chrono::seconds watch_idle_grace{60};
  bool streaming_list = false;
  std::size_t max_event_bytes = WatchStreamParser::kDefaultMaxEventBytes;
  std::chrono::nanoseconds not_served_retry = std::chrono::minutes(5);
  BackoffOptions backoff;
  std::string label_selector;
  std::string field_selector;
};

struct ReflectorStats {
  std::uint64_t lists = 0;    // complete lists (streaming ones included)
  std::uint64_t watches = 0;  // watch requests
  std::uint64_t events = 0;   // ADDED/MODIFIED/DELETED delivered
  std::uint64_t bookmarks = 0;
  std::uint64_t expirations = 0;  // 410s
  std::uint64_t errors = 0;       // on_error calls
};

class Reflector {
 public:
  Reflector(ApiClientPtr client, ResourceRef resource, ReflectorHandler& handler,
            ReflectorOptions options = {});
  ~Reflector();  // stop()
  Reflector(const Reflector&) = delete;
  Reflector& operator=(const Reflector&) = delete;

  // Starts the loop on a thread of its own.
  void start();
  // Cancels the request in flight and any wait, and joins the thread. Idempotent.
  void stop();
  // The loop, on the calling thread, until `stop` is requested.
  void run(std::stop_token stop);

  [[nodiscard]] const ResourceRef& resource() const { return resource_; }
  // The last version seen (list, event or bookmark); "" before the first list.
  [[nodiscard]] std::string resource_version() const;
  // True once on_sync has returned for a first list.
  [[nodiscard]] bool synced() const { return synced_.load(); }
  [[nodiscard]] ReflectorStats stats() const;

 private:
  enum class Outcome { kOk, kClosed, kFailed, kExpired, kNotServed, kInvalid, kRefused, kStopped };
  struct Attempt {
    Outcome outcome = Outcome::kOk;
    std::string message;
    std::optional<ApiStatus> status;
    bool list_unfinished = false;  // a streaming list ended before its initial events did
  };

  Attempt list(std::stop_token stop);
  // Watches from the current version; with `initial_events`, a streaming list first.
  Attempt watch(std::stop_token stop, bool initial_events);
  // The outcome of a watch from how its stream ended.
  Attempt finish_watch(const Result<ApiResponse>& response, const WatchStreamParser& parser,
                       const std::optional<ApiStatus>& stream_error,
                       const std::optional<Error>& invalid, bool initial_events, bool initial_done,
                       std::chrono::steady_clock::time_point started, std::uint64_t delivered,
                       const std::stop_token& stop);
  void set_resource_version(std::string version);
  void report(ReflectorErrorKind kind, const Attempt& attempt, std::chrono::nanoseconds retry_in);
  [[nodiscard]] std::chrono::seconds watch_timeout();

  const ApiClientPtr client_;
  const ResourceRef resource_;
  const std::string path_;
  ReflectorHandler& handler_;
  const ReflectorOptions options_;
  const ListOptions list_options_;

  mutable std::mutex mutex_;  // guards resource_version_
  std::string resource_version_;
  std::atomic<bool> synced_{false};
  std::atomic<std::uint64_t> lists_{0};
  std::atomic<std::uint64_t> watches_{0};
  std::atomic<std::uint64_t> events_{0};
  std::atomic<std::uint64_t> bookmarks_{0};
  std::atomic<std::uint64_t> expirations_{0};
  std::atomic<std::uint64_t> errors_{0};
  std::mt19937_64 random_;
  std::jthread thread_;
};

}  // namespace topoguard::kube
