// Reflector against the fake API server: paginated lists (with continue tokens that expire),
// watch events, bookmarks, 410 in the stream and as HTTP status, clean closes, cut and
// malformed streams, resources the server does not serve, Retry-After, streaming lists, and a
// prompt stop. Watches time out after a second or two here instead of 5-10 minutes.
#include "topoguard/kube/reflector.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <iterator>
#include <mutex>
#include <set>
#include <utility>

#include "eventually.h"
#include "fake_apiserver.h"
#include "test_clock.h"

namespace topoguard::kube {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// Records what the reflector delivers; tests wait on it.
class RecordingHandler final : public ReflectorHandler {
 public:
  struct Sync {
    std::vector<Json> items;
    std::string resource_version;
    int pages = 0;  // on_list_page calls that brought the items
  };

  // ReflectorHandler
  void on_list_page(std::vector<Json>&& items) override {
    std::lock_guard lock(mutex_);
    ++pending_pages_;
    pending_.insert(pending_.end(), std::make_move_iterator(items.begin()),
                    std::make_move_iterator(items.end()));
  }
  void on_list_discarded() override {
    std::lock_guard lock(mutex_);
    pending_.clear();
    pending_pages_ = 0;
  }
  void on_sync(const std::string& resource_version) override {
    std::lock_guard lock(mutex_);
    syncs_.push_back(
        Sync{std::exchange(pending_, {}), resource_version, std::exchange(pending_pages_, 0)});
    changed_.notify_all();
  }
  void on_event(WatchEventType type, Json&& object) override {
    std::lock_guard lock(mutex_);
    events_.push_back(std::string(watch_event_type_name(type)) + " " +
                      object["metadata"]["name"].get<std::string>());
    objects_.push_back(std::move(object));
    changed_.notify_all();
  }
  void on_error(const ReflectorError& error) override {
    std::lock_guard lock(mutex_);
    errors_.push_back(error);
    changed_.notify_all();
  }

  // Waits (10 s at most) until `done` holds; true if it did.
  bool wait(const std::function<bool()>& done) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, seconds(10), done);
  }
  bool wait_syncs(std::size_t count) {
    return wait([&] { return syncs_.size() >= count; });
  }
  bool wait_events(std::size_t count) {
    return wait([&] { return events_.size() >= count; });
  }
  bool wait_error(ReflectorErrorKind kind) {
    return wait([&] {
      for (const ReflectorError& error : errors_) {
        if (error.kind == kind) {
          return true;
        }
      }
      return false;
    });
  }

  std::vector<Sync> syncs() {
    std::lock_guard lock(mutex_);
    return syncs_;
  }
  std::vector<std::string> events() {
    std::lock_guard lock(mutex_);
    return events_;
  }
  std::vector<Json> objects() {
    std::lock_guard lock(mutex_);
    return objects_;
  }
  std::vector<ReflectorError> errors() {
    std::lock_guard lock(mutex_);
    return errors_;
  }
  std::size_t errors_of(ReflectorErrorKind kind) {
    std::lock_guard lock(mutex_);
    std::size_t count = 0;
    for (const ReflectorError& error : errors_) {
      count += error.kind == kind ? 1 : 0;
    }
    return count;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Json> pending_;  // the pages of a list in progress
  int pending_pages_ = 0;
  std::vector<Sync> syncs_;
  std::vector<std::string> events_;
  std::vector<Json> objects_;
  std::vector<ReflectorError> errors_;
};

Json namespace_object(const std::string& name, const std::string& label = "") {
  Json object = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", name}}}};
  if (!label.empty()) {
    object["metadata"]["labels"] = {{"v", label}};
  }
  return object;
}

Json slice_object(const std::string& name) {
  return {
      {"apiVersion", "resource.k8s.io/v1"},
      {"kind", "ResourceSlice"},
      {"metadata", {{"name", name}}},
      {"spec", {{"driver", "gpu.example.com"}, {"nodeName", name}, {"devices", Json::array()}}}};
}

