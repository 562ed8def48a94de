// Reading and writing single objects (kube/objects.h) against the fake API server: create,
// get, update with optimistic concurrency, JSON patch, merge patch, server-side apply and
// delete, each answer read as the API server gives it.
#include "topoguard/kube/objects.h"

#include <gtest/gtest.h>

#include <string>

#include "fake_apiserver.h"
#include "test_clock.h"

namespace topoguard::kube {
namespace {

const ResourceRef kSecrets{"", "v1", "secrets", "ns"};
const ResourceRef kLeasesInNs{"coordination.k8s.io", "v1", "leases", "ns"};

class ObjectsTest : public ::testing::Test {
 protected:
  ObjectsTest() {
    Result<ApiClientPtr> made = ApiClient::create(fake_.config(), {}, clock_);
    EXPECT_TRUE(made.has_value()) << made.error().to_string();
    api_ = *made;
  }

  int count(const std::string& method) { return fake_.api_requests(method); }

  testing::FakeApiServer fake_;
  std::shared_ptr<testing::TestClock> clock_ = std::make_shared<testing::TestClock>(true);
  ApiClientPtr api_;
};

Json secret(const std::string& value) {
  return {{"apiVersion", "v1"},
          {"kind", "Secret"},
          {"metadata", {{"name", "tls"}, {"namespace", "ns"}}},
          {"data", {{"key", value}}}};
}

// Create, then a second create is 409 AlreadyExists; get reads it back; an update carrying the
// version read succeeds, one carrying a stale version is 409 Conflict; delete, then get is 404.
TEST_F(ObjectsTest, CreateGetUpdateDelete) {
  Result<ObjectResponse> created = create_object(*api_, kSecrets, secret("YQ=="));
  ASSERT_TRUE(created.has_value()) << created.error().to_string();
  EXPECT_EQ(created->status, 201);
  const std::string version = created->object["metadata"]["resourceVersion"];

  Result<ObjectResponse> again = create_object(*api_, kSecrets, secret("Yg=="));
  ASSERT_TRUE(again.has_value());
  EXPECT_TRUE(again->conflict());
  EXPECT_EQ(again->error->reason, "AlreadyExists");

  Result<ObjectResponse> read = get_object(*api_, kSecrets, "tls");
  ASSERT_TRUE(read.has_value());
  ASSERT_TRUE(read->ok());
  EXPECT_EQ(read->object["data"]["key"], "YQ==");

  Json changed = read->object;
  changed["data"]["key"] = "Yw==";
  Result<ObjectResponse> updated = update_object(*api_, kSecrets, "tls", changed);
  ASSERT_TRUE(updated.has_value());
  EXPECT_TRUE(updated->ok()) << updated->describe();
  EXPECT_NE(updated->object["metadata"]["resourceVersion"], version);

  Result<ObjectResponse> stale = update_object(*api_, kSecrets, "tls", changed);
  ASSERT_TRUE(stale.has_value());
  EXPECT_TRUE(stale->conflict());
  EXPECT_EQ(stale->error->reason, "Conflict");

  Result<ObjectResponse> deleted = delete_object(*api_, kSecrets, "tls");
  ASSERT_TRUE(deleted.has_value());
  EXPECT_TRUE(deleted->ok()) << deleted->describe();
  Result<ObjectResponse> gone = get_object(*api_, kSecrets, "tls");
  ASSERT_TRUE(gone.has_value());
  EXPECT_TRUE(gone->not_found());
  EXPECT_EQ(gone->error->reason, "NotFound");
}

// A JSON patch whose `test` fails changes nothing; a merge patch and an apply do.
TEST_F(ObjectsTest, PatchAndApply) {
  ASSERT_TRUE(create_object(*api_, kSecrets, secret("YQ=="))->ok());
  const Json failing = Json::array({{{"op", "test"}, {"path", "/data/key"}, {"value", "Zg=="}},
                                    {{"op", "replace"}, {"path", "/data/key"}, {"value", "Yg=="}}});
  Result<ObjectResponse> refused = patch_object(*api_, kSecrets, "tls", kJsonPatchContent, failing);
  ASSERT_TRUE(refused.has_value());
  EXPECT_FALSE(refused->ok());
  EXPECT_EQ(get_object(*api_, kSecrets, "tls")->object["data"]["key"], "YQ==");

  const Json passing = Json::array({{{"op", "test"}, {"path", "/data/key"}, {"value", "YQ=="}},
                                    {{"op", "add"}, {"path", "/data/other"}, {"value", "Yg=="}}});
  Result<ObjectResponse> patched = patch_object(*api_, kSecrets, "tls", kJsonPatchContent, passing);
  ASSERT_TRUE(patched.has_value());
  EXPECT_TRUE(patched->ok()) << patched->describe();
  EXPECT_EQ(patched->object["data"]["other"], "Yg==");

  Result<ObjectResponse> merged =
      patch_object(*api_, kSecrets, "tls", kMergePatchContent, {{"data", {{"other", nullptr}}}});
  ASSERT_TRUE(merged.has_value());
  EXPECT_TRUE(merged->ok()) << merged->describe();
  EXPECT_FALSE(merged->object["data"].contains("other"));

  // Apply creates an absent object; the same apply again is no write (same version).
  const Json lease = {{"apiVersion", "coordination.k8s.io/v1"},
                      {"kind", "Lease"},
                      {"metadata", {{"name", "writer"}, {"namespace", "ns"}}},
                      {"spec", {{"holderIdentity", "a"}}}};
  Result<ObjectResponse> applied =
      apply_object(*api_, kLeasesInNs, "writer", lease, {"topoguard", true});
  ASSERT_TRUE(applied.has_value());
  EXPECT_EQ(applied->status, 201) << applied->describe();
  Result<ObjectResponse> same =
      apply_object(*api_, kLeasesInNs, "writer", lease, {"topoguard", true});
  ASSERT_TRUE(same.has_value());
  EXPECT_TRUE(same->ok()) << same->describe();
  EXPECT_EQ(same->object["metadata"]["resourceVersion"],
            applied->object["metadata"]["resourceVersion"]);
  EXPECT_FALSE(apply_object(*api_, kLeasesInNs, "writer", lease, {}).has_value());
}

// Names that cannot name an object are refused before anything is sent.
TEST_F(ObjectsTest, BadNamesAreNotSent) {
  const int before = count("GET");
  for (const char* name : {"", "a/b", "A", "a?b=c", "..%2f"}) {
    EXPECT_FALSE(get_object(*api_, kSecrets, name).has_value()) << name;
  }
  EXPECT_EQ(count("GET"), before);
  EXPECT_TRUE(valid_object_name("topoguard-tls.v2"));
  EXPECT_FALSE(valid_object_name(std::string(254, 'a')));
}

// A body above the API server's limit is answered 413, not cut or retried.
TEST_F(ObjectsTest, OversizedBodyIs413) {
  const std::string large(3u * 1024 * 1024 + 16, 'A');
  Result<ObjectResponse> refused = create_object(*api_, kSecrets, secret(large));
  ASSERT_TRUE(refused.has_value()) << refused.error().to_string();
  EXPECT_EQ(refused->status, 413);
  EXPECT_EQ(count("POST"), 1);
}

}  // namespace
}  // namespace topoguard::kube
