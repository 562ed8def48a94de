#include "topoguard/kube/list.h"

#include <algorithm>
#include <iterator>
#include <utility>

#include "topoguard/common/json_reader.h"

namespace topoguard::kube {

namespace {

using Members = Json::object_t::Container;  // vector<pair<const string, Json>>

// Moves the items of one page into `items`; false (with result.error set) when it cannot be
// read.
bool take_page(Json& page, std::vector<Json>& items, ListResult& result, std::string& token) {
  Json* page_items = nullptr;
  if (auto found = page.find("items"); found != page.end() && found->is_array()) {
    page_items = &*found;
  } else if (found == page.end() || !found->is_null()) {  // an empty list may say items: null
    result.error = "the answer has no items";
    return false;
  }
  std::string kind = string_member(page, "kind");
  if (kind.size() > 4 && kind.ends_with("List")) {
    kind.resize(kind.size() - 4);
  } else {
    kind.clear();
  }
  const std::string api_version = string_member(page, "apiVersion");
  if (page_items != nullptr) {
    items.reserve(page_items->size());
    for (Json& item : *page_items) {
      if (!item.is_object()) {
        result.error = "an item is not an object";
        return false;
      }
      const bool add_kind = !kind.empty() && !item.contains("kind");
      const bool add_version = !api_version.empty() && !item.contains("apiVersion");
      if (!add_kind && !add_version) {
        items.push_back(std::move(item));
        continue;
      }
      // kind and apiVersion first, as the server writes an object; members appended directly
      // (ordered_json's insert would look each key up, n^2 for an object of n keys).
      Json typed = Json::object();
      auto& members = static_cast<Members&>(typed.get_ref<Json::object_t&>());
      auto& old_members = static_cast<Members&>(item.get_ref<Json::object_t&>());
      members.reserve(old_members.size() + 2);
      if (add_kind) {
        members.emplace_back("kind", kind);
      }
      if (add_version) {
        members.emplace_back("apiVersion", api_version);
      }
      for (auto& [key, value] : old_members) {
        members.emplace_back(key, std::move(value));
      }
      items.push_back(std::move(typed));
    }
  }
  const Json* metadata = member(page, "metadata");
  result.resource_version = metadata != nullptr ? string_member(*metadata, "resourceVersion") : "";
  token = metadata != nullptr ? string_member(*metadata, "continue") : "";
  return true;
}

}  // namespace

std::string ResourceRef::path() const {
  std::string path = group.empty() ? "/api/" + version : "/apis/" + group + "/" + version;
  if (!namespace_.empty()) {
    path += "/namespaces/" + namespace_;
  }
  return path + "/" + resource;
}

std::string ResourceRef::to_string() const {
  std::string text = resource + "." + version;
  if (!group.empty()) {
    text += "." + group;
  }
  if (!namespace_.empty()) {
    text += " in " + namespace_;
  }
  return text;
}

void add_selectors(const ListOptions& options, Query& query) {
  if (!options.label_selector.empty()) {
    query.emplace_back("labelSelector", options.label_selector);
  }
  if (!options.field_selector.empty()) {
    query.emplace_back("fieldSelector", options.field_selector);
  }
}

ListResult list_resource_pages(ApiClient& client, const ResourceRef& resource,
                               const ListOptions& options, const ListPageSink& on_page,
                               std::stop_token stop, const ExpiredContinueSink& on_expired) {
  const std::string path = resource.path();
  ListResult result;
  std::vector<Json> items;  // of one page
  std::string token;
  JsonReader reader;
  bool paginate = options.page_size > 0;
  std::size_t limit = options.page_size;
  while (true) {
    Query query;
    if (paginate) {
      query.emplace_back("limit", std::to_string(limit));
    }
    if (!token.empty()) {
      query.emplace_back("continue", token);  // never with resourceVersion
    }
    add_selectors(options, query);
    Result<ApiResponse> response = client.get(path, query, stop);
    if (stop.stop_requested()) {
      result.stopped = true;
      return result;
    }
    if (!response) {
      result.error = "list: " + response.error().message;
      return result;
    }
    if (!response->ok()) {
      const ApiStatus& status = *response->error;
      if (status.expired() && !token.empty()) {
        // The continue token expired mid-list: start over; a second time, in one piece.
        if (on_expired) {
          on_expired(status);
        }
        if (++result.expired_continues >= 2) {
          paginate = false;
        }
        token.clear();
        continue;
      }
      result.error = "list: " + status.to_string();
      result.status = status;
      return result;
    }
    Result<Json> page = reader.read(response->body);
    const std::size_t body_bytes = response->body.size();
    response->body.clear();
    response->body.shrink_to_fit();
    if (!page || !page->is_object()) {
      result.error = "list: the answer is not a JSON object" +
                     (page ? std::string() : " (" + page.error().message + ")");
      result.invalid = true;
      return result;
    }
    const bool taken = take_page(*page, items, result, token);
    *page = Json();  // the page's tree goes before the sink keeps what it reads of it
    if (!taken) {
      result.error = "list: " + result.error;
      result.invalid = true;
      return result;
    }
    if (options.page_bytes > 0 && !items.empty()) {
      const std::size_t item_bytes = std::max<std::size_t>(body_bytes / items.size(), 1);
      limit = std::clamp<std::size_t>(options.page_bytes / item_bytes, 1, options.page_size);
    }
    on_page(std::move(items));
    items.clear();
    if (token.empty()) {
      break;
    }
  }
  if (result.resource_version.empty()) {
    result.error = "list: the answer has no metadata.resourceVersion";
    result.invalid = true;
  }
  return result;
}

ListResult list_resource(ApiClient& client, const ResourceRef& resource, const ListOptions& options,
                         std::stop_token stop, const ExpiredContinueSink& on_expired) {
  std::vector<Json> items;
  ListResult result = list_resource_pages(
      client, resource, options,
      [&items](std::vector<Json>&& page) {
        items.insert(items.end(), std::make_move_iterator(page.begin()),
                     std::make_move_iterator(page.end()));
      },
      std::move(stop), [&items, &on_expired](const ApiStatus& status) {
        items.clear();  // the list starts over
        if (on_expired) {
          on_expired(status);
        }
      });
  result.items = std::move(items);
  return result;
}

}  // namespace topoguard::kube