Json configmap_object(const std::string& ns, const std::string& name) {
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata", {{"name", name}, {"namespace", ns}}}};
}

const ResourceRef kNamespaces{"", "v1", "namespaces", ""};

class ReflectorTest : public ::testing::Test {
 protected:
  explicit ReflectorTest(std::vector<std::string> fake_arguments = {"--bookmark-interval", "0.2"})
      : fake_(std::move(fake_arguments)) {
    Result<ApiClientPtr> made = ApiClient::create(fake_.config(), {}, clock_);
    EXPECT_TRUE(made.has_value());
    client_ = *made;
  }
  ~ReflectorTest() override {
    if (reflector_) {
      reflector_->stop();
    }
  }

  static ReflectorOptions quick_options() {
    ReflectorOptions options;
    options.page_size = 2;
    options.min_watch_timeout = seconds(2);
    options.max_watch_timeout = seconds(2);
    options.not_served_retry = milliseconds(100);
    return options;
  }
  Reflector& start(ResourceRef resource, ReflectorOptions options = quick_options()) {
    reflector_ = std::make_unique<Reflector>(client_, std::move(resource), handler_, options);
    reflector_->start();
    return *reflector_;
  }
  std::vector<Json> requests_to(const std::string& path) {
    std::vector<Json> found;
    for (Json& request : fake_.requests()) {
      if (request["path"] == path) {
        found.push_back(std::move(request));
      }
    }
    return found;
  }
  static bool is_watch(const Json& request) { return request["query"].contains("watch"); }
  static std::string param(const Json& request, const std::string& name) {
    const Json& query = request["query"];
    return query.contains(name) ? query[name][0].get<std::string>() : std::string("<absent>");
  }
  void wait_for_watch() {
    EXPECT_TRUE(testing::eventually([&] { return fake_.state()["watches"].get<int>() != 0; }));
  }

  testing::FakeApiServer fake_;
  std::shared_ptr<testing::TestClock> clock_ = std::make_shared<testing::TestClock>(true);
  ApiClientPtr client_;
  RecordingHandler handler_;
  std::unique_ptr<Reflector> reflector_;
};

// The first list comes in pages of `limit` chained by continue, never with a resourceVersion;
// items get kind and apiVersion from the list; the watch starts from the list's version with
// bookmarks and a timeout in range.
TEST_F(ReflectorTest, ListsInPagesThenWatchesFromTheListVersion) {
  for (const char* name : {"a", "b", "c", "d", "e"}) {
    fake_.apply("ADDED", namespace_object(name));
  }
  Reflector& reflector = start(kNamespaces);
  ASSERT_TRUE(handler_.wait_syncs(1));
  const auto sync = handler_.syncs()[0];
  ASSERT_EQ(sync.items.size(), 5u);
  EXPECT_EQ(sync.pages, 3);  // handed over page by page, never the whole list at once
  for (const Json& item : sync.items) {
    EXPECT_EQ(item["kind"], "Namespace");
    EXPECT_EQ(item["apiVersion"], "v1");
    EXPECT_EQ(item.begin().key(), "kind");  // put first, as the server writes objects
  }
  EXPECT_EQ(sync.items[4]["metadata"]["name"], "e");
  EXPECT_EQ(sync.resource_version, fake_.state()["resourceVersion"]);
  wait_for_watch();
  const auto requests = requests_to("/api/v1/namespaces");
  ASSERT_GE(requests.size(), 4u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_FALSE(is_watch(requests[i]));
    EXPECT_EQ(param(requests[i], "limit"), "2");
    EXPECT_EQ(param(requests[i], "resourceVersion"), "<absent>");
    EXPECT_EQ(param(requests[i], "continue") == "<absent>", i == 0);
  }
  EXPECT_TRUE(is_watch(requests[3]));
  EXPECT_EQ(param(requests[3], "resourceVersion"), sync.resource_version);
  EXPECT_EQ(param(requests[3], "allowWatchBookmarks"), "true");
  EXPECT_EQ(param(requests[3], "timeoutSeconds"), "2");
  EXPECT_TRUE(reflector.synced());
}

