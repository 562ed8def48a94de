#include "topoguard/k8s/device_taint_rule.h"

#include <utility>

#include "fields.h"
#include "topoguard/k8s/object.h"

namespace topoguard::k8s {

bool DeviceTaintRule::applies_to(const Device& candidate) const {
  return (!driver || *driver == candidate.driver.get()) &&
         (!pool || *pool == candidate.pool.get()) && (!device || *device == candidate.name.get());
}

Result<std::optional<DeviceTaintRule>> read_device_taint_rule(const Json& object) {
  const Json* spec = member(object, "spec");
  if (spec == nullptr || !spec->is_object()) {
    return spec == nullptr
               ? field_error(ErrorCode::kMissingField, "/spec", "DeviceTaintRule has no spec")
               : type_error("/spec", "object", *spec);
  }
  auto selector = optional_member(*spec, "/spec", "deviceSelector", "object", &Json::is_object);
  if (!selector) {
    return selector.error();
  }
  const Json* taint = member(*spec, "taint");
  if (taint == nullptr) {
    return field_error(ErrorCode::kMissingField, "/spec/taint", "DeviceTaintRule has no taint");
  }
  auto read = read_device_taint(*taint, "/spec/taint");
  if (!read) {
    return read.error();
  }
  if (*selector == nullptr) {
    return std::optional<DeviceTaintRule>();
  }
  DeviceTaintRule rule;
  rule.taint = std::move(read).value();
  rule.taint.rule = object_ref(object).name;
  rule.taint.uncertain = member(**selector, "deviceClassName") != nullptr ||
                         member(**selector, "selectors") != nullptr;
  for (auto [key, field] :
       {std::pair<std::string_view, std::optional<std::string>*>{"driver", &rule.driver},
        {"pool", &rule.pool},
        {"device", &rule.device}}) {
    auto value =
        optional_member(**selector, "/spec/deviceSelector", key, "string", &Json::is_string);
    if (!value) {
      return value.error();
    }
    if (*value != nullptr) {
      *field = (*value)->get<std::string>();
    }
  }
  return std::optional<DeviceTaintRule>(std::move(rule));
}

}  // namespace topoguard::k8s
