// list_resource against the fake API server: the one-shot paginated list that reflectors and
// one-shot readers share.
#include "topoguard/kube/list.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fake_apiserver.h"
#include "test_clock.h"

namespace topoguard::kube {
namespace {

Json configmap(const std::string& ns, const std::string& name, const std::string& team) {
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata", {{"name", name}, {"namespace", ns}, {"labels", {{"team", team}}}}}};
}

class ListTest : public ::testing::Test {
 protected:
  ListTest() {
    Result<ApiClientPtr> made =
        ApiClient::create(fake_.config(), {}, std::make_shared<testing::TestClock>(true));
    EXPECT_TRUE(made.has_value());
    client_ = *made;
  }
  std::vector<Json> lists_of(const std::string& path) {
    std::vector<Json> found;
    for (Json& request : fake_.requests()) {
      if (request["path"] == path) {
        found.push_back(std::move(request));
      }
    }
    return found;
  }

  testing::FakeApiServer fake_;
  ApiClientPtr client_;
};

// Every page is read once; items are typed; selectors and namespaces narrow the list.
TEST_F(ListTest, ReadsEveryPage) {
  for (int i = 0; i < 7; ++i) {
    fake_.apply("ADDED", configmap(i % 2 == 0 ? "a" : "b", "cm-" + std::to_string(i),
                                   i < 4 ? "red" : "blue"));
  }
  ListResult all = list_resource(*client_, {"", "v1", "configmaps", ""}, {3, "", ""});
  ASSERT_TRUE(all.ok()) << all.error;
  ASSERT_EQ(all.items.size(), 7u);
  EXPECT_EQ(all.items[0]["kind"], "ConfigMap");
  EXPECT_EQ(all.items[0]["apiVersion"], "v1");
  EXPECT_EQ(all.resource_version, fake_.state()["resourceVersion"]);
  EXPECT_EQ(lists_of("/api/v1/configmaps").size(), 3u);

  ListResult red_in_a =
      list_resource(*client_, {"", "v1", "configmaps", "a"}, {500, "team=red", ""});
  ASSERT_TRUE(red_in_a.ok()) << red_in_a.error;
  ASSERT_EQ(red_in_a.items.size(), 2u);  // cm-0 and cm-2
  EXPECT_EQ(red_in_a.items[1]["metadata"]["name"], "cm-2");
  const auto requests = lists_of("/api/v1/namespaces/a/configmaps");
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0]["query"]["labelSelector"][0], "team=red");
}

// list_resource_pages hands over each page as it is read, typed, and keeps none of it; after
// an expired continue token the pages start again from the first.
TEST_F(ListTest, PagesAreHandedOverOneByOne) {
  for (int i = 0; i < 7; ++i) {
    fake_.apply("ADDED", configmap("a", "cm-" + std::to_string(i), "red"));
  }
  fake_.control("expire-continue", {{"next", 1}});
  std::vector<std::vector<std::string>> pages;
  int expired = 0;
  ListResult listed = list_resource_pages(
      *client_, {"", "v1", "configmaps", ""}, {3, "", ""},
      [&](std::vector<Json>&& items) {
        std::vector<std::string> names;
        for (const Json& item : items) {
          EXPECT_EQ(item["kind"], "ConfigMap");
          names.push_back(item["metadata"]["name"].get<std::string>());
        }
        pages.push_back(std::move(names));
      },
      {}, [&](const ApiStatus& /*status*/) { ++expired; });
  ASSERT_TRUE(listed.ok()) << listed.error;
  EXPECT_TRUE(listed.items.empty());
  EXPECT_EQ(expired, 1);
  // The first page, then (its continue token expired) the three pages of the list again.
  ASSERT_EQ(pages.size(), 4u);
  EXPECT_EQ(pages[0], pages[1]);
  EXPECT_EQ(pages[1], (std::vector<std::string>{"cm-0", "cm-1", "cm-2"}));
  EXPECT_EQ(pages[2].size(), 3u);
  EXPECT_EQ(pages[3], (std::vector<std::string>{"cm-6"}));
}

// Page size 0 is one request without a limit.
TEST_F(ListTest, Unpaginated) {
  fake_.apply("ADDED", configmap("a", "one", "red"));
  ListResult listed = list_resource(*client_, {"", "v1", "configmaps", ""}, {0, "", ""});
  ASSERT_TRUE(listed.ok());
  const auto requests = lists_of("/api/v1/configmaps");
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_FALSE(requests[0]["query"].contains("limit"));
}

// An expired continue token is reported to the callback and the list starts over.
TEST_F(ListTest, ExpiredContinueStartsOver) {
  for (int i = 0; i < 5; ++i) {
    fake_.apply("ADDED", configmap("a", "cm-" + std::to_string(i), "red"));
  }
  fake_.control("expire-continue", {{"next", 1}});
  int reported = 0;
  ListResult listed = list_resource(*client_, {"", "v1", "configmaps", ""}, {2, "", ""}, {},
                                    [&](const ApiStatus& status) {
                                      EXPECT_EQ(status.code, 410);
                                      EXPECT_EQ(status.reason, "Expired");
                                      ++reported;
                                    });
  ASSERT_TRUE(listed.ok()) << listed.error;
  EXPECT_EQ(listed.items.size(), 5u);
  EXPECT_EQ(listed.expired_continues, 1);
  EXPECT_EQ(reported, 1);
}

// A resource the cluster does not serve: not_served(), with the 404 Status.
TEST_F(ListTest, NotServed) {
  ListResult listed = list_resource(
      *client_, {"leaderworkerset.x-k8s.io", "v1", "leaderworkersets", ""}, ListOptions{});
  EXPECT_FALSE(listed.ok());
  EXPECT_TRUE(listed.not_served());
  EXPECT_EQ(listed.status->reason, "NotFound");
  EXPECT_NE(listed.error.find("404 NotFound"), std::string::npos);
}

// A stop requested before the list ends it.
TEST_F(ListTest, Stopped) {
  std::stop_source stop;
  stop.request_stop();
  ListResult listed =
      list_resource(*client_, {"", "v1", "configmaps", ""}, ListOptions{}, stop.get_token());
  EXPECT_TRUE(listed.stopped);
  EXPECT_FALSE(listed.ok());
}

}  // namespace
}  // namespace topoguard::kube
