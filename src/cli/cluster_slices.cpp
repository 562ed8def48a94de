#include "cluster_slices.h"

#include <iostream>

#include "topoguard/common/printable_text.h"
#include "topoguard/k8s/kinds.h"
#include "topoguard/kube/list.h"

namespace topoguard::cli {

std::shared_ptr<kube::ApiClient> make_api_client(std::string_view command,
                                                 const kube::LoadOptions& options) {
  auto config = kube::load_client_config(options);
  if (!config) {
    std::cerr << "topoguard " << command << ": " << printable(config.error().to_string()) << '\n';
    return nullptr;
  }
  auto client = kube::ApiClient::create(*config);
  if (!client) {
    std::cerr << "topoguard " << command << ": " << printable(client.error().to_string()) << '\n';
    return nullptr;
  }
  return *client;
}

std::optional<std::vector<k8s::ParsedSlicePtr>> list_cluster_slices(std::string_view command,
                                                                     kube::ApiClient& client) {
  const kube::ResourceRef resource{std::string(k8s::kResourceGroup), "v1",
                                   std::string(k8s::kResourceSlices), ""};
  const kube::ListResult listed = kube::list_resource(client, resource, {});
  if (!listed.ok()) {
    std::cerr << "topoguard " << command << ": listing resourceslices: " << printable(listed.error)
              << '\n';
    return std::nullopt;
  }
  std::vector<k8s::ParsedSlicePtr> slices;
  k8s::SliceInterner interner;
  for (const Json& item : listed.items) {
    Result<k8s::ParsedSlicePtr> slice = k8s::read_resource_slice(item, interner);
    if (slice) {
      slices.push_back(std::move(*slice));
    } else {
      std::cerr << "topoguard " << command << ": a ResourceSlice left out: "
                << printable(slice.error().to_string()) << '\n';
    }
  }
  return slices;
}

}  // namespace topoguard::cli
