#include "topoguard/kube/objects.h"

#include <utility>

namespace topoguard::kube {

namespace {

constexpr std::size_t kMaxNameLength = 253;

Result<ObjectResponse> read_answer(Result<ApiResponse> answer) {
  if (!answer) {
    return answer.error();
  }
  ObjectResponse response;
  response.status = answer->status;
  if (!answer->ok()) {
    response.error = std::move(answer->error);
    return response;
  }
  response.object = Json::parse(answer->body, nullptr, false);
  if (response.object.is_discarded() || !response.object.is_object()) {
    return Error{ErrorCode::kInvalidValue,
                 "the API server answered " + std::to_string(answer->status) +
                     " with a body that is not a JSON object",
                 {}};
  }
  return response;
}

Result<std::string> object_path(const ResourceRef& resource, std::string_view name) {
  if (!valid_object_name(name)) {
    return Error{ErrorCode::kInvalidValue,
                 "\"" + std::string(name) + "\" is not a valid name for " + resource.to_string(),
                 {}};
  }
  return resource.path() + "/" + std::string(name);
}

Query write_query(const WriteOptions& options) {
  Query query;
  if (!options.field_manager.empty()) {
    query.emplace_back("fieldManager", options.field_manager);
  }
  if (options.force) {
    query.emplace_back("force", "true");
  }
  return query;
}

Result<ObjectResponse> send_to_object(ApiClient& client, Method method, const ResourceRef& resource,
                                      std::string_view name, const Query& query,
                                      std::string_view content_type, const std::string& body,
                                      std::stop_token stop) {
  Result<std::string> path = object_path(resource, name);
  if (!path) {
    return path.error();
  }
  return read_answer(client.send(method, *path, query, content_type, body, std::move(stop)));
}

}  // namespace

std::string ObjectResponse::describe() const {
  if (error) {
    return error->to_string();
  }
  return std::to_string(status);
}

bool valid_object_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxNameLength) {
    return false;
  }
  for (const char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.')) {
      return false;
    }
  }
  return true;
}

Result<ObjectResponse> get_object(ApiClient& client, const ResourceRef& resource,
                                  std::string_view name, std::stop_token stop) {
  Result<std::string> path = object_path(resource, name);
  if (!path) {
    return path.error();
  }
  return read_answer(client.get(*path, {}, std::move(stop)));
}

Result<ObjectResponse> create_object(ApiClient& client, const ResourceRef& resource,
                                     const Json& object, const WriteOptions& options,
                                     std::stop_token stop) {
  return read_answer(client.send(Method::kPost, resource.path(), write_query(options), kJsonContent,
                                 object.dump(), std::move(stop)));
}

Result<ObjectResponse> update_object(ApiClient& client, const ResourceRef& resource,
                                     std::string_view name, const Json& object,
                                     const WriteOptions& options, std::stop_token stop) {
  return send_to_object(client, Method::kPut, resource, name, write_query(options), kJsonContent,
                        object.dump(), std::move(stop));
}

Result<ObjectResponse> patch_object(ApiClient& client, const ResourceRef& resource,
                                    std::string_view name, std::string_view content_type,
                                    const Json& patch, const WriteOptions& options,
                                    std::stop_token stop) {
  return send_to_object(client, Method::kPatch, resource, name, write_query(options), content_type,
                        patch.dump(), std::move(stop));
}

Result<ObjectResponse> apply_object(ApiClient& client, const ResourceRef& resource,
                                    std::string_view name, const Json& object,
                                    const WriteOptions& options, std::stop_token stop) {
  if (options.field_manager.empty()) {
    return Error{ErrorCode::kInvalidValue, "server-side apply needs a field manager", {}};
  }
  return send_to_object(client, Method::kPatch, resource, name, write_query(options),
                        kApplyPatchContent, object.dump(), std::move(stop));
}

Result<ObjectResponse> delete_object(ApiClient& client, const ResourceRef& resource,
                                     std::string_view name, std::stop_token stop) {
  return send_to_object(client, Method::kDelete, resource, name, {}, {}, {}, std::move(stop));
}

}  // namespace topoguard::kube
