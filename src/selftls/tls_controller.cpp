#include "topoguard/selftls/tls_controller.h"

#include <algorithm>
#include <array>
#include <functional>
#include <mutex>
#include <set>
#include <stop_token>
#include <utility>
#include <vector>

#include "topoguard/common/base64.h"
#include "topoguard/kube/lease_lock.h"
#include "topoguard/kube/objects.h"
#include "topoguard/kube/reflector.h"
#include "topoguard/runtime/background_loop.h"

namespace topoguard::selftls {

namespace {

const char* const kManagedByLabel = "app.kubernetes.io/managed-by";
// The fieldManager of this controller's writes to the webhook configurations.
const char* const kConfigurationFieldManager = "topoguard-tls";

// The last state of one object watched by name: absent until listed, null when it does not
// exist. A write's answer is newer than what the watch has delivered so far, and the watch may
// still deliver older events in flight: until the watch reaches the written version (events
// come in order), or lists again, the written object stands.
class NamedObjectFeed final : public kube::ReflectorHandler {
 public:
  // `on_change` is called, without the mutex, after each change of the object.
  NamedObjectFeed(std::mutex& mutex, std::function<void()> on_change)
      : mutex_(mutex), on_change_(std::move(on_change)) {}

  void on_list_page(std::vector<Json>&& items) override {
    if (!items.empty()) {
      listed_ = std::move(items.front());  // listed by name: one object at most
    }
  }
  void on_list_discarded() override { listed_ = Json(); }
  void on_sync(const std::string& /*resource_version*/) override {
    set(std::exchange(listed_, Json()), true);
  }
  void on_event(kube::WatchEventType type, Json&& object) override {
    set(type == kube::WatchEventType::kDeleted ? Json() : std::move(object), false);
  }
  void on_error(const kube::ReflectorError& /*error*/) override {}

  // Called with mutex_ held.
  [[nodiscard]] bool synced() const { return synced_; }
  [[nodiscard]] const Json& object() const { return object_; }
  void store_written(Json object) {
    const std::string version = version_of(object);
    if (std::find(seen_.begin(), seen_.end(), version) != seen_.end()) {
      return;  // the watch has delivered it already, and maybe newer ones since
    }
    written_version_ = version;
    object_ = std::move(object);
  }

 private:
  static std::string version_of(const Json& object) {
    const Json* metadata = object.is_object() ? member(object, "metadata") : nullptr;
    return metadata != nullptr ? string_member(*metadata, "resourceVersion") : "";
  }

  void set(Json object, bool listed) {
    {
      std::lock_guard lock(mutex_);
      synced_ = true;
      std::string version = version_of(object);
      if (!written_version_.empty() && !listed && version != written_version_) {
        return;  // older than the write
      }
      seen_[next_seen_++ % seen_.size()] = std::move(version);
      written_version_.clear();
      object_ = std::move(object);
    }
    on_change_();
  }

