#include "topoguard/admission/admission_review.h"

#include <string>

#include <gtest/gtest.h>

#include "note_name.h"
#include "topoguard/common/base64.h"
#include "typed_patch.h"

namespace topoguard::admission {
namespace {

constexpr std::string_view kGoodReview = R"({
  "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
  "request": {
    "uid": "abc-123", "kind": {"group": "resource.k8s.io", "version": "v1",
                               "kind": "ResourceClaimTemplate"},
    "operation": "CREATE", "namespace": "ml", "name": "gpu-nic", "dryRun": true,
    "object": {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate"},
    "oldObject": null
  }
})";

struct BadCase {
  std::string_view note;
  std::string body;
  ErrorCode code;
  std::string_view field;
};

std::string review_with_request(std::string_view request) {
  return R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":)" +
         std::string(request) + "}";
}

class BadReviewTest : public ::testing::TestWithParam<BadCase> {};

// Every malformed body is an Error with a stable code and the offending field, never a throw.
TEST_P(BadReviewTest, IsRejectedWithCodeAndField) {
  const BadCase& c = GetParam();
  Result<AdmissionRequest> parsed = parse_admission_review(c.body);
  ASSERT_FALSE(parsed.has_value());
  EXPECT_EQ(parsed.error().code, c.code) << parsed.error().to_string();
  EXPECT_EQ(parsed.error().location.field, c.field);
}

INSTANTIATE_TEST_SUITE_P(
    Bodies, BadReviewTest,
    ::testing::Values(
        BadCase{"EmptyBody", "", ErrorCode::kInvalidJson, ""},
        BadCase{"TruncatedJson", R"({"apiVersion": "admission.k8s.io/v1")",
                ErrorCode::kInvalidJson, ""},
        BadCase{"NotAnObject", "[1,2]", ErrorCode::kWrongType, ""},
        BadCase{"DeepNesting", std::string(10000, '[') + std::string(10000, ']'),
                ErrorCode::kTooDeep, ""},
        BadCase{"MissingApiVersion", R"({"kind":"AdmissionReview","request":{"uid":"u"}})",
                ErrorCode::kMissingField, "/apiVersion"},
        BadCase{"V1beta1Review",
                R"({"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview",
                    "request":{"uid":"u","operation":"CREATE"}})",
                ErrorCode::kInvalidValue, "/apiVersion"},
        BadCase{"WrongKind",
                R"({"apiVersion":"admission.k8s.io/v1","kind":"Pod","request":{"uid":"u"}})",
                ErrorCode::kInvalidValue, "/kind"},
        BadCase{"MissingRequest", R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"})",
                ErrorCode::kMissingField, "/request"},
        BadCase{"NullRequest", review_with_request("null"), ErrorCode::kMissingField,
                "/request"},
        BadCase{"RequestNotObject", review_with_request("\"x\""), ErrorCode::kWrongType,
                "/request"},
        BadCase{"MissingUid", review_with_request(R"({"operation":"CREATE"})"),
                ErrorCode::kMissingField, "/request/uid"},
        BadCase{"EmptyUid", review_with_request(R"({"uid":"","operation":"CREATE"})"),
                ErrorCode::kInvalidValue, "/request/uid"},
        BadCase{"NumericUid", review_with_request(R"({"uid":7,"operation":"CREATE"})"),
                ErrorCode::kWrongType, "/request/uid"},
        BadCase{"MissingOperation", review_with_request(R"({"uid":"u"})"),
                ErrorCode::kMissingField, "/request/operation"},
        BadCase{"ObjectIsArray",
                review_with_request(R"({"uid":"u","operation":"CREATE","object":[]})"),
                ErrorCode::kWrongType, "/request/object"},
        BadCase{"DryRunIsString",
                review_with_request(R"({"uid":"u","operation":"CREATE","dryRun":"yes"})"),
                ErrorCode::kWrongType, "/request/dryRun"},
        BadCase{"KindIsString",
                review_with_request(R"({"uid":"u","operation":"CREATE","kind":"Pod"})"),
                ErrorCode::kWrongType, "/request/kind"}),
    topoguard::testing::NoteName());

