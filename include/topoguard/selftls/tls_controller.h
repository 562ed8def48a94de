// Self-managed TLS in the cluster: keeps the webhook's Secret (tls_material.h), the caBundles of
// the Validating and Mutating webhook configurations of one name, and the certificate this
// replica serves in step.
//
// Every replica watches the Secret and both configurations (list/watch by name, so a change or
// a re-applied manifest is seen within seconds) and serves the Secret's certificate (handed to
// `on_serving` whenever it changes). One replica at a time, the holder of a coordination.k8s.io
// Lease, also writes: it creates the Secret when absent, renews and rotates with plan_tls(), and
// patches every webhook's clientConfig.caBundle that differs from the bundle the Secret calls
// for. A Secret write carries the resourceVersion it read, so even two writers could not both
// win; a 409 is read again, never overwritten.
//
// A replica is ready when the certificate it serves is the Secret's and every webhook of the
// configurations (at least one must exist) trusts it: its caBundle verifies that certificate
// for the Service's name.
//
// Install without a window that fails closed: the manifests register a webhook that is to fail
// closed with failurePolicy Ignore and name the policy it is to have in the annotation
// kFailurePolicyAnnotation; once the writer is ready (it serves, and every caBundle trusts it),
// it patches each named webhook's failurePolicy to that value, and keeps it so. Until then an
// unreachable topoguard admits rather than refuses. Its writes to the configurations leave it
// no field ownership (it drops its managedFields entry), so helm's server-side apply of any
// revision, a rollback to the install revision's Ignore included, never conflicts with it.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "topoguard/kube/api_client.h"
#include "topoguard/kube/clock.h"
#include "topoguard/pki/certificates.h"
#include "topoguard/selftls/tls_material.h"

namespace topoguard::selftls {

// On a webhook configuration: a JSON object, webhook name to the failurePolicy ("Fail" or
// "Ignore") it is to have once topoguard serves.
inline constexpr const char* kFailurePolicyAnnotation = "topoguard.dev/failure-policy-when-serving";

struct TlsControllerOptions {
  std::string secret_namespace = "topoguard";
  std::string secret_name = "topoguard-tls";
  std::string service_namespace = "topoguard";
  std::string service_name = "topoguard";
  std::string webhook_configuration = "topoguard";  // both configurations' name
  std::string lease_name = "topoguard-tls";         // in the Secret's namespace
  std::string identity;                             // this replica's Lease identity
  TlsPolicy policy;                                 // dns_names are set from the Service
  std::chrono::seconds lease_duration{15};
  std::chrono::seconds renew_deadline{10};
  std::chrono::seconds retry_period{2};
  // Everything is checked again this often even without an event.
  std::chrono::milliseconds resync{std::chrono::seconds(30)};
};

// "<service>.<namespace>.svc" and "<service>.<namespace>.svc.cluster.local".
[[nodiscard]] std::vector<std::string> service_dns_names(const std::string& service,
                                                         const std::string& namespace_name);

struct TlsStatus {
  bool leader = false;
  bool synced = false;              // the Secret and both configurations have been listed
  bool serving_is_secrets = false;  // the served certificate is the Secret's
  bool bundles_trust_serving = false;
  std::optional<Time> certificate_not_after;  // of the served certificate
  std::uint64_t secret_writes = 0;
  std::uint64_t certificate_renewals = 0;  // serving certificates issued (the first included)
  std::uint64_t ca_rotations = 0;          // next CAs that began signing
  std::uint64_t bundle_repairs = 0;        // webhooks whose caBundle was patched
  std::uint64_t failure_policy_changes = 0;  // webhooks set to their annotated failurePolicy
  std::uint64_t errors = 0;
  std::string last_error;

  [[nodiscard]] bool ready() const { return serving_is_secrets && bundles_trust_serving; }
  // Why it is not ready (for /readyz), or "".
  [[nodiscard]] std::string not_ready_reason() const;
};

// The status as Prometheus text (topoguard_tls_*).
[[nodiscard]] std::string render_tls_metrics(const TlsStatus& status);

class TlsController {
 public:
  // Called on the controller's thread with the Secret's serving pair whenever it differs from
  // the last one accepted; false when the pair cannot be served (it is then retried when the
  // Secret changes).
  using ServingSink = std::function<bool(const pki::PemPair& serving)>;
  // What the controller did or failed to do, for the log (called on its thread).
  using EventSink = std::function<void(bool failure, const std::string& message)>;

  TlsController(kube::ApiClientPtr client, TlsControllerOptions options, kube::ClockPtr clock,
                ServingSink on_serving, EventSink on_event = nullptr);
  ~TlsController();  // stop()
  TlsController(const TlsController&) = delete;
  TlsController& operator=(const TlsController&) = delete;

  // Starts the watches and the control loop on threads of their own.
  void start();
  // Releases the Lease if held and joins every thread; false when the control loop still runs
  // at `deadline` (runtime::BackgroundLoop). Idempotent.
  bool stop(std::chrono::steady_clock::time_point deadline =
                std::chrono::steady_clock::time_point::max());
  // Re-checks now instead of at the next event or tick.
  void poke();

  [[nodiscard]] TlsStatus status() const;
  [[nodiscard]] bool ready() const { return status().ready(); }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace topoguard::selftls