  std::mutex& mutex_;
  const std::function<void()> on_change_;
  Json listed_;  // of a list in progress; the reflector's thread only
  Json object_;
  std::string written_version_;       // of a write the watch has not delivered yet
  std::array<std::string, 16> seen_;  // the versions the watch delivered last
  std::size_t next_seen_ = 0;
  bool synced_ = false;
};

// The webhooks of a configuration, or none.
const Json* webhooks_of(const Json& configuration) {
  const Json* webhooks = member(configuration, "webhooks");
  return webhooks != nullptr && webhooks->is_array() ? webhooks : nullptr;
}

std::string ca_bundle_of(const Json& webhook) {
  const Json* client_config = member(webhook, "clientConfig");
  if (client_config == nullptr) {
    return "";
  }
  return base64_decode(string_member(*client_config, "caBundle")).value_or("");
}

// The fingerprints of a bundle's certificates; empty when it does not parse.
std::set<std::string> fingerprints(const std::string& bundle_pem) {
  std::set<std::string> found;
  if (Result<std::vector<pki::CertificateInfo>> bundle = pki::read_certificates(bundle_pem);
      bundle) {
    for (const pki::CertificateInfo& info : *bundle) {
      found.insert(info.fingerprint);
    }
  }
  return found;
}

bool bundle_holds(const std::string& bundle_pem, const std::string& cert_pem) {
  Result<pki::CertificateInfo> wanted = pki::read_certificate(cert_pem);
  return wanted && fingerprints(bundle_pem).count(wanted->fingerprint) > 0;
}

}  // namespace

std::vector<std::string> service_dns_names(const std::string& service,
                                           const std::string& namespace_name) {
  const std::string base = service + "." + namespace_name + ".svc";
  return {base, base + ".cluster.local"};
}

std::string TlsStatus::not_ready_reason() const {
  if (!synced) {
    return "self-managed TLS: the Secret and webhook configurations are not listed yet";
  }
  if (!serving_is_secrets) {
    return "self-managed TLS: the served certificate is not yet the Secret's";
  }
  if (!bundles_trust_serving) {
    return "self-managed TLS: a webhook configuration's caBundle does not trust the served "
           "certificate yet (or no configuration exists)";
  }
  return "";
}

std::string render_tls_metrics(const TlsStatus& status) {
  struct Metric {
    const char* name;
    const char* type;
    const char* help;
    std::optional<std::int64_t> value;  // none: not shown
  };
  const auto count = [](std::uint64_t value) { return static_cast<std::int64_t>(value); };
  std::optional<std::int64_t> expiry;
  if (status.certificate_not_after) {
    expiry = std::chrono::duration_cast<std::chrono::seconds>(
                 status.certificate_not_after->time_since_epoch())
                 .count();
  }
  const Metric metrics[] = {
      {"topoguard_tls_leader", "gauge",
       "1 when this replica holds the Lease and writes the Secret and caBundles",
       status.leader ? 1 : 0},
      {"topoguard_tls_ready", "gauge",
       "1 when the served certificate is the Secret's and every caBundle trusts it",
       status.ready() ? 1 : 0},
      {"topoguard_tls_certificate_expiry_timestamp_seconds", "gauge",
       "NotAfter of the served certificate, seconds since the epoch", expiry},
      {"topoguard_tls_secret_writes_total", "counter", "Writes of the TLS Secret by this replica",
       count(status.secret_writes)},
      {"topoguard_tls_certificate_renewals_total", "counter",
       "Serving certificates issued by this replica", count(status.certificate_renewals)},
      {"topoguard_tls_ca_rotations_total", "counter",
       "CA rotations completed by this replica (a next CA began signing)",
       count(status.ca_rotations)},
      {"topoguard_tls_cabundle_repairs_total", "counter",
       "Webhooks whose clientConfig.caBundle this replica patched", count(status.bundle_repairs)},
      {"topoguard_tls_failure_policy_changes_total", "counter",
       "Webhooks this replica set to the failurePolicy of their configuration's annotation",
       count(status.failure_policy_changes)},
      {"topoguard_tls_errors_total", "counter",
       "Failed reads and writes of the Secret, Lease and webhook configurations",
       count(status.errors)},
  };
  std::string text;
  for (const Metric& metric : metrics) {
    if (metric.value) {
      text += std::string("# HELP ") + metric.name + " " + metric.help + "\n# TYPE " +
              metric.name + " " + metric.type + "\n" + metric.name + " " +
              std::to_string(*metric.value) + "\n";
    }
  }
  return text;
}

struct TlsController::Impl {
  Impl(kube::ApiClientPtr api, TlsControllerOptions controller_options, kube::ClockPtr time,
       ServingSink sink, EventSink event_sink)
      : client(std::move(api)),
        options(std::move(controller_options)),
        clock(std::move(time)),
        on_serving(std::move(sink)),
        on_event(std::move(event_sink)),
        secrets{"", "v1", "secrets", options.secret_namespace},
        validating{"admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations", ""},
        mutating{"admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations", ""},
        secret_feed(mutex, [this] { loop.poke(); }),
        validating_feed(mutex, [this] { loop.poke(); }),
        mutating_feed(mutex, [this] { loop.poke(); }),
        lease(client,
              {options.secret_namespace, options.lease_name, options.identity,
               options.lease_duration, options.renew_deadline, options.retry_period},
              clock) {
    options.policy.dns_names = service_dns_names(options.service_name, options.service_namespace);
    secret_reflector = std::make_unique<kube::Reflector>(client, secrets, secret_feed,
                                                         by_name(options.secret_name));
    validating_reflector = std::make_unique<kube::Reflector>(
        client, validating, validating_feed, by_name(options.webhook_configuration));
    mutating_reflector = std::make_unique<kube::Reflector>(client, mutating, mutating_feed,
                                                           by_name(options.webhook_configuration));
  }

