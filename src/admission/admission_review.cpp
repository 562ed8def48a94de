#include "topoguard/admission/admission_review.h"

#include <charconv>
#include <cstdint>
#include <utility>

#include "topoguard/admission/json_reader.h"

namespace topoguard::admission {
namespace {

Error make_error(ErrorCode code, std::string message, std::string field = {}) {
  Error error;
  error.code = code;
  error.message = std::move(message);
  error.location.field = std::move(field);
  return error;
}

// A member to move out of; nullptr when absent.
Json* mutable_member(Json& object, std::string_view key) {
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

// A string member that must be present; an Error naming the pointer otherwise.
Result<std::string> required_string(const Json& object, std::string_view key,
                                    const std::string& pointer) {
  const Json* value = member(object, key);
  if (value == nullptr || value->is_null()) {
    return make_error(ErrorCode::kMissingField, "missing " + pointer, pointer);
  }
  if (!value->is_string()) {
    return make_error(ErrorCode::kWrongType,
                      pointer + " must be a string, not " + json_type_name(*value), pointer);
  }
  return value->get<std::string>();
}

// An optional string member: empty when absent or null, an Error when of another type.
Result<std::string> optional_string(const Json& object, std::string_view key,
                                    const std::string& pointer) {
  const Json* value = member(object, key);
  if (value == nullptr || value->is_null()) {
    return std::string();
  }
  if (!value->is_string()) {
    return make_error(ErrorCode::kWrongType,
                      pointer + " must be a string, not " + json_type_name(*value), pointer);
  }
  return value->get<std::string>();
}

// An optional object member, moved out: null when absent or null, an Error when of another type.
Result<Json> take_optional_object(Json& object, std::string_view key, const std::string& pointer) {
  Json* value = mutable_member(object, key);
  if (value == nullptr || value->is_null()) {
    return Json();
  }
  if (!value->is_object()) {
    return make_error(ErrorCode::kWrongType,
                      pointer + " must be an object, not " + json_type_name(*value), pointer);
  }
  return std::move(*value);
}

// Appends value.dump(-1, ' ', false, error_handler_t::replace). nlohmann's serializer sends every
// byte through its output adapter and UTF-8 checker, which measured as half of serialising a
// patched review; patches are small trees of mostly ASCII strings. Floats (and the types a
// parsed body never has) are left to nlohmann, whose number format is the reference.
void append_json(std::string& out, const Json& value) {
  switch (value.type()) {
    case Json::value_t::object: {
      out += '{';
      bool first = true;
      for (const auto& [key, member] : value.get_ref<const Json::object_t&>()) {
        if (!first) {
          out += ',';
        }
        first = false;
        append_json_string(out, key);
        out += ':';
        append_json(out, member);
      }
      out += '}';
      return;
    }
    case Json::value_t::array: {
      out += '[';
      bool first = true;
      for (const Json& element : value.get_ref<const Json::array_t&>()) {
        if (!first) {
          out += ',';
        }
        first = false;
        append_json(out, element);
      }
      out += ']';
      return;
    }
    case Json::value_t::string:
      append_json_string(out, value.get_ref<const std::string&>());
      return;
    case Json::value_t::boolean:
      out += value.get<bool>() ? "true" : "false";
      return;
    case Json::value_t::null:
      out += "null";
      return;
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned: {
      char digits[24];
      const auto written =
          value.is_number_unsigned()
              ? std::to_chars(digits, digits + sizeof(digits),
                              value.get<Json::number_unsigned_t>())
              : std::to_chars(digits, digits + sizeof(digits), value.get<Json::number_integer_t>());
      out.append(digits, written.ptr);
      return;
    }
    case Json::value_t::number_float:
    case Json::value_t::binary:
    case Json::value_t::discarded:
      out += value.dump(-1, ' ', false, Json::error_handler_t::replace);
      return;
  }
}

}  // namespace

std::string patch_json(const Json& patch) {
  std::string out;
  out.reserve(256);  // an engine patch of a few operations
  append_json(out, patch);
  return out;
}

Result<AdmissionRequest> parse_admission_review(std::string_view body) {
  Result<Json> parsed_body = read_json(body, kMaxBodyDepth, JsonFilter::kAdmissionReview);
  if (!parsed_body) {
    return parsed_body.error();
  }
  Json& review = *parsed_body;
  if (!review.is_object()) {
    return make_error(ErrorCode::kWrongType,
                      std::string("body must be a JSON object, not ") + json_type_name(review));
  }
  auto api_version = required_string(review, "apiVersion", "/apiVersion");
  if (!api_version) {
    return api_version.error();
  }
  if (*api_version != kAdmissionApiVersion) {
    return make_error(ErrorCode::kInvalidValue,
                      "apiVersion must be admission.k8s.io/v1, not \"" + *api_version +
                          "\" (set admissionReviewVersions: [\"v1\"] in the webhook configuration)",
                      "/apiVersion");
  }
  auto kind = required_string(review, "kind", "/kind");
  if (!kind) {
    return kind.error();
  }
  if (*kind != kAdmissionKind) {
    return make_error(ErrorCode::kInvalidValue,
                      "kind must be AdmissionReview, not \"" + *kind + "\"", "/kind");
  }
  Json* request = mutable_member(review, "request");
  if (request == nullptr || request->is_null()) {
    return make_error(ErrorCode::kMissingField, "missing /request", "/request");
  }
  if (!request->is_object()) {
    return make_error(ErrorCode::kWrongType,
                      std::string("/request must be an object, not ") + json_type_name(*request),
                      "/request");
  }

  AdmissionRequest parsed;
  auto uid = required_string(*request, "uid", "/request/uid");
  if (!uid) {
    return uid.error();
  }
  if (uid->empty()) {
    return make_error(ErrorCode::kInvalidValue, "/request/uid must not be empty", "/request/uid");
  }
  parsed.uid = std::move(*uid);

  auto operation = required_string(*request, "operation", "/request/operation");
  if (!operation) {
    return operation.error();
  }
  parsed.operation = std::move(*operation);

  auto gvk = take_optional_object(*request, "kind", "/request/kind");
  if (!gvk) {
    return gvk.error();
  }
  if (gvk->is_object()) {
    for (auto [key, target] : {std::pair{"group", &parsed.kind.group},
                               std::pair{"version", &parsed.kind.version},
                               std::pair{"kind", &parsed.kind.kind}}) {
      auto value = optional_string(*gvk, key, std::string("/request/kind/") + key);
      if (!value) {
        return value.error();
      }
      *target = std::move(*value);
    }
  }
  auto namespace_name = optional_string(*request, "namespace", "/request/namespace");
  if (!namespace_name) {
    return namespace_name.error();
  }
  parsed.namespace_name = std::move(*namespace_name);
  auto name = optional_string(*request, "name", "/request/name");
  if (!name) {
    return name.error();
  }
  parsed.name = std::move(*name);

  if (const Json* dry_run = member(*request, "dryRun"); dry_run != nullptr && !dry_run->is_null()) {
    if (!dry_run->is_boolean()) {
      return make_error(ErrorCode::kWrongType, "/request/dryRun must be a boolean",
                        "/request/dryRun");
    }
    parsed.dry_run = dry_run->get<bool>();
  }
  auto object = take_optional_object(*request, "object", "/request/object");
  if (!object) {
    return object.error();
  }
  parsed.object = std::move(*object);
  auto old_object = take_optional_object(*request, "oldObject", "/request/oldObject");
  if (!old_object) {
    return old_object.error();
  }
  parsed.old_object = std::move(*old_object);
  return parsed;
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
  if (response.patch.is_array() && !response.patch.empty()) {
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
  // Written directly rather than through a Json tree (the same bytes as
  // to_admission_review(response).dump() with invalid UTF-8 replaced): it is small and sent for
  // every request. Keys in the order to_admission_review() inserts them.
  std::string out;
  out.reserve(256 + response.status.message.size());
  out += R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":)";
  append_json_string(out, response.uid);
  out += response.allowed ? R"(,"allowed":true)" : R"(,"allowed":false)";
  if (response.status.code != 0) {
    char code[16];
    const auto written = std::to_chars(code, code + sizeof(code), response.status.code);
    out += R"(,"status":{"code":)";
    out.append(code, written.ptr);
    if (!response.status.reason.empty()) {
      out += R"(,"reason":)";
      append_json_string(out, response.status.reason);
    }
    if (!response.status.message.empty()) {
      out += R"(,"message":)";
      append_json_string(out, response.status.message);
    }
    out += '}';
  }
  if (response.patch.is_array() && !response.patch.empty()) {
    out += R"(,"patch":")";
    out += base64_encode(patch_json(response.patch));
    out += R"(","patchType":"JSONPatch")";
  }
  if (!response.warnings.empty()) {
    out += R"(,"warnings":[)";
    for (std::size_t i = 0; i < response.warnings.size(); ++i) {
      if (i > 0) {
        out += ',';
      }
      append_json_string(out, response.warnings[i]);
    }
    out += ']';
  }
  if (!response.audit_annotations.empty()) {
    out += R"(,"auditAnnotations":{)";
    bool first = true;
    for (const auto& [key, value] : response.audit_annotations) {
      if (!first) {
        out += ',';
      }
      first = false;
      append_json_string(out, key);
      out += ':';
      append_json_string(out, value);
    }
    out += '}';
  }
  out += "}}";
  return out;
}

void append_json_string(std::string& out, std::string_view text) {
  // ASCII is escaped here; anything else goes through nlohmann so that invalid UTF-8 is replaced
  // exactly as dump(..., error_handler_t::replace) does.
  for (const char c : text) {
    if ((static_cast<unsigned char>(c) & 0x80U) != 0) {
      out += Json(text).dump(-1, ' ', false, Json::error_handler_t::replace);
      return;
    }
  }
  static constexpr std::string_view kHex = "0123456789abcdef";
  out += '"';
  std::size_t run = 0;  // start of the bytes not yet appended that need no escape
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20U && c != '"' && c != '\\') {
      continue;  // appended with its run, not a character at a time
    }
    out.append(text.data() + run, i - run);
    run = i + 1;
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        out += "\\u00";
        out += kHex[byte >> 4U];
        out += kHex[byte & 0x0FU];
    }
  }
  out.append(text.data() + run, text.size() - run);
  out += '"';
}

