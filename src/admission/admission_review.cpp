#include "topoguard/admission/admission_review.h"

#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "topoguard/common/base64.h"
#include "topoguard/common/json_document.h"
#include "topoguard/common/json_writer.h"

namespace topoguard::admission {
namespace {

Error make_error(ErrorCode code, std::string message, std::string field = {}) {
  Error error;
  error.code = code;
  error.message = std::move(message);
  error.location.field = std::move(field);
  return error;
}

// A string member: an Error naming the pointer when of another type, or absent (or null) and
// `required`; empty when absent and optional.
Result<std::string> string_member(const std::optional<JsonPart>& value,
                                  const std::string& pointer, bool required) {
  if (!value || value->is_null()) {
    if (required) {
      return make_error(ErrorCode::kMissingField, "missing " + pointer, pointer);
    }
    return std::string();
  }
  const std::optional<std::string_view> text = value->string();
  if (!text) {
    return make_error(ErrorCode::kWrongType,
                      pointer + " must be a string, not " + value->type_name(), pointer);
  }
  return std::string(*text);
}

// An optional object member as a Json tree: null when absent or null, an Error when of another
// type.
Result<Json> object_member(const std::optional<JsonPart>& value, const std::string& pointer) {
  if (!value || value->is_null()) {
    return Json();
  }
  if (!value->is_object()) {
    return make_error(ErrorCode::kWrongType,
                      pointer + " must be an object, not " + value->type_name(), pointer);
  }
  return value->to_json();
}

// The body already parsed: navigates to `request` and builds the object trees the engine reads.
// Of userInfo only the username is read; everything else of the request (options, ...) is checked
// as JSON but not built.
Result<AdmissionRequest> read_review(const JsonPart& review) {
  if (!review.is_object()) {
    return make_error(ErrorCode::kWrongType,
                      std::string("body must be a JSON object, not ") + review.type_name());
  }
  const auto [api_version_member, kind_member, request_member] =
      review.members<3>({"apiVersion", "kind", "request"});
  auto api_version = string_member(api_version_member, "/apiVersion", true);
  if (!api_version) {
    return api_version.error();
  }
  if (*api_version != kAdmissionApiVersion) {
    return make_error(ErrorCode::kInvalidValue,
                      "apiVersion must be admission.k8s.io/v1, not \"" + *api_version +
                          "\" (set admissionReviewVersions: [\"v1\"] in the webhook configuration)",
                      "/apiVersion");
  }
  auto kind = string_member(kind_member, "/kind", true);
  if (!kind) {
    return kind.error();
  }
  if (*kind != kAdmissionKind) {
    return make_error(ErrorCode::kInvalidValue,
                      "kind must be AdmissionReview, not \"" + *kind + "\"", "/kind");
  }
  if (!request_member || request_member->is_null()) {
    return make_error(ErrorCode::kMissingField, "missing /request", "/request");
  }
  if (!request_member->is_object()) {
    return make_error(ErrorCode::kWrongType,
                      std::string("/request must be an object, not ") +
                          request_member->type_name(),
                      "/request");
  }
  const auto [uid_member, operation_member, gvk_member, namespace_member, name_member,
              dry_run_member, object_member_value, old_object_member, user_info_member] =
      request_member->members<9>({"uid", "operation", "kind", "namespace", "name", "dryRun",
                                  "object", "oldObject", "userInfo"});

  AdmissionRequest parsed;
  auto uid = string_member(uid_member, "/request/uid", true);
  if (!uid) {
    return uid.error();
  }
  if (uid->empty()) {
    return make_error(ErrorCode::kInvalidValue, "/request/uid must not be empty", "/request/uid");
  }
  parsed.uid = std::move(*uid);

  auto operation = string_member(operation_member, "/request/operation", true);
  if (!operation) {
    return operation.error();
  }
  parsed.operation = std::move(*operation);

  if (gvk_member && !gvk_member->is_null()) {
    if (!gvk_member->is_object()) {
      return make_error(ErrorCode::kWrongType,
                        std::string("/request/kind must be an object, not ") +
                            gvk_member->type_name(),
                        "/request/kind");
    }
    const auto gvk_members = gvk_member->members<3>({"group", "version", "kind"});
    std::string* const targets[] = {&parsed.kind.group, &parsed.kind.version, &parsed.kind.kind};
    for (std::size_t i = 0; i < gvk_members.size(); ++i) {
      static constexpr std::string_view kNames[] = {"group", "version", "kind"};
      auto value =
          string_member(gvk_members[i], "/request/kind/" + std::string(kNames[i]), false);
      if (!value) {
        return value.error();
      }
      *targets[i] = std::move(*value);
    }
  }
  auto namespace_name = string_member(namespace_member, "/request/namespace", false);
  if (!namespace_name) {
    return namespace_name.error();
  }
  parsed.namespace_name = std::move(*namespace_name);
  auto name = string_member(name_member, "/request/name", false);
  if (!name) {
    return name.error();
  }
  parsed.name = std::move(*name);

  // Nothing requires userInfo (the AdmissionReview contract): one that is not an object, or whose
  // username is not a string, leaves the requester anonymous (its namespace, for shares).
  if (user_info_member) {
    const auto username = user_info_member->members<1>({"username"})[0];
    if (const auto text = username ? username->string() : std::nullopt) {
      parsed.username = std::string(*text);
    }
  }
  if (dry_run_member && !dry_run_member->is_null()) {
    const std::optional<bool> dry_run = dry_run_member->boolean();
    if (!dry_run) {
      return make_error(ErrorCode::kWrongType, "/request/dryRun must be a boolean",
                        "/request/dryRun");
    }
    parsed.dry_run = *dry_run;
  }
  auto object = object_member(object_member_value, "/request/object");
  if (!object) {
    return object.error();
  }
  parsed.object = std::move(*object);
  auto old_object = object_member(old_object_member, "/request/oldObject");
  if (!old_object) {
    return old_object.error();
  }
  parsed.old_object = std::move(*old_object);
  return parsed;
}

// The one shape of every error body: {"code": status, "error": name, "message": text} and
// "field" when one is known.
std::string write_error_body(int http_status, std::string_view error, std::string_view message,
                             std::string_view field) {
  std::string out;
  JsonWriter writer(out);
  writer.begin_object()
      .member("code", http_status)
      .member("error", error)
      .member("message", message);
  if (!field.empty()) {
    writer.member("field", field);
  }
  writer.end_object();
  return out;
}

// A stable name for a refusal that has no Error of its own (it names the HTTP status).
std::string status_error_name(int status) {
  switch (status) {
    case 400:
      return "bad_request";
    case 404:
      return "not_found";
    case 405:
      return "method_not_allowed";
    case 413:
      return "too_large";
    case 431:
      return "headers_too_large";
    case 500:
      return "internal";
    default:
      return "http_" + std::to_string(status);
  }
}

}  // namespace

// Bodies up to this size leave the thread's parser as it is (typical reviews are a few KiB).
constexpr std::size_t kKeptParserCapacity = 256 * 1024;

std::string patch_json(const engine::JsonPatch& patch) {
  std::string out;
  JsonWriter writer(out);
  writer.begin_array();
  for (const engine::PatchOperation& operation : patch) {
    writer.begin_object()
        .member("op", "add")
        .member("path", operation.path)
        .member("value", operation.value)
        .end_object();
  }
  writer.end_array();
  return out;
}

Result<AdmissionRequest> parse_admission_review(std::string_view body) {
  // One parser per thread, reused: creating one costs more than parsing a typical review. A
  // parser that a large body grew is replaced afterwards, so its buffers are not kept.
  thread_local JsonDocumentParser parser;
  struct ReleaseGrownBuffers {
    ~ReleaseGrownBuffers() { parser.release_beyond(kKeptParserCapacity); }
  } release_grown_buffers;
  auto review = parser.parse(body, kMaxBodyDepth, "body");
  if (!review) {
    return review.error();
  }
  try {
    return read_review(*review);
  } catch (const std::exception& exception) {  // bad_alloc while building the object trees
    return make_error(ErrorCode::kInternal,
                      std::string("cannot read the AdmissionReview: ") + exception.what());
  }
}

Json to_admission_review(const AdmissionResponse& response) {
  Json body = Json::object();
  body["uid"] = response.uid;
  body["allowed"] = response.allowed;
  if (response.status.code != 0) {
    Json status = Json::object();
    status["code"] = response.status.code;
    if (!response.status.reason.empty()) {
      status["reason"] = response.status.reason;
    }
    if (!response.status.message.empty()) {
      status["message"] = response.status.message;
    }
    body["status"] = std::move(status);
  }
  if (!response.patch.empty()) {
    body["patch"] = base64_encode(patch_json(response.patch));
    body["patchType"] = "JSONPatch";
  }
  if (!response.warnings.empty()) {
    body["warnings"] = response.warnings;
  }
  if (!response.audit_annotations.empty()) {
    Json annotations = Json::object();
    for (const auto& [key, value] : response.audit_annotations) {
      annotations[key] = value;
    }
    body["auditAnnotations"] = std::move(annotations);
  }
  Json review = Json::object();
  review["apiVersion"] = kAdmissionApiVersion;
  review["kind"] = kAdmissionKind;
  review["response"] = std::move(body);
  return review;
}

std::string to_admission_review_json(const AdmissionResponse& response) {
  // Written directly rather than through a Json tree: it is sent for every request. The same
  // members, in the same order, as to_admission_review().
  std::string out;
  out.reserve(256 + response.status.message.size());
  JsonWriter writer(out);
  writer.begin_object()
      .member("apiVersion", kAdmissionApiVersion)
      .member("kind", kAdmissionKind)
      .key("response")
      .begin_object()
      .member("uid", response.uid)
      .member("allowed", response.allowed);
  if (response.status.code != 0) {
    writer.key("status").begin_object().member("code", response.status.code);
    if (!response.status.reason.empty()) {
      writer.member("reason", response.status.reason);
    }
    if (!response.status.message.empty()) {
      writer.member("message", response.status.message);
    }
    writer.end_object();
  }
  if (!response.patch.empty()) {
    writer.member("patch", base64_encode(patch_json(response.patch)))
        .member("patchType", "JSONPatch");
  }
  if (!response.warnings.empty()) {
    writer.key("warnings").begin_array();
    for (const std::string& warning : response.warnings) {
      writer.string(warning);
    }
    writer.end_array();
  }
  if (!response.audit_annotations.empty()) {
    writer.key("auditAnnotations").begin_object();
    for (const auto& [key, value] : response.audit_annotations) {
      writer.member(key, value);
    }
    writer.end_object();
  }
  writer.end_object().end_object();
  return out;
}

std::string error_body_json(int http_status, const Error& error) {
  return write_error_body(http_status, error_code_name(error.code), error.message,
                          error.location.field);
}

std::string error_body_json(int http_status, std::string_view message) {
  return write_error_body(http_status, status_error_name(http_status), message, {});
}

}  // namespace topoguard::admission