  static kube::ReflectorOptions by_name(const std::string& name) {
    kube::ReflectorOptions reflector;
    reflector.field_selector = "metadata.name=" + name;
    return reflector;
  }

  void reconcile(std::stop_token stop);
  void fail(std::string message);
  Json current_object(const NamedObjectFeed& feed) const {
    std::lock_guard lock(mutex);
    return feed.object();
  }
  void report(bool failure, const std::string& message) const {
    if (on_event) {
      on_event(failure, message);
    }
  }
  bool write_secret(const Json& current, const TlsMaterial& material, std::stop_token stop);
  void patch_bundles(const kube::ResourceRef& resource, const Json& configuration,
                     const std::string& bundle_pem, std::stop_token stop);
  void patch_failure_policies(const kube::ResourceRef& resource, const Json& configuration,
                              std::stop_token stop);
  void send_webhook_patch(const kube::ResourceRef& resource, const Json& patch,
                          const std::string& field, std::uint64_t changes,
                          std::uint64_t TlsStatus::*counter, std::stop_token stop);
  void release_ownership(const kube::ResourceRef& resource, const Json& configuration,
                         std::stop_token stop);
  void serve_secret(const Json& secret);
  bool configurations_trust(const std::string& cert_pem, const Json& validating_object,
                            const Json& mutating_object) const;

  const kube::ApiClientPtr client;
  TlsControllerOptions options;
  const kube::ClockPtr clock;
  const ServingSink on_serving;
  const EventSink on_event;
  const kube::ResourceRef secrets;
  const kube::ResourceRef validating;
  const kube::ResourceRef mutating;

  mutable std::mutex mutex;  // guards the feeds' objects and status
  NamedObjectFeed secret_feed;
  NamedObjectFeed validating_feed;
  NamedObjectFeed mutating_feed;
  TlsStatus state;

