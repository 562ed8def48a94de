// Pieces of the generated clusters the cluster, shape and cache benchmarks build.
#pragma once

#include <cstdio>
#include <string>

#include "topoguard/common/json.h"

namespace topoguard::bench {

// A resource.k8s.io/v1 DeviceClass with one CEL selector.
inline Json device_class(const std::string& name, const std::string& expression) {
  return Json{{"apiVersion", "resource.k8s.io/v1"},
              {"kind", "DeviceClass"},
              {"metadata", {{"name", name}}},
              {"spec", {{"selectors", Json::array({{{"cel", {{"expression", expression}}}}})}}}};
}

// `value` in lower-case hex, zero-padded to `width` digits (PCI addresses, uuids).
inline std::string hex(int value, int width) {
  char text[16];
  std::snprintf(text, sizeof text, "%0*x", width, value);
  return text;
}

}  // namespace topoguard::bench
