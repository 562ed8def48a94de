#include "topoguard/k8s/device_class.h"

#include <utility>

#include "fields.h"
#include "topoguard/k8s/object.h"

namespace topoguard::k8s {

Result<DeviceClass> read_device_class(const Json& object) {
  DeviceClass device_class;
  device_class.name = object_ref(object).name;
  const Json* spec = member(object, "spec");
  if (spec == nullptr || spec->is_null()) {
    return device_class;
  }
  if (!spec->is_object()) {
    return type_error("/spec", "object", *spec);
  }
  auto extended =
      optional_member(*spec, "/spec", "extendedResourceName", "string", &Json::is_string);
  if (!extended) {
    return extended.error();
  }
  if (*extended != nullptr) {
    device_class.extended_resource_name = (*extended)->get<std::string>();
  }
  auto selectors = optional_member(*spec, "/spec", "selectors", "array", &Json::is_array);
  if (!selectors) {
    return selectors.error();
  }
  for (std::size_t i = 0; *selectors != nullptr && i < (*selectors)->size(); ++i) {
    const Json& selector = (**selectors)[i];
    const std::string pointer = append_pointer("/spec/selectors", i);
    if (!selector.is_object()) {
      return type_error(pointer, "object", selector);
    }
    auto cel = optional_member(selector, pointer, "cel", "object", &Json::is_object);
    if (!cel) {
      return cel.error();
    }
    if (*cel == nullptr) {
      continue;
    }
    auto expression =
        required_string(**cel, append_pointer(pointer, "cel"), "expression", "CEL selector");
    if (!expression) {
      return expression.error();
    }
    auto program = cel::compile(*expression);
    if (program) {
      device_class.programs.push_back(std::move(program).value());
    } else {
      Error error = program.error();
      error.location.field = append_pointer(append_pointer(pointer, "cel"), "expression");
      device_class.selector_errors.push_back(std::move(error));
    }
    device_class.selectors.push_back(std::move(expression).value());
    device_class.selector_positions.push_back(i);
  }
  return device_class;
}

}  // namespace topoguard::k8s
