// AdmissionReview admission.k8s.io/v1 <-> plain values. The parse side is the trust boundary of
// the webhook: it accepts any bytes and returns an Error for anything that is not a well-formed
// v1 request. Pure functions, safe to call concurrently.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "topoguard/common/json.h"
#include "topoguard/common/result.h"
#include "topoguard/engine/json_patch.h"

namespace topoguard::admission {

inline constexpr std::string_view kAdmissionApiVersion = "admission.k8s.io/v1";
inline constexpr std::string_view kAdmissionKind = "AdmissionReview";
// Bodies nested deeper than this are refused while parsing, before a tree of them is built.
inline constexpr int kMaxBodyDepth = 128;

struct GroupVersionKind {
  std::string group;
  std::string version;
  std::string kind;
};

struct AdmissionRequest {
  std::string uid;
  GroupVersionKind kind;
  std::string operation;  // CREATE | UPDATE | DELETE | CONNECT
  std::string namespace_name;
  std::string name;
  bool dry_run = false;
  std::string username;  // userInfo.username: who asks (empty when not given)
  Json object;  // null when absent (DELETE)
  Json old_object;  // null when absent (CREATE)
};

struct AdmissionStatus {
  int code = 0;  // 0: no status in the response
  std::string reason;
  std::string message;
};

// The wire fields of `response`. `patch` is sent (base64, patchType JSONPatch) only when
// non-empty.
struct AdmissionResponse {
  std::string uid;
  bool allowed = true;
  AdmissionStatus status;
  engine::JsonPatch patch;
  std::vector<std::string> warnings;
  std::map<std::string, std::string> audit_annotations;
};

// Parses an AdmissionReview request body. Errors (code kInvalidJson, kTooDeep, kWrongType,
// kMissingField, kInvalidValue) carry the offending field as location.field. The whole body is
// checked (syntax, UTF-8, nesting); trees are built only of what the webhook reads, the request's
// object and oldObject, each complete. Linear in the body's size.
[[nodiscard]] Result<AdmissionRequest> parse_admission_review(std::string_view body);

// The AdmissionReview the API server expects back: apiVersion, kind and `response`.
[[nodiscard]] Json to_admission_review(const AdmissionResponse& response);
[[nodiscard]] std::string to_admission_review_json(const AdmissionResponse& response);

// The JSON body of every 4xx/5xx answer that is not an AdmissionReview, on both ports:
// {"code": <HTTP status>, "error": <stable name>, "message": <text>}, plus "field" when known.
// With an Error (a review that cannot be read or decided) the name is its code's name.
[[nodiscard]] std::string error_body_json(int http_status, const Error& error);
// For a refusal with no Error of its own (malformed HTTP, no such route, overload): the name
// is the status's ("bad_request", "not_found", "too_large", ...).
[[nodiscard]] std::string error_body_json(int http_status, std::string_view message);

// The patch as sent: compact JSON, the same bytes as patch_to_json(patch).dump() with invalid
// UTF-8 replaced.
[[nodiscard]] std::string patch_json(const engine::JsonPatch& patch);


}  // namespace topoguard::admission