  kube::LeaseLock lease;        // the control thread's only
  std::string served_cert_pem;  // the control thread's only
  std::chrono::steady_clock::time_point next_lease_attempt{};
  std::set<std::string> refused_annotations;  // reported once each; the control thread's only
  std::unique_ptr<kube::Reflector> secret_reflector;
  std::unique_ptr<kube::Reflector> validating_reflector;
  std::unique_ptr<kube::Reflector> mutating_reflector;
  // Reconciles on every change of a feed (poked), after retry_period or resync at the latest.
  runtime::BackgroundLoop loop;
};

void TlsController::Impl::fail(std::string message) {
  report(true, message);
  std::lock_guard lock(mutex);
  ++state.errors;
  state.last_error = std::move(message);
}

bool TlsController::Impl::write_secret(const Json& current, const TlsMaterial& material,
                                       std::stop_token stop) {
  Json secret = current.is_object() ? current : Json::object();
  secret["apiVersion"] = "v1";
  secret["kind"] = "Secret";
  if (!secret.contains("type")) {
    secret["type"] = "kubernetes.io/tls";  // a Secret's type cannot change once created
  }
  Json& metadata = secret["metadata"];
  metadata["name"] = options.secret_name;
  metadata["namespace"] = options.secret_namespace;
  metadata["labels"][kManagedByLabel] = "topoguard";
  Json annotations = metadata.contains("annotations") && metadata["annotations"].is_object()
                         ? metadata["annotations"]
                         : Json::object();
  annotations.erase(kPreviousUntilAnnotation);
  annotations.update(tls_secret_annotations(material));
  metadata["annotations"] = std::move(annotations);
  secret["data"] = tls_secret_data(material);
  secret.erase("stringData");

  Result<kube::ObjectResponse> written =
      current.is_object()
          ? kube::update_object(*client, secrets, options.secret_name, secret, {}, stop)
          : kube::create_object(*client, secrets, secret, {}, stop);
  if (written && written->ok()) {
    std::lock_guard lock(mutex);
    secret_feed.store_written(written->object);
    ++state.secret_writes;
    return true;
  }
  if (written && written->conflict()) {
    // Another writer got there first: read what it wrote and plan again from that.
    Result<kube::ObjectResponse> fresh =
        kube::get_object(*client, secrets, options.secret_name, stop);
    if (fresh && (fresh->ok() || fresh->not_found())) {
      std::lock_guard lock(mutex);
      secret_feed.store_written(fresh->ok() ? fresh->object : Json());
    }
    return false;
  }
  fail("writing Secret " + options.secret_namespace + "/" + options.secret_name + ": " +
       (written ? written->describe() : written.error().message));
  return false;
}

void TlsController::Impl::patch_bundles(const kube::ResourceRef& resource,
                                        const Json& configuration, const std::string& bundle_pem,
                                        std::stop_token stop) {
  const Json* webhooks = webhooks_of(configuration);
  if (webhooks == nullptr) {
    return;
  }
  const std::string encoded = base64_encode(bundle_pem);
  const std::set<std::string> wanted = fingerprints(bundle_pem);
  Json patch = Json::array();
  std::uint64_t repairs = 0;
  for (std::size_t i = 0; i < webhooks->size(); ++i) {
    const Json& webhook = (*webhooks)[i];
    if (fingerprints(ca_bundle_of(webhook)) == wanted) {
      continue;  // the same CAs, maybe in another order: nothing to write
    }
    const std::string at = "/webhooks/" + std::to_string(i);
    // The test pins the index to the webhook read, in case the list changed meanwhile.
    patch.push_back(
        {{"op", "test"}, {"path", at + "/name"}, {"value", string_member(webhook, "name")}});
    if (member(webhook, "clientConfig") == nullptr) {
      patch.push_back({{"op", "add"}, {"path", at + "/clientConfig"}, {"value", Json::object()}});
    }
    patch.push_back({{"op", "add"}, {"path", at + "/clientConfig/caBundle"}, {"value", encoded}});
    ++repairs;
  }
  if (repairs > 0) {
    send_webhook_patch(resource, patch, "caBundle", repairs, &TlsStatus::bundle_repairs, stop);
  }
}

void TlsController::Impl::send_webhook_patch(const kube::ResourceRef& resource,
                                             const Json& patch, const std::string& field,
                                             std::uint64_t changes,
                                             std::uint64_t TlsStatus::*counter,
                                             std::stop_token stop) {
  const std::string name = options.webhook_configuration;
  Result<kube::ObjectResponse> patched =
      kube::patch_object(*client, resource, name, kube::kJsonPatchContent, patch,
                         {.field_manager = kConfigurationFieldManager}, stop);
  if (patched && patched->ok()) {
    std::lock_guard lock(mutex);
    (resource.resource == validating.resource ? validating_feed : mutating_feed)
        .store_written(patched->object);
    state.*counter += changes;
    report(false, field + " set in " + std::to_string(changes) + " webhook(s) of " +
                      resource.resource + " " + name);
    return;
  }
  fail("patching the " + field + " of " + resource.resource + " " + name + ": " +
       (patched ? patched->describe() : patched.error().message));
}

void TlsController::Impl::patch_failure_policies(const kube::ResourceRef& resource,
                                                 const Json& configuration,
                                                 std::stop_token stop) {
  const Json* metadata = member(configuration, "metadata");
  const Json* annotations = metadata != nullptr ? member(*metadata, "annotations") : nullptr;
  const std::string annotated =
      annotations != nullptr ? string_member(*annotations, kFailurePolicyAnnotation) : "";
  const Json* webhooks = webhooks_of(configuration);
  if (annotated.empty() || webhooks == nullptr) {
    return;
  }
  const Json wanted = Json::parse(annotated, nullptr, false);
  const bool valid =
      wanted.is_object() && std::all_of(wanted.begin(), wanted.end(), [](const Json& policy) {
        return policy == "Fail" || policy == "Ignore";
      });
  if (!valid) {
    // Said once per text: the annotation is read again at every check.
    if (refused_annotations.insert(resource.resource + "\n" + annotated).second) {
      fail("annotation " + std::string(kFailurePolicyAnnotation) + " of " + resource.resource +
           " " + options.webhook_configuration +
           " is not a JSON object of webhook names to \"Fail\" or \"Ignore\"; no failurePolicy "
           "is changed");
    }
    return;
  }
  Json patch = Json::array();
  std::uint64_t changes = 0;
  for (std::size_t i = 0; i < webhooks->size(); ++i) {
    const Json& webhook = (*webhooks)[i];
    const auto policy = wanted.find(string_member(webhook, "name"));
    if (policy == wanted.end() || string_member(webhook, "failurePolicy") == *policy) {
      continue;
    }
    const std::string at = "/webhooks/" + std::to_string(i);
    patch.push_back(
        {{"op", "test"}, {"path", at + "/name"}, {"value", string_member(webhook, "name")}});
    patch.push_back({{"op", "add"}, {"path", at + "/failurePolicy"}, {"value", *policy}});
    ++changes;
  }
  if (changes > 0) {
    send_webhook_patch(resource, patch, "failurePolicy", changes,
                       &TlsStatus::failure_policy_changes, stop);
  }
}

// helm applies the configurations server-side: a field this controller owned with another
// value than a revision's (Fail, where the install revision registers Ignore) would fail that
// revision's apply, a `helm rollback` or `--rollback-on-failure` to it, with a conflict. So the
// controller keeps no ownership of what it sets: it drops its managedFields entry afterwards (an
// update that changes managedFields alone stores them as sent, k8s.io/apimachinery's
// FieldManager.Update), and the fields stay, owned by no one, until an apply sets them.
void TlsController::Impl::release_ownership(const kube::ResourceRef& resource,
                                            const Json& configuration, std::stop_token stop) {
  const Json* metadata = member(configuration, "metadata");
  const Json* managed = metadata != nullptr ? member(*metadata, "managedFields") : nullptr;
  // Never the last entry: an update that empties managedFields keeps the live ones instead.
  if (managed == nullptr || !managed->is_array() || managed->size() < 2) {
    return;
  }
  for (std::size_t i = 0; i < managed->size(); ++i) {
    const Json& entry = (*managed)[i];
    if (string_member(entry, "manager") != kConfigurationFieldManager ||
        string_member(entry, "operation") != "Update") {
      continue;
    }
    const std::string at = "/metadata/managedFields/" + std::to_string(i);
    const Json patch = Json::array(
        {{{"op", "test"}, {"path", at + "/manager"}, {"value", kConfigurationFieldManager}},
         {{"op", "remove"}, {"path", at}}});
    const std::string name = options.webhook_configuration;
    Result<kube::ObjectResponse> patched = kube::patch_object(
        *client, resource, name, kube::kJsonPatchContent, patch,
        {.field_manager = kConfigurationFieldManager}, stop);
    if (patched && patched->ok()) {
      std::lock_guard lock(mutex);
      (resource.resource == validating.resource ? validating_feed : mutating_feed)
          .store_written(patched->object);
    } else if (!patched || !patched->conflict()) {
      fail("giving up the fields set in " + resource.resource + " " + name + ": " +
           (patched ? patched->describe() : patched.error().message));
    }
    return;  // one entry at most; a list changed meanwhile is read again at the next check
  }
}

void TlsController::Impl::serve_secret(const Json& secret) {
  if (!secret.is_object()) {
    return;
  }
  const TlsMaterial material = read_tls_secret(secret);
  if (material.serving.cert_pem.empty() || material.serving.cert_pem == served_cert_pem) {
    return;
  }
  if (on_serving(material.serving)) {
    served_cert_pem = material.serving.cert_pem;
    std::optional<Time> not_after;
    if (Result<pki::CertificateInfo> info = pki::read_certificate(served_cert_pem); info) {
      not_after = info->not_after;
    }
    std::lock_guard lock(mutex);
    state.certificate_not_after = not_after;
  }
}

bool TlsController::Impl::configurations_trust(const std::string& cert_pem,
                                               const Json& validating_object,
                                               const Json& mutating_object) const {
  if (cert_pem.empty() || (!validating_object.is_object() && !mutating_object.is_object())) {
    return false;
  }
  const Time now = clock->wall_now();
  for (const Json* configuration : {&validating_object, &mutating_object}) {
    const Json* webhooks = configuration->is_object() ? webhooks_of(*configuration) : nullptr;
    if (webhooks == nullptr) {
      continue;
    }
    for (const Json& webhook : *webhooks) {
      if (!pki::verify_serving_certificate(cert_pem, ca_bundle_of(webhook),
                                           options.policy.dns_names.front(), now)) {
        return false;
      }
    }
  }
  return true;
}

void TlsController::Impl::reconcile(std::stop_token stop) {
  if (clock->now() >= next_lease_attempt) {
    const bool leader = lease.try_acquire_or_renew(stop);
    next_lease_attempt = clock->now() + options.retry_period;
    std::lock_guard lock(mutex);
    state.leader = leader;
    if (!lease.last_error().empty()) {
      state.last_error = lease.last_error();
    }
  }
  Json secret;
  Json validating_object;
  Json mutating_object;
  bool synced = false;
  {
    std::lock_guard lock(mutex);
    synced = secret_feed.synced() && validating_feed.synced() && mutating_feed.synced();
    secret = secret_feed.object();
    validating_object = validating_feed.object();
    mutating_object = mutating_feed.object();
    state.synced = synced;
  }
  if (synced && lease.held()) {
    std::optional<TlsMaterial> current;
    if (secret.is_object()) {
      current = read_tls_secret(secret);
    }
    bool bundles_hold_next = current && current->next_ca;
    if (bundles_hold_next) {
      for (const Json* configuration : {&validating_object, &mutating_object}) {
        const Json* webhooks = configuration->is_object() ? webhooks_of(*configuration) : nullptr;
        for (std::size_t i = 0; webhooks != nullptr && i < webhooks->size(); ++i) {
          bundles_hold_next = bundles_hold_next && bundle_holds(ca_bundle_of((*webhooks)[i]),
                                                                current->next_ca->cert_pem);
        }
      }
    }
    Result<TlsPlan> plan = plan_tls(current, options.policy, clock->wall_now(), bundles_hold_next);
    if (!plan) {
      fail("planning the certificates: " + plan.error().message);
    } else if (!plan->write || write_secret(secret, *plan->write, stop)) {
      if (plan->write) {
        std::string reasons;
        for (const std::string& reason : plan->reasons) {
          reasons += (reasons.empty() ? "" : "; ") + reason;
        }
        report(false, "Secret " + options.secret_namespace + "/" + options.secret_name +
                          " written: " + reasons);
        std::lock_guard lock(mutex);
        state.certificate_renewals += plan->renewed_certificate ? 1 : 0;
        state.ca_rotations += plan->rotated_ca ? 1 : 0;
        secret = secret_feed.object();
      }
      if (Result<std::string> bundle = pki::make_bundle(plan->bundle); bundle) {
        if (validating_object.is_object()) {
          patch_bundles(validating, validating_object, *bundle, stop);
        }
        if (mutating_object.is_object()) {
          patch_bundles(mutating, mutating_object, *bundle, stop);
        }
      }
    }
  }
  serve_secret(secret);
  {
    std::lock_guard lock(mutex);
    secret = secret_feed.object();
    validating_object = validating_feed.object();
    mutating_object = mutating_feed.object();
  }
  const TlsMaterial material = secret.is_object() ? read_tls_secret(secret) : TlsMaterial{};
  const bool serving_is_secrets =
      !served_cert_pem.empty() && material.serving.cert_pem == served_cert_pem;
  const bool trusted = configurations_trust(served_cert_pem, validating_object, mutating_object);
  {
    std::lock_guard lock(mutex);
    state.serving_is_secrets = serving_is_secrets;
    state.bundles_trust_serving = trusted;
  }
  if (!lease.held()) {
    return;
  }
  for (const auto& [resource, feed] : {std::pair{&validating, &validating_feed},
                                       std::pair{&mutating, &mutating_feed}}) {
    // Ready: the API server can call this replica, so a webhook may now fail closed.
    if (const Json configuration = current_object(*feed);
        serving_is_secrets && trusted && configuration.is_object()) {
      patch_failure_policies(*resource, configuration, stop);
    }
    if (const Json configuration = current_object(*feed); configuration.is_object()) {
      release_ownership(*resource, configuration, stop);
    }
  }
}

TlsController::TlsController(kube::ApiClientPtr client, TlsControllerOptions options,
                             kube::ClockPtr clock, ServingSink on_serving, EventSink on_event)
    : impl_(std::make_unique<Impl>(std::move(client), std::move(options), std::move(clock),
                                   std::move(on_serving), std::move(on_event))) {}

TlsController::~TlsController() { stop(); }

void TlsController::start() {
  Impl& impl = *impl_;
  impl.secret_reflector->start();
  impl.validating_reflector->start();
  impl.mutating_reflector->start();
  const auto wait = std::min<std::chrono::nanoseconds>(impl.options.retry_period,
                                                       impl.options.resync);
  impl.loop.start(
      [&impl, wait](bool /*poked*/, std::stop_token stop) {
        impl.reconcile(stop);
        return wait;
      },
      [&impl] { impl.lease.release(); });
}

bool TlsController::stop(std::chrono::steady_clock::time_point deadline) {
  const bool stopped = impl_->loop.stop(deadline);
  impl_->secret_reflector->stop();
  impl_->validating_reflector->stop();
  impl_->mutating_reflector->stop();
  return stopped;
}

void TlsController::poke() { impl_->loop.poke(); }

TlsStatus TlsController::status() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->state;
}

}  // namespace topoguard::selftls
