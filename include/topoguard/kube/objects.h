// One object of a resource, read and written by name: get, create, update (optimistic
// concurrency through metadata.resourceVersion), patch (JSON patch, merge patch) and server-side
// apply. The controllers that keep objects in step (the webhook's Secret, Lease, caBundles and
// reports) write through these, so each answer is read one way: 2xx carries the object, 404,
// 409 and the rest carry the server's Status.
#pragma once

#include <optional>
#include <stop_token>
#include <string>
#include <string_view>

#include "topoguard/common/json.h"
#include "topoguard/common/result.h"
#include "topoguard/kube/api_client.h"
#include "topoguard/kube/list.h"

namespace topoguard::kube {

struct ObjectResponse {
  int status = 0;
  Json object;                     // the object the server returned (2xx), else null
  std::optional<ApiStatus> error;  // every non-2xx answer

  [[nodiscard]] bool ok() const { return status >= 200 && status < 300; }
  [[nodiscard]] bool not_found() const { return status == 404; }
  // 409: AlreadyExists on create, Conflict on a stale update or an apply's field conflict.
  [[nodiscard]] bool conflict() const { return status == 409; }
  // "409 Conflict: ..." for logs and errors.
  [[nodiscard]] std::string describe() const;
};

struct WriteOptions {
  std::string field_manager;  // the fieldManager parameter; required by apply
  bool force = false;         // apply: take fields other managers own
};

// `resource` names the namespace of namespaced objects. A name that is not a Kubernetes object
// name (lowercase RFC 1123 subdomain characters, at most 253) is an error, never sent.
[[nodiscard]] Result<ObjectResponse> get_object(ApiClient& client, const ResourceRef& resource,
                                                std::string_view name, std::stop_token stop = {});
[[nodiscard]] Result<ObjectResponse> create_object(ApiClient& client, const ResourceRef& resource,
                                                   const Json& object,
                                                   const WriteOptions& options = {},
                                                   std::stop_token stop = {});
// PUT; with metadata.resourceVersion set the server answers 409 when the object changed since.
[[nodiscard]] Result<ObjectResponse> update_object(ApiClient& client, const ResourceRef& resource,
                                                   std::string_view name, const Json& object,
                                                   const WriteOptions& options = {},
                                                   std::stop_token stop = {});
// `content_type` is kJsonPatchContent or kMergePatchContent.
[[nodiscard]] Result<ObjectResponse> patch_object(ApiClient& client, const ResourceRef& resource,
                                                  std::string_view name,
                                                  std::string_view content_type, const Json& patch,
                                                  const WriteOptions& options = {},
                                                  std::stop_token stop = {});
// Server-side apply of `object` (the fields this manager wants; no managedFields). Requires
// options.field_manager.
[[nodiscard]] Result<ObjectResponse> apply_object(ApiClient& client, const ResourceRef& resource,
                                                  std::string_view name, const Json& object,
                                                  const WriteOptions& options,
                                                  std::stop_token stop = {});
[[nodiscard]] Result<ObjectResponse> delete_object(ApiClient& client, const ResourceRef& resource,
                                                   std::string_view name,
                                                   std::stop_token stop = {});

// Whether `name` can name an object (see above).
[[nodiscard]] bool valid_object_name(std::string_view name);

}  // namespace topoguard::kube
