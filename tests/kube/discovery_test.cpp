// discover_resources against the fake API server: wanted kinds resolved to the plural name and
// the first acceptable version the cluster serves, or to "not served".
#include "topoguard/kube/discovery.h"

#include <gtest/gtest.h>

#include <map>

#include "fake_apiserver.h"
#include "note_name.h"
#include "test_clock.h"

namespace topoguard::kube {
namespace {

Json resource(const std::string& group, const std::string& version, const std::string& plural,
              const std::string& kind, bool namespaced) {
  return {{"group", group},
          {"version", version},
          {"resource", plural},
          {"kind", kind},
          {"namespaced", namespaced}};
}

const Json kDraV1 = Json::array({
    resource("resource.k8s.io", "v1", "deviceclasses", "DeviceClass", false),
    resource("resource.k8s.io", "v1", "resourceslices", "ResourceSlice", false),
    resource("resource.k8s.io", "v1", "resourceclaims", "ResourceClaim", true),
    resource("resource.k8s.io", "v1", "resourceclaimtemplates", "ResourceClaimTemplate", true),
});

Json dra_beta2() {
  Json added = Json::array();
  for (Json entry : kDraV1) {
    entry["version"] = "v1beta2";
    added.push_back(std::move(entry));
  }
  return added;
}

const Json kNad = resource("k8s.cni.cncf.io", "v1", "network-attachment-definitions",
                           "NetworkAttachmentDefinition", true);

struct Case {
  std::string_view note;
  Json add;     // /_fake/resources add
  Json remove;  // /_fake/resources remove
  WantedResource wanted;
  std::string version;  // expected; "" when not served
  std::string plural;   // expected resource name
  bool namespaced = false;
  std::string not_served;  // a part of the reason, when not served
};

const WantedResource kClaim{"resource.k8s.io", "ResourceClaim", "", {"v1", "v1beta2", "v1beta1"}};
const WantedResource kNadWanted{"k8s.cni.cncf.io", "NetworkAttachmentDefinition", "", {"v1"}};

const Case kCases[] = {
    {"v1_served", Json::array(), Json::array(), kClaim, "v1", "resourceclaims", true, ""},
    {"v1_and_v1beta2_served_first_acceptable_wins", dra_beta2(), Json::array(), kClaim, "v1",
     "resourceclaims", true, ""},
    {"only_v1beta2_served", dra_beta2(), kDraV1, kClaim, "v1beta2", "resourceclaims", true, ""},
    {"cluster_scoped", Json::array(), Json::array(),
     WantedResource{"resource.k8s.io", "ResourceSlice", "", {"v1"}}, "v1", "resourceslices", false,
     ""},
    {"acceptable_version_lacks_the_kind", Json::array(), Json::array(),
     WantedResource{"resource.k8s.io", "DeviceTaintRule", "", {"v1", "v1beta2"}}, "", "", false,
     "no DeviceTaintRule in resource.k8s.io v1"},
    {"no_acceptable_version_served", Json::array(), Json::array(),
     WantedResource{"resource.k8s.io", "ResourceClaim", "", {"v2", "v1beta3"}}, "", "", false,
     "resource.k8s.io serves none of v2, v1beta3 (it serves v1, v1alpha3)"},
    {"absent_crd_group", Json::array(), Json::array(), kNadWanted, "", "", false,
     "group k8s.cni.cncf.io is not served"},
    {"crd_installed", Json::array({kNad}), Json::array(), kNadWanted, "v1",
     "network-attachment-definitions", true, ""},
    {"kind_the_group_lacks", Json::array(), Json::array(),
     WantedResource{"resource.k8s.io", "ResourcePool", "", {"v1"}}, "", "", false,
     "no ResourcePool in resource.k8s.io v1"},
    {"by_plural_name", Json::array(), Json::array(),
     WantedResource{"resource.k8s.io", "", "resourceclaimtemplates", {"v1"}}, "v1",
     "resourceclaimtemplates", true, ""},
    {"core_group", Json::array(), Json::array(), WantedResource{"", "Namespace", "", {"v1"}}, "v1",
     "namespaces", false, ""},
    {"no_versions_given_preferred_ga_before_beta", dra_beta2(), Json::array(),
     WantedResource{"resource.k8s.io", "ResourceClaim", "", {}}, "v1", "resourceclaims", true, ""},
    {"no_versions_given_the_one_served", Json::array(), Json::array(),
     WantedResource{"apps", "Deployment", "", {}}, "v1", "deployments", true, ""},
};

ApiClientPtr make_client(const testing::FakeApiServer& fake,
                         const std::string& token = "test-token") {
  Result<ApiClientPtr> made =
      ApiClient::create(fake.config(token), {}, std::make_shared<testing::TestClock>(true));
  EXPECT_TRUE(made.has_value());
  return made ? *made : nullptr;
}

class DiscoveryTest : public ::testing::TestWithParam<Case> {
 protected:
  testing::FakeApiServer fake_;
  ApiClientPtr client_ = make_client(fake_);
};

TEST_P(DiscoveryTest, Resolves) {
  const Case& c = GetParam();
  fake_.control("resources", {{"add", c.add}, {"remove", c.remove}});
  Result<std::vector<DiscoveredResource>> found = discover_resources(*client_, {c.wanted});
  ASSERT_TRUE(found.has_value()) << found.error().to_string();
  ASSERT_EQ(found->size(), 1u);
  const DiscoveredResource& resolved = found->front();
  if (c.version.empty()) {
    EXPECT_FALSE(resolved.served());
    EXPECT_NE(resolved.not_served.find(c.not_served), std::string::npos) << resolved.not_served;
    return;
  }
  ASSERT_TRUE(resolved.served()) << resolved.not_served;
  EXPECT_EQ(resolved.ref->group, c.wanted.group);
  EXPECT_EQ(resolved.ref->version, c.version);
  EXPECT_EQ(resolved.ref->resource, c.plural);
  EXPECT_EQ(resolved.namespaced, c.namespaced);
  EXPECT_TRUE(resolved.ref->namespace_.empty());
}

INSTANTIATE_TEST_SUITE_P(Cases, DiscoveryTest, ::testing::ValuesIn(kCases), testing::NoteName());

class DiscoveryClusterTest : public ::testing::Test {
 protected:
  testing::FakeApiServer fake_;
  ApiClientPtr client_ = make_client(fake_);
};

// The cluster-state table resolves in one pass, reading each discovery document once; the
// fake's DeviceTaintRule is v1alpha3 and it has no NetworkAttachmentDefinition CRD.
TEST_F(DiscoveryClusterTest, ClusterStateTableReadsEachDocumentOnce) {
  Result<std::vector<DiscoveredResource>> found =
      discover_resources(*client_, cluster_state_resources());
  ASSERT_TRUE(found.has_value()) << found.error().to_string();
  ASSERT_EQ(found->size(), cluster_state_resources().size());
  std::vector<std::string> resolved;
  for (const DiscoveredResource& entry : *found) {
    resolved.push_back(entry.served() ? entry.ref->to_string() : "-" + entry.wanted.to_string());
  }
  EXPECT_EQ(resolved,
            (std::vector<std::string>{
                "deviceclasses.v1.resource.k8s.io", "resourceslices.v1.resource.k8s.io",
                "resourceclaimtemplates.v1.resource.k8s.io", "resourceclaims.v1.resource.k8s.io",
                "devicetaintrules.v1alpha3.resource.k8s.io",
                "-NetworkAttachmentDefinition.k8s.cni.cncf.io", "namespaces.v1"}));
  std::map<std::string, int> gets;
  for (const Json& request : fake_.requests()) {
    ++gets[request["path"].get<std::string>()];
  }
  EXPECT_EQ(gets, (std::map<std::string, int>{{"/api", 1},
                                              {"/apis", 1},
                                              {"/api/v1", 1},
                                              {"/apis/resource.k8s.io/v1", 1},
                                              {"/apis/resource.k8s.io/v1alpha3", 1}}));
}

// Credentials the server refuses are an error naming the 401, not "nothing served".
TEST_F(DiscoveryClusterTest, RevokedTokenIsAnError) {
  fake_.control("tokens", {{"revoke", {"test-token"}}});
  Result<std::vector<DiscoveredResource>> found =
      discover_resources(*client_, cluster_state_resources());
  ASSERT_FALSE(found.has_value());
  EXPECT_EQ(found.error().code, ErrorCode::kIo);
  EXPECT_NE(found.error().message.find("401"), std::string::npos) << found.error().message;
}

}  // namespace
}  // namespace topoguard::kube
