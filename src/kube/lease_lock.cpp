#include "topoguard/kube/lease_lock.h"

#include <random>
#include <utility>

#include "topoguard/kube/list.h"
#include "topoguard/kube/objects.h"
#include "topoguard/kube/rfc3339.h"

namespace topoguard::kube {

namespace {

ResourceRef leases_in(const std::string& namespace_name) {
  return {"coordination.k8s.io", "v1", "leases", namespace_name};
}

const Json* spec_of(const Json& lease) { return member(lease, "spec"); }

}  // namespace

std::string lease_identity(std::string_view prefix) {
  std::random_device device;
  std::uniform_int_distribution<unsigned> digit(0, 15);
  std::string identity(prefix.empty() ? "topoguard" : prefix);
  identity += '_';
  for (int i = 0; i < 16; ++i) {
    identity += "0123456789abcdef"[digit(device)];
  }
  return identity;
}

LeaseLock::LeaseLock(ApiClientPtr client, LeaseOptions options, ClockPtr clock)
    : client_(std::move(client)), options_(std::move(options)), clock_(std::move(clock)) {}

bool LeaseLock::held() const {
  return renewed_at_ && clock_->now() - *renewed_at_ < options_.renew_deadline;
}

void LeaseLock::observe(const Json& lease) {
  const Json* spec = spec_of(lease);
  const std::string holder = spec != nullptr ? string_member(*spec, "holderIdentity") : "";
  const std::string record =
      holder + "\n" + (spec != nullptr ? string_member(*spec, "renewTime") : "");
  if (record != observed_record_) {
    observed_record_ = record;
    observed_at_ = clock_->now();
  }
  observed_holder_ = holder;
}

Json LeaseLock::lease_object(const Json* current) const {
  const std::string now = format_rfc3339_micro(clock_->wall_now());
  Json lease = current != nullptr ? *current : Json::object();
  lease["apiVersion"] = "coordination.k8s.io/v1";
  lease["kind"] = "Lease";
  lease["metadata"]["name"] = options_.name;
  lease["metadata"]["namespace"] = options_.namespace_;
  const Json* old_spec = current != nullptr ? spec_of(*current) : nullptr;
  const std::string old_holder =
      old_spec != nullptr ? string_member(*old_spec, "holderIdentity") : "";
  std::int64_t transitions = 0;
  if (old_spec != nullptr) {
    if (const Json* count = member(*old_spec, "leaseTransitions");
        count != nullptr && count->is_number_integer()) {
      transitions = count->get<std::int64_t>();
    }
  }
  Json spec = old_spec != nullptr ? *old_spec : Json::object();
  spec["holderIdentity"] = options_.identity;
  spec["leaseDurationSeconds"] = options_.lease_duration.count();
  spec["renewTime"] = now;
  if (old_holder != options_.identity) {
    spec["acquireTime"] = now;
    if (old_spec != nullptr) {
      spec["leaseTransitions"] = transitions + 1;
    }
  }
  lease["spec"] = std::move(spec);
  return lease;
}

bool LeaseLock::try_acquire_or_renew(std::stop_token stop) {
  const ResourceRef leases = leases_in(options_.namespace_);
  const auto now = clock_->now();
  Result<ObjectResponse> read = get_object(*client_, leases, options_.name, stop);
  if (!read || (!read->ok() && !read->not_found())) {
    last_error_ = read ? "reading the Lease: " + read->describe() : read.error().message;
    return held();
  }
  if (read->not_found()) {
    Result<ObjectResponse> created =
        create_object(*client_, leases, lease_object(nullptr), {}, stop);
    if (created && created->ok()) {
      observe(created->object);
      renewed_at_ = now;
      ++acquisitions_;
      last_error_.clear();
      return true;
    }
    last_error_ = created ? "creating the Lease: " + created->describe() : created.error().message;
    return false;  // another replica created it first, or the API refused
  }
  observe(read->object);
  const bool was_holder = observed_holder_ == options_.identity;
  if (!observed_holder_.empty() && !was_holder) {
    std::int64_t duration = options_.lease_duration.count();
    if (const Json* spec = spec_of(read->object); spec != nullptr) {
      if (const Json* seconds = member(*spec, "leaseDurationSeconds");
          seconds != nullptr && seconds->is_number_integer() && seconds->get<std::int64_t>() > 0) {
        duration = seconds->get<std::int64_t>();
      }
    }
    if (now < observed_at_ + std::chrono::seconds(duration)) {
      renewed_at_.reset();
      return false;
    }
  }
  Result<ObjectResponse> updated =
      update_object(*client_, leases, options_.name, lease_object(&read->object), {}, stop);
  if (updated && updated->ok()) {
    observe(updated->object);
    renewed_at_ = now;
    acquisitions_ += was_holder ? 0 : 1;
    last_error_.clear();
    return true;
  }
  last_error_ = updated ? "updating the Lease: " + updated->describe() : updated.error().message;
  if (updated && updated->conflict() && !was_holder) {
    renewed_at_.reset();
    return false;  // another replica took it in between
  }
  return held();
}

void LeaseLock::release(std::stop_token stop) {
  if (!held()) {
    return;
  }
  renewed_at_.reset();
  const ResourceRef leases = leases_in(options_.namespace_);
  Result<ObjectResponse> read = get_object(*client_, leases, options_.name, stop);
  if (!read || !read->ok()) {
    return;
  }
  const Json* spec = spec_of(read->object);
  if (spec == nullptr || string_member(*spec, "holderIdentity") != options_.identity) {
    return;
  }
  Json lease = read->object;
  const std::string now = format_rfc3339_micro(clock_->wall_now());
  lease["spec"]["holderIdentity"] = "";
  lease["spec"]["leaseDurationSeconds"] = 1;
  lease["spec"]["renewTime"] = now;
  lease["spec"]["acquireTime"] = now;
  static_cast<void>(update_object(*client_, leases, options_.name, lease, {}, stop));
}

}  // namespace topoguard::kube