// Default options draw timeoutSeconds in [300, 600] and list in pages of 500.
TEST_F(ReflectorTest, DefaultWatchTimeoutAndPageSize) {
  ReflectorOptions options;
  start(kNamespaces, options);
  ASSERT_TRUE(handler_.wait_syncs(1));
  wait_for_watch();
  const auto requests = requests_to("/api/v1/namespaces");
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(param(requests[0], "limit"), "500");
  const int timeout = std::stoi(param(requests[1], "timeoutSeconds"));
  EXPECT_GE(timeout, 300);
  EXPECT_LE(timeout, 600);
}

// ADDED, MODIFIED and DELETED are delivered in order with the objects; the version follows.
TEST_F(ReflectorTest, WatchEventsInOrder) {
  Reflector& reflector = start(kNamespaces);
  ASSERT_TRUE(handler_.wait_syncs(1));
  wait_for_watch();
  fake_.apply("ADDED", namespace_object("x", "1"));
  fake_.apply("MODIFIED", namespace_object("x", "2"));
  const Json deleted = fake_.apply("DELETED", namespace_object("x"));
  ASSERT_TRUE(handler_.wait_events(3));
  EXPECT_EQ(handler_.events(), (std::vector<std::string>{"ADDED x", "MODIFIED x", "DELETED x"}));
  const auto objects = handler_.objects();
  EXPECT_EQ(objects[1]["metadata"]["labels"]["v"], "2");
  EXPECT_EQ(objects[1]["kind"], "Namespace");
  EXPECT_TRUE(handler_.wait([&] {
    return reflector.resource_version() == deleted["resourceVersion"].get<std::string>();
  }));
  EXPECT_EQ(reflector.stats().events, 3u);
}

// Events arriving one byte per chunk are delivered whole.
TEST_F(ReflectorTest, OneBytePerChunk) {
  fake_.control("config", {{"chunking", "byte"}});
  start(kNamespaces);
  ASSERT_TRUE(handler_.wait_syncs(1));
  wait_for_watch();
  fake_.apply("ADDED", namespace_object("bytewise", "1"));
  fake_.apply("MODIFIED", namespace_object("bytewise", "2"));
  ASSERT_TRUE(handler_.wait_events(2));
  EXPECT_EQ(handler_.events(), (std::vector<std::string>{"ADDED bytewise", "MODIFIED bytewise"}));
  EXPECT_EQ(handler_.objects()[1]["metadata"]["labels"]["v"], "2");
}

// A bookmark moves the version (here past a change to another resource) and delivers nothing.
TEST_F(ReflectorTest, BookmarkMovesTheVersionOnly) {
  Reflector& reflector = start(kNamespaces);
  ASSERT_TRUE(handler_.wait_syncs(1));
  wait_for_watch();
  const Json other = fake_.apply("ADDED", configmap_object("default", "unrelated"));
  const std::string version = other["resourceVersion"].get<std::string>();
  EXPECT_TRUE(testing::eventually([&] { return reflector.resource_version() == version; }))
      << reflector.resource_version() << " != " << version;
  EXPECT_GE(reflector.stats().bookmarks, 1u);
  EXPECT_TRUE(handler_.events().empty());
}

// A continue token that expires mid-list restarts the list (reported as expired); a second
// expiry in the same list makes it one unpaginated list.
TEST_F(ReflectorTest, ExpiredContinueRestartsTheList) {
  for (const char* name : {"a", "b", "c", "d", "e"}) {
    fake_.apply("ADDED", namespace_object(name));
  }
  fake_.control("expire-continue", {{"next", 2}});
  start(kNamespaces);
  ASSERT_TRUE(handler_.wait_syncs(1));
  EXPECT_EQ(handler_.syncs()[0].items.size(), 5u);
  EXPECT_EQ(handler_.syncs().size(), 1u);
  EXPECT_EQ(handler_.errors_of(ReflectorErrorKind::kExpired), 2u);
  const auto requests = requests_to("/api/v1/namespaces");
  // page 1, continue -> 410, page 1 again, continue -> 410, then one list without limit.
  ASSERT_GE(requests.size(), 5u);
  EXPECT_EQ(requests[1]["status"], 410);
  EXPECT_EQ(requests[3]["status"], 410);
  EXPECT_EQ(param(requests[4], "limit"), "<absent>");
  EXPECT_EQ(param(requests[4], "continue"), "<absent>");
}

