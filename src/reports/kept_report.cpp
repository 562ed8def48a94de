#include "topoguard/reports/kept_report.h"

#include "topoguard/kube/objects.h"
#include "topoguard/reports/report_sync.h"

namespace topoguard::reports {

KeptReport::KeptReport(kube::ApiClientPtr client) : client_(std::move(client)) {}

Result<KeptReport::Outcome> KeptReport::keep(const kube::ResourceRef& resource, Json document,
                                             std::stop_token stop) {
  const Json* metadata = member(document, "metadata");
  const std::string name = metadata != nullptr ? string_member(*metadata, "name") : "";
  const Key key{resource.to_string(), resource.namespace_, name};
  const std::string hash = stamp_content_hash(document);
  auto known = known_.find(key);
  if (known == known_.end()) {
    Result<kube::ObjectResponse> current = kube::get_object(*client_, resource, name, stop);
    if (!current) {
      return current.error();
    }
    if (!current->ok() && !current->not_found()) {
      return Error{ErrorCode::kIo,
                   "reading " + resource.to_string() + "/" + name + ": " + current->describe(),
                   {}};
    }
    const Json* annotations =
        current->ok() ? find_at(current->object, "/metadata/annotations") : nullptr;
    known = known_
                .insert_or_assign(key, annotations != nullptr && annotations->is_object()
                                           ? string_member(*annotations, kContentHashAnnotation)
                                           : std::string())
                .first;
  }
  if (!known->second.empty() && known->second == hash) {
    return Outcome::kUnchanged;
  }
  Result<kube::ObjectResponse> applied = apply_report(*client_, resource, name, document, stop);
  if (!applied || !applied->ok()) {
    known_.erase(known);
    return Error{ErrorCode::kIo,
                 "applying " + resource.to_string() + "/" + name + ": " +
                     (applied ? applied->describe() : applied.error().message),
                 {}};
  }
  known->second = hash;
  return Outcome::kWritten;
}

}  // namespace topoguard::reports
