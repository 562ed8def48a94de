// Shared pieces of the webhook integration tests: AdmissionReview bodies and a TLS client.
#pragma once

#include <string>

#include <httplib.h>

#include "topoguard/common/json.h"

namespace topoguard::testing {

// An AdmissionReview v1 request around `object`.
inline std::string review_body(const Json& object, const std::string& uid,
                               const std::string& operation = "CREATE",
                               const std::string& namespace_name = "ml") {
  Json review = {{"apiVersion", "admission.k8s.io/v1"}, {"kind", "AdmissionReview"}};
  Json request = Json::object();
  request["uid"] = uid;
  request["kind"] = {{"group", ""}, {"version", "v1"}, {"kind", object.value("kind", "")}};
  request["operation"] = operation;
  request["namespace"] = namespace_name;
  request["name"] = object["metadata"].value("name", "");
  request["object"] = object;
  review["request"] = std::move(request);
  return review.dump();
}

// Standard base64 decoding (the patch field of AdmissionResponse).
inline std::string base64_decode(const std::string& text) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') {
      return c - 'A';
    }
    if (c >= 'a' && c <= 'z') {
      return c - 'a' + 26;
    }
    if (c >= '0' && c <= '9') {
      return c - '0' + 52;
    }
    return c == '+' ? 62 : (c == '/' ? 63 : -1);
  };
  std::string out;
  unsigned buffer = 0;
  int bits = 0;
  for (const char c : text) {
    const int v = value(c);
    if (v < 0) {
      continue;
    }
    buffer = (buffer << 6U) | static_cast<unsigned>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((buffer >> static_cast<unsigned>(bits)) & 0xFFU);
    }
  }
  return out;
}

}  // namespace topoguard::testing