// An in-stream ERROR 410 means list again; events after the relist still arrive.
TEST_F(ReflectorTest, InStreamExpiryRelists) {
  fake_.apply("ADDED", namespace_object("a"));
  Reflector& reflector = start(kNamespaces);
  ASSERT_TRUE(handler_.wait_syncs(1));
  wait_for_watch();
  fake_.control("expire-watches");
  ASSERT_TRUE(handler_.wait_syncs(2));
  EXPECT_EQ(handler_.errors_of(ReflectorErrorKind::kExpired), 1u);
  const auto errors = handler_.errors();
  ASSERT_TRUE(errors[0].status.has_value());
  EXPECT_EQ(errors[0].status->code, 410);
  EXPECT_EQ(errors[0].status->reason, "Expired");
  wait_for_watch();
  fake_.apply("ADDED", namespace_object("after"));
  ASSERT_TRUE(handler_.wait_events(1));
  EXPECT_EQ(handler_.events(), std::vector<std::string>{"ADDED after"});
  EXPECT_EQ(reflector.stats().lists, 2u);
  EXPECT_EQ(reflector.stats().expirations, 1u);
}

// HTTP 410 on the watch (its version compacted away while reconnecting) means list again too.
TEST_F(ReflectorTest, HttpGoneRelists) {
  fake_.control("config", {{"tooOldMode", "http"}, {"bookmarkInterval", 1000}});
  start(kNamespaces);
  ASSERT_TRUE(handler_.wait_syncs(1));
  wait_for_watch();
  fake_.apply("ADDED", configmap_object("default", "bump"));
  fake_.control("compact");
  fake_.control("close-watches", {{"bookmark", false}});
  ASSERT_TRUE(handler_.wait_syncs(2));
  EXPECT_TRUE(handler_.wait_error(ReflectorErrorKind::kExpired));
  bool saw_http_gone = false;
  for (const Json& request : requests_to("/api/v1/namespaces")) {
    saw_http_gone = saw_http_gone || (is_watch(request) && request["status"] == 410);
  }
  EXPECT_TRUE(saw_http_gone);
}

// A watch that ends cleanly at its timeout is followed by a new watch from the last version,
// with no relist and no error.
TEST_F(ReflectorTest, CleanCloseWatchesAgain) {
  ReflectorOptions options = quick_options();
  options.min_watch_timeout = seconds(1);
  options.max_watch_timeout = seconds(1);
  Reflector& reflector = start(kNamespaces, options);
  ASSERT_TRUE(handler_.wait_syncs(1));
  EXPECT_TRUE(testing::eventually([&] { return reflector.stats().watches >= 3; }))
      << reflector.stats().watches << " watches";
  fake_.apply("ADDED", namespace_object("late"));
  ASSERT_TRUE(handler_.wait_events(1));
  EXPECT_EQ(reflector.stats().lists, 1u);
  EXPECT_TRUE(handler_.errors().empty());
  std::set<std::string> versions;
  for (const Json& request : requests_to("/api/v1/namespaces")) {
    if (is_watch(request)) {
      versions.insert(param(request, "resourceVersion"));
    }
  }
  EXPECT_FALSE(versions.contains(""));
}

