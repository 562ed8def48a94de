// One consistent list of a resource, read the way client-go's pager reads it: pages of
// `page_size` (500) chained by `continue`, never sending resourceVersion with a continue token
// (the first page asks for the latest state, a consistent read); a continue token that expired
// (410) restarts the list, and a second expiry in the same list makes it one unpaginated list.
// Items get kind and apiVersion from the list (list items carry none, kubernetes#3030). The
// reflector lists with it; one-shot readers (an audit of the cluster) can too. Runs on the
// calling thread.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "topoguard/common/json.h"
#include "topoguard/kube/api_client.h"

namespace topoguard::kube {

struct ResourceRef {
  std::string group;  // "" for the core group
  std::string version;
  std::string resource;    // plural, e.g. "resourceslices"
  std::string namespace_;  // "": every namespace (or a cluster-scoped resource)

  // "/api/v1/namespaces/NS/pods", "/apis/resource.k8s.io/v1/resourceslices".
  [[nodiscard]] std::string path() const;
  // "resourceslices.v1.resource.k8s.io", "pods.v1" (+ " in NS").
  [[nodiscard]] std::string to_string() const;
};

struct ListOptions {
  std::size_t page_size = 500;  // 0: one unpaginated list
  std::string label_selector;
  std::string field_selector;
  // Above 0: a page is held decoded while it is read, so after one whose body was larger than
  // this, the next pages ask for fewer items (the same bytes per item), page_size at most.
  std::size_t page_bytes = 0;
};

struct ListResult {
  std::vector<Json> items;       // in the server's order, kind and apiVersion set (list_resource)
  std::string resource_version;  // of the whole list
  int expired_continues = 0;     // continue tokens that expired on the way (each restarted it)

  // Set when the list failed: why, and the server's Status when it answered with an error.
  std::string error;
  std::optional<ApiStatus> status;
  bool invalid = false;  // the answer could not be read (not JSON, no items, no version)
  bool stopped = false;  // the stop token ended it

  [[nodiscard]] bool ok() const { return error.empty() && !stopped; }
  // 404: the cluster does not serve the resource (a CRD that is not installed).
  [[nodiscard]] bool not_served() const { return status && status->code == 404; }
};

// Called when a continue token expired, before the list starts over.
using ExpiredContinueSink = std::function<void(const ApiStatus& status)>;

// Receives the items of one page of a list, as each page is read.
using ListPageSink = std::function<void(std::vector<Json>&& items)>;

// The list with its items in `items`.
[[nodiscard]] ListResult list_resource(ApiClient& client, const ResourceRef& resource,
                                       const ListOptions& options, std::stop_token stop = {},
                                       const ExpiredContinueSink& on_expired = nullptr);

// The list handed to `on_page` page by page as each is read (its items left empty), so that no
// more than one page is held decoded: a reader that keeps less than the objects (the cluster
// cache) never holds the whole list. After `on_expired` the list starts over: what `on_page`
// took so far is to be dropped; so is it when the list fails.
[[nodiscard]] ListResult list_resource_pages(ApiClient& client, const ResourceRef& resource,
                                             const ListOptions& options,
                                             const ListPageSink& on_page,
                                             std::stop_token stop = {},
                                             const ExpiredContinueSink& on_expired = nullptr);

// The labelSelector and fieldSelector parameters of `options`, for lists and watches alike.
void add_selectors(const ListOptions& options, Query& query);

}  // namespace topoguard::kube