// A well-formed v1 request yields every field the handler and the logs use.
TEST(AdmissionReviewTest, ParsesEveryUsedField) {
  Result<AdmissionRequest> parsed = parse_admission_review(kGoodReview);
  ASSERT_TRUE(parsed.has_value()) << parsed.error().to_string();
  EXPECT_EQ(parsed->uid, "abc-123");
  EXPECT_EQ(parsed->kind.group, "resource.k8s.io");
  EXPECT_EQ(parsed->kind.version, "v1");
  EXPECT_EQ(parsed->kind.kind, "ResourceClaimTemplate");
  EXPECT_EQ(parsed->operation, "CREATE");
  EXPECT_EQ(parsed->namespace_name, "ml");
  EXPECT_EQ(parsed->name, "gpu-nic");
  EXPECT_TRUE(parsed->dry_run);
  EXPECT_TRUE(parsed->object.is_object());
  EXPECT_TRUE(parsed->old_object.is_null());
}

// The object and oldObject are built whole (managedFields and any field a future rule may read
// included); the rest of the request is not built but must still be valid JSON; a repeated key
// of the review takes its last value, as the object's own keys do.
TEST(AdmissionReviewTest, ObjectsAreBuiltWholeAndUnreadPartsStillChecked) {
  const std::string object =
      R"({"metadata":{"name":"n","managedFields":[{"manager":"m"}],"annotations":{"a":"1"}},)"
      R"("spec":{"future":{"field":[1,2.5,null,true]}}})";
  const std::string body = review_with_request(
      R"({"uid":"first","userInfo":{"username":"a","extra":{"k":["v"]}},"uid":"u",)"
      R"("operation":"CREATE","options":{"kind":"CreateOptions"},"object":)" + object +
      R"(,"oldObject":)" + object + "}");
  Result<AdmissionRequest> parsed = parse_admission_review(body);
  ASSERT_TRUE(parsed.has_value()) << parsed.error().to_string();
  EXPECT_EQ(parsed->uid, "u");
  EXPECT_EQ(parsed->object, Json::parse(object));
  EXPECT_EQ(parsed->object.dump(), Json::parse(object).dump());
  EXPECT_EQ(parsed->old_object, Json::parse(object));

  std::string broken = body;
  broken.replace(broken.find(R"("username":"a")"), 14, R"("username":a)");
  EXPECT_EQ(parse_admission_review(broken).error().code, ErrorCode::kInvalidJson);
  std::string bad_utf8 = body;
  bad_utf8.replace(bad_utf8.find("CreateOptions"), 6, std::string(1, '\xff'));
  EXPECT_EQ(parse_admission_review(bad_utf8).error().code, ErrorCode::kInvalidJson);
}

// Nothing requires userInfo: one that is not an object, or a username that is not a string,
// leaves the requester anonymous and the review is judged, not refused.
TEST(AdmissionReviewTest, UserInfoOfAnyShapeIsJudged) {
  const auto request = [](const std::string& user_info) {
    return review_with_request(R"({"uid":"u","operation":"CREATE","namespace":"ml",)"
                               R"("userInfo":)" + user_info + R"(,"object":{"kind":"Pod"}})");
  };
  for (const std::string user_info :
       {R"("alice")", "[1,2]", "7", "true", "null", R"({"username":5})", R"({"username":null})",
        R"({"groups":["g"]})"}) {
    Result<AdmissionRequest> parsed = parse_admission_review(request(user_info));
    ASSERT_TRUE(parsed.has_value()) << user_info << ": " << parsed.error().to_string();
    EXPECT_EQ(parsed->username, "") << user_info;
    EXPECT_EQ(parsed->namespace_name, "ml");
  }
  EXPECT_EQ(parse_admission_review(request(R"({"username":"alice"})"))->username, "alice");
}

// Strings nested inside strings do not count as nesting, so real objects pass the depth check.
TEST(AdmissionReviewTest, BracketsInsideStringsAreNotNesting) {
  std::string body(kGoodReview);
  body.replace(body.find("\"gpu-nic\""), 9, "\"" + std::string(500, '[') + "\\\"{\"");
  EXPECT_TRUE(parse_admission_review(body).has_value());
}

