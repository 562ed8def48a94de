// One report that one writer keeps in step (a node's inventory report, written by the inventory
// running on that node): applied as background reports are (server-side apply, fieldManager
// topoguard, the content-hash annotation), and only when its content differs from what the
// cluster holds, so an unchanged node costs one GET after a start and no write after that.
#pragma once

#include <map>
#include <stop_token>
#include <string>
#include <tuple>

#include "topoguard/common/json.h"
#include "topoguard/common/result.h"
#include "topoguard/kube/api_client.h"
#include "topoguard/kube/list.h"

namespace topoguard::reports {

class KeptReport {
 public:
  explicit KeptReport(kube::ApiClientPtr client);

  enum class Outcome { kWritten, kUnchanged };
  // Applies `document` (its metadata.name is the report's name; the content-hash annotation is
  // added here) unless the cluster's copy carries the same hash. The cluster's hash is read once
  // (GET) and remembered after each write; a failed write forgets it, so the next call reads it
  // again.
  [[nodiscard]] Result<Outcome> keep(const kube::ResourceRef& resource, Json document,
                                     std::stop_token stop = {});

 private:
  using Key = std::tuple<std::string, std::string, std::string>;  // resource, namespace, name
  kube::ApiClientPtr client_;
  std::map<Key, std::string> known_;  // the cluster's content hash of each report written
};

}  // namespace topoguard::reports