std::string error_body_json(int http_status, const Error& error) {
  Json body = Json::object();
  body["code"] = http_status;
  body["error"] = error_code_name(error.code);
  body["message"] = error.message;
  if (!error.location.field.empty()) {
    body["field"] = error.location.field;
  }
  return body.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string base64_encode(std::string_view bytes) {
  static constexpr std::string_view kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const auto byte = [bytes](std::size_t i) {
    return static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i]));
  };
  // Sized once and written by index: appending a character at a time measured as half the
  // cost of serialising a patched review.
  std::string out((bytes.size() + 2) / 3 * 4, '=');
  char* next = out.data();
  std::size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const std::uint32_t n = (byte(i) << 16U) | (byte(i + 1) << 8U) | byte(i + 2);
    *next++ = kAlphabet[(n >> 18U) & 63U];
    *next++ = kAlphabet[(n >> 12U) & 63U];
    *next++ = kAlphabet[(n >> 6U) & 63U];
    *next++ = kAlphabet[n & 63U];
  }
  const std::size_t rest = bytes.size() - i;
  if (rest > 0) {  // the trailing '=' padding is already in place
    const std::uint32_t n = (byte(i) << 16U) | (rest == 2 ? byte(i + 1) << 8U : 0U);
    *next++ = kAlphabet[(n >> 18U) & 63U];
    *next++ = kAlphabet[(n >> 12U) & 63U];
    if (rest == 2) {
      *next = kAlphabet[(n >> 6U) & 63U];
    }
  }
  return out;
}

}  // namespace topoguard::admission