// A stream cut in the middle of an event is a watch failure: watch again from the last version
// after a backoff, without a relist.
TEST_F(ReflectorTest, CutStreamWatchesAgain) {
  Reflector& reflector = start(kNamespaces);
  ASSERT_TRUE(handler_.wait_syncs(1));
  wait_for_watch();
  fake_.control("cut-watches");
  ASSERT_TRUE(handler_.wait_error(ReflectorErrorKind::kWatchFailed));
  const auto failed = handler_.errors()[0];
  EXPECT_GE(failed.retry_in, milliseconds(800));
  EXPECT_NE(failed.message.find("the stream broke"), std::string::npos) << failed.message;
  fake_.apply("ADDED", namespace_object("after-cut"));
  ASSERT_TRUE(handler_.wait_events(1));
  EXPECT_EQ(reflector.stats().lists, 1u);
}

// A malformed event loses an event: the reflector lists again.
TEST_F(ReflectorTest, MalformedEventRelists) {
  start(kNamespaces);
  ASSERT_TRUE(handler_.wait_syncs(1));
  wait_for_watch();
  fake_.control("inject", {{"raw", "{\"type\":\"ADDED\",\"object\":{\"oops\"}}\n"}});
  ASSERT_TRUE(handler_.wait_error(ReflectorErrorKind::kInvalidStream));
  ASSERT_TRUE(handler_.wait_syncs(2));
}

// A resource the server does not serve is reported (404, not served) and tried again later; once
// served (a CRD installed), it syncs.
TEST_F(ReflectorTest, NotServedIsReportedAndRetried) {
  const ResourceRef nads{"k8s.cni.cncf.io", "v1", "network-attachment-definitions", ""};
  Reflector& reflector = start(nads);
  ASSERT_TRUE(handler_.wait_error(ReflectorErrorKind::kNotServed));
  const auto error = handler_.errors()[0];
  EXPECT_EQ(error.retry_in, milliseconds(100));
  ASSERT_TRUE(error.status.has_value());
  EXPECT_EQ(error.status->code, 404);
  EXPECT_NE(error.message.find("network-attachment-definitions.v1.k8s.cni.cncf.io"),
            std::string::npos);
  EXPECT_FALSE(reflector.synced());
  fake_.control("resources", {{"add",
                               {{{"group", "k8s.cni.cncf.io"},
                                 {"version", "v1"},
                                 {"resource", "network-attachment-definitions"},
                                 {"kind", "NetworkAttachmentDefinition"},
                                 {"namespaced", true}}}}});
  ASSERT_TRUE(handler_.wait_syncs(1));
  // Set once on_sync has returned.
  EXPECT_TRUE(testing::eventually([&] { return reflector.synced(); }));
}

// With not_served_retry zero the reflector stops after reporting.
TEST_F(ReflectorTest, NotServedCanStop) {
  ReflectorOptions options = quick_options();
  options.not_served_retry = std::chrono::nanoseconds(0);
  Reflector reflector(client_, {"x.example", "v1", "absent", ""}, handler_, options);
  reflector.run({});  // returns
  EXPECT_EQ(handler_.errors_of(ReflectorErrorKind::kNotServed), 1u);
}

// 429 with Retry-After on the list is waited out (on the clock) and the list completes.
TEST_F(ReflectorTest, RetryAfterOnTheList) {
  fake_.apply("ADDED", slice_object("node-1"));
  fake_.control("throttle",
                {{"count", 2}, {"retryAfter", 4}, {"match", "/apis/resource.k8s.io/v1/"}});
  start({"resource.k8s.io", "v1", "resourceslices", ""});
  ASSERT_TRUE(handler_.wait_syncs(1));
  const auto sync = handler_.syncs()[0];
  ASSERT_EQ(sync.items.size(), 1u);
  EXPECT_EQ(sync.items[0]["kind"], "ResourceSlice");
  EXPECT_EQ(sync.items[0]["apiVersion"], "resource.k8s.io/v1");
  int waits = 0;
  for (const auto sleep : clock_->sleeps()) {
    waits += sleep == seconds(4) ? 1 : 0;
  }
  EXPECT_EQ(waits, 2);
  EXPECT_TRUE(handler_.errors().empty());
}

