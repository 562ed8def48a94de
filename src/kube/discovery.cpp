#include "topoguard/kube/discovery.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

namespace topoguard::kube {

namespace {

// One discovery GET. nullopt (no error) when the server answers 404: it does not serve the path.
Result<std::optional<Json>> get_document(ApiClient& client, const std::string& path,
                                         std::stop_token stop) {
  Result<ApiResponse> response = client.get(path, {}, stop);
  if (!response) {
    return Error{ErrorCode::kIo, "discovery: GET " + path + ": " + response.error().message, {}};
  }
  if (response->status == 404) {
    return std::optional<Json>();
  }
  if (!response->ok()) {
    return Error{
        ErrorCode::kIo, "discovery: GET " + path + ": " + response->error->to_string(), {}};
  }
  Json document = Json::parse(response->body, nullptr, false);
  if (document.is_discarded() || !document.is_object()) {
    return Error{ErrorCode::kInvalidJson,
                 "discovery: GET " + path + ": the answer is not a JSON object",
                 {}};
  }
  return std::optional<Json>(std::move(document));
}

// The versions a group serves, preferred first. Core: /api's "versions"; named groups: /apis's
// groups[].preferredVersion then groups[].versions[] (which the server lists by priority).
using GroupVersions = std::map<std::string, std::vector<std::string>>;

void add_version(std::vector<std::string>& versions, std::string version) {
  if (!version.empty() && std::find(versions.begin(), versions.end(), version) == versions.end()) {
    versions.push_back(std::move(version));
  }
}

GroupVersions read_groups(const Json& core, const Json& groups) {
  GroupVersions served;
  if (const Json* versions = member(core, "versions");
      versions != nullptr && versions->is_array()) {
    for (const Json& version : *versions) {
      if (version.is_string()) {
        add_version(served[""], version.get<std::string>());
      }
    }
  }
  const Json* list = member(groups, "groups");
  if (list == nullptr || !list->is_array()) {
    return served;
  }
  for (const Json& group : *list) {
    if (!group.is_object()) {
      continue;
    }
    std::vector<std::string>& versions = served[string_member(group, "name")];
    if (const Json* preferred = member(group, "preferredVersion"); preferred != nullptr) {
      add_version(versions, string_member(*preferred, "version"));
    }
    if (const Json* entries = member(group, "versions");
        entries != nullptr && entries->is_array()) {
      for (const Json& entry : *entries) {
        add_version(versions, string_member(entry, "version"));
      }
    }
  }
  return served;
}

// The resource of an APIResourceList matching `wanted` (subresources such as pods/status are
// skipped); nullptr when the version does not have it.
const Json* find_resource(const Json& resource_list, const WantedResource& wanted) {
  const Json* resources = member(resource_list, "resources");
  if (resources == nullptr || !resources->is_array()) {
    return nullptr;
  }
  for (const Json& resource : *resources) {
    const std::string_view name = string_member_view(resource, "name");
    if (name.empty() || name.find('/') != std::string_view::npos) {
      continue;
    }
    if (wanted.kind.empty() ? name == wanted.resource
                            : string_member_view(resource, "kind") == wanted.kind) {
      return &resource;
    }
  }
  return nullptr;
}

std::string join(const std::vector<std::string>& words) {
  std::string text;
  for (const std::string& word : words) {
    text += (text.empty() ? "" : ", ") + word;
  }
  return text;
}

std::string group_name(const std::string& group) { return group.empty() ? "core" : group; }

// "no PodGroup in scheduling.k8s.io v1", or "resource.k8s.io serves none of v2 (it serves v1)".
std::string why_not_served(const WantedResource& want, const std::vector<std::string>& candidates,
                           const std::vector<std::string>& served) {
  std::vector<std::string> looked;
  for (const std::string& version : candidates) {
    if (std::find(served.begin(), served.end(), version) != served.end()) {
      looked.push_back(version);
    }
  }
  if (looked.empty()) {
    return group_name(want.group) + " serves none of " + join(candidates) + " (it serves " +
           join(served) + ")";
  }
  return "no " + (want.kind.empty() ? want.resource : want.kind) + " in " +
         group_name(want.group) + " " + join(looked);
}

}  // namespace

std::string WantedResource::to_string() const {
  const std::string& name = kind.empty() ? resource : kind;
  return group.empty() ? name : name + "." + group;
}

Result<std::vector<DiscoveredResource>> discover_resources(
    ApiClient& client, const std::vector<WantedResource>& wanted, std::stop_token stop) {
  const bool core = std::any_of(wanted.begin(), wanted.end(),
                                [](const WantedResource& w) { return w.group.empty(); });
  const bool named = std::any_of(wanted.begin(), wanted.end(),
                                 [](const WantedResource& w) { return !w.group.empty(); });
  Json core_versions = Json::object();
  Json group_list = Json::object();
  for (auto [needed, path, document] :
       {std::tuple{core, "/api", &core_versions}, std::tuple{named, "/apis", &group_list}}) {
    if (!needed) {
      continue;
    }
    Result<std::optional<Json>> read = get_document(client, path, stop);
    if (!read) {
      return read.error();
    }
    if (read->has_value()) {
      *document = std::move(**read);
    }
  }
  const GroupVersions served = read_groups(core_versions, group_list);

  // APIResourceLists by "group/version" (nullopt: 404), read once each.
  std::map<std::string, std::optional<Json>> resource_lists;
  std::vector<DiscoveredResource> resolved;
  resolved.reserve(wanted.size());
  for (const WantedResource& want : wanted) {
    DiscoveredResource& found = resolved.emplace_back();
    found.wanted = want;
    const auto group = served.find(want.group);
    if (group == served.end() || group->second.empty()) {
      found.not_served = "group " + group_name(want.group) + " is not served";
      continue;
    }
    const std::vector<std::string>& candidates =
        want.versions.empty() ? group->second : want.versions;
    for (const std::string& version : candidates) {
      if (std::find(group->second.begin(), group->second.end(), version) == group->second.end()) {
        continue;
      }
      const std::string key = want.group + "/" + version;
      auto list = resource_lists.find(key);
      if (list == resource_lists.end()) {
        const std::string path =
            want.group.empty() ? "/api/" + version : "/apis/" + want.group + "/" + version;
        Result<std::optional<Json>> read = get_document(client, path, stop);
        if (!read) {
          return read.error();
        }
        list = resource_lists.emplace(key, std::move(*read)).first;
      }
      const Json* resource = list->second ? find_resource(*list->second, want) : nullptr;
      if (resource == nullptr) {
        continue;
      }
      found.ref = ResourceRef{want.group, version, string_member(*resource, "name"), ""};
      found.kind = string_member(*resource, "kind");
      const Json* namespaced = member(*resource, "namespaced");
      found.namespaced =
          namespaced != nullptr && namespaced->is_boolean() && namespaced->get<bool>();
      break;
    }
    if (!found.served()) {
      found.not_served = why_not_served(want, candidates, group->second);
    }
  }
  return resolved;
}

const std::vector<WantedResource>& cluster_state_resources() {
  static const std::vector<WantedResource> kResources = [] {
    const std::vector<std::string> dra = {"v1", "v1beta2", "v1beta1"};
    return std::vector<WantedResource>{
        {"resource.k8s.io", "DeviceClass", "deviceclasses", dra},
        {"resource.k8s.io", "ResourceSlice", "resourceslices", dra},
        {"resource.k8s.io", "ResourceClaimTemplate", "resourceclaimtemplates", dra},
        {"resource.k8s.io", "ResourceClaim", "resourceclaims", dra},
        {"resource.k8s.io", "DeviceTaintRule", "devicetaintrules", {"v1", "v1beta2", "v1alpha3"}},
        {"k8s.cni.cncf.io",
         "NetworkAttachmentDefinition",
         "network-attachment-definitions",
         {"v1"}},
        {"", "Namespace", "namespaces", {"v1"}},
    };
  }();
  return kResources;
}

}  // namespace topoguard::kube
