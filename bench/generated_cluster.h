// Pieces of the generated clusters the cluster, shape and cache benchmarks build.
#pragma once

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

}  // namespace topoguard::bench