// A namespaced reflector sees its namespace only.
TEST_F(ReflectorTest, NamespacedResource) {
  fake_.apply("ADDED", configmap_object("team-a", "one"));
  fake_.apply("ADDED", configmap_object("team-b", "two"));
  start({"", "v1", "configmaps", "team-a"});
  ASSERT_TRUE(handler_.wait_syncs(1));
  ASSERT_EQ(handler_.syncs()[0].items.size(), 1u);
  EXPECT_EQ(handler_.syncs()[0].items[0]["metadata"]["name"], "one");
  wait_for_watch();
  fake_.apply("ADDED", configmap_object("team-b", "three"));
  fake_.apply("ADDED", configmap_object("team-a", "four"));
  ASSERT_TRUE(handler_.wait_events(1));
  EXPECT_EQ(handler_.events(), std::vector<std::string>{"ADDED four"});
}

// stop() ends a reflector that is inside a five-minute watch at once.
TEST_F(ReflectorTest, StopIsPrompt) {
  ReflectorOptions options;
  start(kNamespaces, options);
  ASSERT_TRUE(handler_.wait_syncs(1));
  wait_for_watch();
  const auto began = std::chrono::steady_clock::now();
  reflector_->stop();
  EXPECT_LT(std::chrono::steady_clock::now() - began, seconds(2));
}

// A server without the WatchList gate refuses a streaming list (422): the reflector reports it
// and lists the usual way.
TEST_F(ReflectorTest, StreamingListFallsBackToList) {
  fake_.apply("ADDED", namespace_object("a"));
  ReflectorOptions options = quick_options();
  options.streaming_list = true;
  start(kNamespaces, options);
  ASSERT_TRUE(handler_.wait_syncs(1));
  EXPECT_EQ(handler_.syncs()[0].items.size(), 1u);
  ASSERT_EQ(handler_.errors_of(ReflectorErrorKind::kListFailed), 1u);
  EXPECT_EQ(handler_.errors()[0].status->code, 422);
  const auto requests = requests_to("/api/v1/namespaces");
  EXPECT_EQ(param(requests[0], "sendInitialEvents"), "true");
  EXPECT_FALSE(is_watch(requests[1]));
}

class StreamingListTest : public ReflectorTest {
 protected:
  StreamingListTest() : ReflectorTest({"--bookmark-interval", "0.2", "--watch-list"}) {}
};

// With the gate on, the streaming list delivers the initial objects as one sync (ended by the
// initial-events-end bookmark) and the same stream goes on as a watch.
TEST_F(StreamingListTest, InitialEventsThenWatch) {
  fake_.apply("ADDED", namespace_object("a"));
  fake_.apply("ADDED", namespace_object("b"));
  ReflectorOptions options = quick_options();
  options.streaming_list = true;
  Reflector& reflector = start(kNamespaces, options);
  ASSERT_TRUE(handler_.wait_syncs(1));
  EXPECT_EQ(handler_.syncs()[0].items.size(), 2u);
  EXPECT_EQ(handler_.syncs()[0].items[0]["kind"], "Namespace");
  fake_.apply("ADDED", namespace_object("c"));
  ASSERT_TRUE(handler_.wait_events(1));
  EXPECT_EQ(handler_.events(), std::vector<std::string>{"ADDED c"});
  const auto requests = requests_to("/api/v1/namespaces");
  ASSERT_GE(requests.size(), 1u);
  EXPECT_TRUE(is_watch(requests[0]));
  EXPECT_EQ(param(requests[0], "sendInitialEvents"), "true");
  EXPECT_EQ(param(requests[0], "resourceVersionMatch"), "NotOlderThan");
  EXPECT_EQ(param(requests[0], "resourceVersion"), "");
  EXPECT_TRUE(handler_.errors().empty());
  EXPECT_EQ(reflector.stats().lists, 1u);
}

}  // namespace
}  // namespace topoguard::kube
