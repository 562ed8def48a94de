// One writer at a time among replicas, with a coordination.k8s.io/v1 Lease as client-go's
// leader election uses it (k8s.io/client-go/tools/leaderelection):
//  - the holder writes spec.holderIdentity and renews spec.renewTime every retry period;
//  - another replica takes the Lease only when its record has not changed for
//    leaseDurationSeconds *as that replica observed it* (its own steady clock: clocks of
//    different nodes are never compared), with an update that carries the resourceVersion it
//    read, so of two replicas racing for it one gets 409 Conflict and stays a follower;
//  - a holder that could not renew for `renew_deadline` (below the lease duration) stops
//    acting as the holder before anyone else may take over;
//  - release() clears the holder at shutdown, so a successor need not wait out the lease.
// Not thread-safe: one controller thread drives it.
#pragma once

#include <chrono>
#include <optional>
#include <stop_token>
#include <string>

#include "topoguard/common/json.h"
#include "topoguard/kube/api_client.h"
#include "topoguard/kube/clock.h"

namespace topoguard::kube {

struct LeaseOptions {
  std::string namespace_;
  std::string name;
  std::string identity;  // unique per replica, e.g. the pod's name and a random suffix
  std::chrono::seconds lease_duration{15};
  std::chrono::seconds renew_deadline{10};
  std::chrono::seconds retry_period{2};
};

// A unique identity for this process: `prefix` (the pod name) and a random suffix, as client-go
// recommends, so a restarted pod with the same name is another holder.
[[nodiscard]] std::string lease_identity(std::string_view prefix);

class LeaseLock {
 public:
  LeaseLock(ApiClientPtr client, LeaseOptions options, ClockPtr clock);

  // One attempt to take or renew the Lease; whether this replica holds it afterwards. Errors
  // (the API unreachable) count as a failed renewal.
  bool try_acquire_or_renew(std::stop_token stop = {});
  // Holds the Lease: the last renewal succeeded less than renew_deadline ago.
  [[nodiscard]] bool held() const;
  // Gives the Lease up if held (holderIdentity cleared); best effort.
  void release(std::stop_token stop = {});

  [[nodiscard]] const std::string& holder() const { return observed_holder_; }
  [[nodiscard]] const std::string& last_error() const { return last_error_; }
  [[nodiscard]] std::uint64_t transitions() const { return acquisitions_; }

 private:
  Json lease_object(const Json* current) const;
  void observe(const Json& lease);

  ApiClientPtr client_;
  LeaseOptions options_;
  ClockPtr clock_;
  std::string observed_record_;  // holder and renew time last read
  std::string observed_holder_;
  std::chrono::steady_clock::time_point observed_at_{};
  std::optional<std::chrono::steady_clock::time_point> renewed_at_;
  std::string last_error_;
  std::uint64_t acquisitions_ = 0;
};

}  // namespace topoguard::kube