// The response has the envelope the API server verifies, and a patch only when there is one.
TEST(AdmissionReviewTest, ResponseEnvelopeAndOptionalFields) {
  AdmissionResponse response;
  response.uid = "abc-123";
  Json plain = to_admission_review(response);
  EXPECT_EQ(plain["apiVersion"], "admission.k8s.io/v1");
  EXPECT_EQ(plain["kind"], "AdmissionReview");
  EXPECT_EQ(plain["response"]["uid"], "abc-123");
  EXPECT_EQ(plain["response"]["allowed"], true);
  EXPECT_FALSE(plain["response"].contains("patch"));
  EXPECT_FALSE(plain["response"].contains("patchType"));
  EXPECT_FALSE(plain["response"].contains("status"));

  response.patch = {{engine::PatchOp::kAdd, "/a", 1}};
  response.warnings = {"w"};
  response.audit_annotations["decision"] = "patch";
  Json patched = to_admission_review(response);
  EXPECT_EQ(patched["response"]["patchType"], "JSONPatch");
  EXPECT_EQ(patched["response"]["patch"], base64_encode(R"([{"op":"add","path":"/a","value":1}])"));
  EXPECT_EQ(patched["response"]["warnings"], Json::array({"w"}));
  EXPECT_EQ(patched["response"]["auditAnnotations"]["decision"], "patch");

  response.allowed = false;
  response.status = {403, "Forbidden", "no"};
  Json denied = to_admission_review(response);
  EXPECT_EQ(denied["response"]["status"]["code"], 403);
  EXPECT_EQ(denied["response"]["status"]["reason"], "Forbidden");
  EXPECT_EQ(denied["response"]["status"]["message"], "no");
}

struct PatchJsonCase {
  std::string_view note;
  std::string_view patch;
};

class PatchJsonTest : public ::testing::TestWithParam<PatchJsonCase> {};

// The patch is written without nlohmann's serializer, byte for byte as dump() with invalid UTF-8
// replaced would write it.
TEST_P(PatchJsonTest, SameBytesAsNlohmannDump) {
  const Json patch = Json::parse(GetParam().patch);
  EXPECT_EQ(patch_json(topoguard::testing::typed_patch(patch)),
            patch.dump(-1, ' ', false, Json::error_handler_t::replace));
}

INSTANTIATE_TEST_SUITE_P(
    Patches, PatchJsonTest,
    ::testing::Values(
        PatchJsonCase{"Empty", R"([])"},
        PatchJsonCase{"AddArray",
                      R"([{"op":"add","path":"/spec/spec/devices/constraints","value":[]}])"},
        PatchJsonCase{"EscapedPathAndObject",
                      R"([{"op":"add","path":"/a~1b/~0c","value":{"requests":["gpu"],"n":null}}])"},
        PatchJsonCase{"Scalars", R"([{"op":"add","path":"/x","value":[true,false,0,-1,
            18446744073709551615,-9223372036854775808,1.5,-0.0,1e300,2.5e-8,{},[],""]}])"},
        PatchJsonCase{"Escapes", R"([{"op":"add","path":"/s",
            "value":"quote \" backslash \\ tab \t nl \n ctl \u0001 del \u007f"}])"},
        PatchJsonCase{"NonAscii",
                      R"([{"op":"add","path":"/u","value":"\u00e9\u20ac\ud83d\ude00"}])"}),
    topoguard::testing::NoteName());

// Bytes that are not UTF-8 (a Json built in-process can hold them) are replaced the same way.
TEST(PatchJsonInvalidUtf8Test, ReplacedAsNlohmannDoes) {
  Json patch = Json::array();
  patch.push_back(Json{{"op", "add"}, {"path", "/a\xff/b"}, {"value", "x\xc3("}});
  EXPECT_EQ(patch_json(topoguard::testing::typed_patch(patch)),
            patch.dump(-1, ' ', false, Json::error_handler_t::replace));
}


// Error bodies are JSON with the HTTP status and a stable error code.
TEST(AdmissionReviewTest, ErrorBodyIsJson) {
  Error error;
  error.code = ErrorCode::kMissingField;
  error.message = "missing /request/uid";
  error.location.field = "/request/uid";
  Json body = Json::parse(error_body_json(400, error));
  EXPECT_EQ(body["code"], 400);
  EXPECT_EQ(body["error"], error_code_name(ErrorCode::kMissingField));
  EXPECT_EQ(body["field"], "/request/uid");
}

// A refusal with no Error of its own (malformed HTTP, no route) has the same shape, named after
// its status, and no field.
TEST(AdmissionReviewTest, StatusErrorBodyHasTheSameShape) {
  Json body = Json::parse(error_body_json(404, "no route for GET /nope"));
  EXPECT_EQ(body["code"], 404);
  EXPECT_EQ(body["error"], "not_found");
  EXPECT_EQ(body["message"], "no route for GET /nope");
  EXPECT_FALSE(body.contains("field"));
  // A body too large is named as a review's kTooLarge error is.
  EXPECT_EQ(Json::parse(error_body_json(413, "too large"))["error"],
            error_code_name(ErrorCode::kTooLarge));
  EXPECT_EQ(Json::parse(error_body_json(408, "slow"))["error"], "http_408");
}

}  // namespace
}  // namespace topoguard::admission
