#include "topoguard/k8s/cel_presence.h"

#include <string_view>

namespace topoguard::k8s {
namespace {

// What a member holds, for a walk that treats any surprise as CEL.
enum class Shape { kAbsent, kExpected, kOdd };

Shape member(const Json& parent, std::string_view key, bool want_array, const Json*& out) {
  const auto found = parent.find(key);
  if (found == parent.end() || found->is_null()) {
    return Shape::kAbsent;
  }
  out = &*found;
  return (want_array ? found->is_array() : found->is_object()) ? Shape::kExpected : Shape::kOdd;
}

// A selectors list: CEL when any entry has a `cel` member, or is not an object.
bool selectors_have_cel(const Json& holder) {
  const Json* selectors = nullptr;
  switch (member(holder, "selectors", true, selectors)) {
    case Shape::kAbsent:
      return false;
    case Shape::kOdd:
      return true;
    case Shape::kExpected:
      break;
  }
  for (const Json& selector : *selectors) {
    if (!selector.is_object() || selector.contains("cel")) {
      return true;
    }
  }
  return false;
}

bool request_has_cel(const Json& request) {
  if (!request.is_object()) {
    return true;
  }
  if (selectors_have_cel(request)) {
    return true;  // v1beta1: selectors on the request itself
  }
  const Json* exactly = nullptr;
  switch (member(request, "exactly", false, exactly)) {
    case Shape::kOdd:
      return true;
    case Shape::kExpected:
      if (selectors_have_cel(*exactly)) {
        return true;
      }
      break;
    case Shape::kAbsent:
      break;
  }
  const Json* alternatives = nullptr;
  switch (member(request, "firstAvailable", true, alternatives)) {
    case Shape::kOdd:
      return true;
    case Shape::kAbsent:
      return false;
    case Shape::kExpected:
      break;
  }
  for (const Json& alternative : *alternatives) {
    if (!alternative.is_object() || selectors_have_cel(alternative)) {
      return true;
    }
  }
  return false;
}

// `spec` is a claim spec: {devices: {requests: [...]}}.
bool claim_spec_has_cel(const Json& spec) {
  const Json* devices = nullptr;
  switch (member(spec, "devices", false, devices)) {
    case Shape::kAbsent:
      return false;
    case Shape::kOdd:
      return true;
    case Shape::kExpected:
      break;
  }
  const Json* requests = nullptr;
  switch (member(*devices, "requests", true, requests)) {
    case Shape::kAbsent:
      return false;
    case Shape::kOdd:
      return true;
    case Shape::kExpected:
      break;
  }
  for (const Json& request : *requests) {
    if (request_has_cel(request)) {
      return true;
    }
  }
  return false;
}

}  // namespace

bool has_cel_selector(const Json& object) {
  if (!object.is_object()) {
    return false;
  }
  const auto kind = object.find("kind");
  if (kind == object.end() || !kind->is_string()) {
    return false;  // nothing the engine reads as a claim
  }
  const std::string& name = kind->get_ref<const std::string&>();
  const bool is_template = name == "ResourceClaimTemplate";
  if (name != "ResourceClaim" && !is_template) {
    return false;
  }
  const Json* spec = nullptr;
  switch (member(object, "spec", false, spec)) {
    case Shape::kAbsent:
      return false;
    case Shape::kOdd:
      return true;
    case Shape::kExpected:
      break;
  }
  if (is_template) {
    const Json* claim_spec = nullptr;
    switch (member(*spec, "spec", false, claim_spec)) {
      case Shape::kAbsent:
        return false;
      case Shape::kOdd:
        return true;
      case Shape::kExpected:
        return claim_spec_has_cel(*claim_spec);
    }
  }
  return claim_spec_has_cel(*spec);
}

}  // namespace topoguard::k8s
