#include "topoguard/k8s/pod_spec_view.h"

#include <algorithm>
#include <string_view>

namespace topoguard::k8s {

namespace {

constexpr std::string_view kNetworksAnnotation = "k8s.v1.cni.cncf.io/networks";
constexpr std::string_view kGkeInterfacesAnnotation = "networking.gke.io/interfaces";

bool is_core_resource(std::string_view name) {
  return name == "cpu" || name == "memory" || name == "ephemeral-storage" || name == "storage" ||
         name.starts_with("hugepages-") || name.starts_with("requests.") ||
         name.starts_with("limits.");
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t' || text.front() == '\n')) {
    text.remove_prefix(1);
  }
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\n')) {
    text.remove_suffix(1);
  }
  return text;
}

void read_container_resources(const Json& spec, const std::string& spec_pointer,
                              std::string_view list_name, PodSpecView& view) {
  const Json* containers = member(spec, list_name);
  if (containers == nullptr || !containers->is_array()) {
    return;
  }
  for (std::size_t i = 0; i < containers->size(); ++i) {
    const Json& container = (*containers)[i];
    const Json* resources = member(container, "resources");
    if (resources == nullptr) {
      continue;
    }
    const std::string container_pointer =
        append_pointer(append_pointer(spec_pointer, list_name), i);
    const std::string container_name = string_member(container, "name");
    // A resource in both limits and requests is listed once, from limits. The limits' names are
    // sorted for that look-up: a container can list 100,000 resources.
    std::vector<std::string_view> in_limits;
    for (std::string_view section : {"limits", "requests"}) {
      const Json* quantities = member(*resources, section);
      if (quantities == nullptr || !quantities->is_object()) {
        continue;
      }
      const bool limits = section == "limits";
      for (const auto& [resource, quantity] : quantities->get_ref<const Json::object_t&>()) {
        if (is_core_resource(resource) ||
            (!limits && std::binary_search(in_limits.begin(), in_limits.end(),
                                           std::string_view(resource)))) {
          continue;
        }
        if (limits) {
          in_limits.emplace_back(resource);
        }
        view.extended_resources.push_back(
            {resource, container_name,
             append_pointer(append_pointer(append_pointer(container_pointer, "resources"), section),
                            resource)});
      }
      if (limits) {
        std::sort(in_limits.begin(), in_limits.end());
      }
    }
  }
}

}  // namespace

std::vector<NetworkAttachment> parse_network_annotation(const std::string& text) {
  std::vector<NetworkAttachment> networks;
  std::string_view trimmed = trim(text);
  if (trimmed.empty()) {
    return networks;
  }
  if (trimmed.front() == '[') {
    Json list = Json::parse(trimmed, nullptr, /*allow_exceptions=*/false);
    if (!list.is_array()) {
      return networks;
    }
    for (const Json& entry : list) {
      std::string name = string_member(entry, "name");
      if (!name.empty()) {
        networks.push_back({string_member(entry, "namespace"), std::move(name)});
      }
    }
    return networks;
  }
  std::size_t position = 0;
  while (position <= trimmed.size()) {
    std::size_t comma = trimmed.find(',', position);
    if (comma == std::string_view::npos) {
      comma = trimmed.size();
    }
    std::string_view item = trim(trimmed.substr(position, comma - position));
    item = item.substr(0, item.find('@'));  // "name@interface"
    if (!item.empty()) {
      const std::size_t slash = item.find('/');
      if (slash == std::string_view::npos) {
        networks.push_back({"", std::string(item)});
      } else {
        networks.push_back({std::string(item.substr(0, slash)), std::string(item.substr(slash + 1))});
      }
    }
    position = comma + 1;
  }
  return networks;
}

std::vector<std::string> parse_gke_interfaces(const std::string& text) {
  std::vector<std::string> networks;
  const Json list = Json::parse(trim(text), nullptr, /*allow_exceptions=*/false);
  if (!list.is_array()) {
    return networks;
  }
  for (const Json& entry : list) {
    std::string network = string_member(entry, "network");
    if (!network.empty()) {
      networks.push_back(std::move(network));
    }
  }
  return networks;
}

PodSpecView read_pod_spec(const PodTemplateLocation& location) {
  PodSpecView view;
  view.location = location;
  const Json* spec = location.spec;
  if (spec == nullptr || !spec->is_object()) {
    return view;
  }
  if (const Json* claims = member(*spec, "resourceClaims"); claims != nullptr && claims->is_array()) {
    for (std::size_t i = 0; i < claims->size(); ++i) {
      const Json& claim = (*claims)[i];
      view.claims.push_back({string_member(claim, "name"),
                             string_member(claim, "resourceClaimTemplateName"),
                             string_member(claim, "resourceClaimName"),
                             append_pointer(location.spec_pointer + "/resourceClaims", i)});
    }
  }
  read_container_resources(*spec, location.spec_pointer, "initContainers", view);
  read_container_resources(*spec, location.spec_pointer, "containers", view);

  if (const Json* template_object = location.template_object; template_object != nullptr) {
    const Json* metadata = member(*template_object, "metadata");
    const Json* annotations = metadata != nullptr ? member(*metadata, "annotations") : nullptr;
    const Json* networks =
        annotations != nullptr ? member(*annotations, kNetworksAnnotation) : nullptr;
    if (networks != nullptr && networks->is_string()) {
      view.networks = parse_network_annotation(networks->get<std::string>());
      view.networks_pointer = append_pointer(location.template_pointer + "/metadata/annotations",
                                             kNetworksAnnotation);
    }
    const Json* interfaces =
        annotations != nullptr ? member(*annotations, kGkeInterfacesAnnotation) : nullptr;
    if (interfaces != nullptr && interfaces->is_string()) {
      view.gke_networks = parse_gke_interfaces(interfaces->get<std::string>());
      view.gke_interfaces_pointer = append_pointer(
          location.template_pointer + "/metadata/annotations", kGkeInterfacesAnnotation);
    }
  }
  return view;
}

}  // namespace topoguard::k8s
