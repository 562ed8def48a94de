// resource.k8s.io/v1 objects the cluster tests build: DeviceClasses selecting one driver, and
// claims and templates asking for a GPU and a NIC, aligned on the PCIe root or not.
#pragma once

#include <string>

#include "topoguard/common/json.h"

namespace topoguard::testing {

// A DeviceClass with one CEL selector.
inline Json dra_device_class(const std::string& name, const std::string& expression) {
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "DeviceClass"},
          {"metadata", {{"name", name}}},
          {"spec", {{"selectors", Json::array({{{"cel", {{"expression", expression}}}}})}}}};
}

// A claim spec asking for a GPU (gpu.nvidia.com) and a NIC (dra.net); `aligned`: with the
// constraint that puts both on one PCIe root.
inline Json dra_claim_spec(bool aligned) {
  Json spec = {
      {"devices",
       {{"requests",
         Json::array({{{"name", "gpu"}, {"exactly", {{"deviceClassName", "gpu.nvidia.com"}}}},
                      {{"name", "nic"}, {"exactly", {{"deviceClassName", "dra.net"}}}}})}}}};
  if (aligned) {
    spec["devices"]["constraints"] = Json::array(
        {{{"requests", {"gpu", "nic"}}, {"matchAttribute", "resource.kubernetes.io/pcieRoot"}}});
  }
  return spec;
}

}  // namespace topoguard::testing
