#include "topoguard/selftls/tls_material.h"

#include <algorithm>
#include <utility>

#include "topoguard/common/base64.h"
#include "topoguard/kube/rfc3339.h"

namespace topoguard::selftls {

namespace {

using std::chrono::duration_cast;

std::string decoded(const Json* data, const char* key) {
  if (data == nullptr) {
    return "";
  }
  const Json* value = member(*data, key);
  if (value == nullptr || !value->is_string()) {
    return "";
  }
  return base64_decode(value->get_ref<const std::string&>()).value_or("");
}

// When `renew_fraction` of the certificate's life has passed.
Time renewal_time(const pki::CertificateInfo& info, double renew_fraction) {
  const auto life = info.not_after - info.not_before;
  return info.not_before +
         duration_cast<Time::duration>(std::chrono::duration<double, Time::period>(
             static_cast<double>(life.count()) * renew_fraction));
}

// The backdate is at most a tenth of the lifetime: renewal comes at a fraction of the whole
// validity, so an hour's backdate on a certificate of minutes would be due the moment it is made.
pki::Validity validity_from(Time now, const TlsPolicy& policy, std::chrono::seconds lifetime) {
  return {now - std::min(policy.backdate, lifetime / 10), now + lifetime};
}

// Empty when `ca` can sign at `now`: a CA certificate in its validity with its own key.
std::string ca_problem(const pki::PemPair& ca, Time now) {
  if (ca.cert_pem.empty() || ca.key_pem.empty()) {
    return "it is missing";
  }
  Result<pki::CertificateInfo> info = pki::read_certificate(ca.cert_pem);
  if (!info) {
    return "its certificate does not parse: " + info.error().message;
  }
  if (!info->is_ca) {
    return "its certificate is not a CA";
  }
  if (now < info->not_before || now > info->not_after) {
    return "it is outside its validity (" + kube::format_rfc3339(info->not_before) + " to " +
           kube::format_rfc3339(info->not_after) + ")";
  }
  Result<bool> matches = pki::key_matches(ca.cert_pem, ca.key_pem);
  if (!matches || !*matches) {
    return "its key is not its certificate's";
  }
  return "";
}

// Empty when `serving` is `ca`'s certificate for every name, valid at `now` and not yet due.
std::string serving_problem(const pki::PemPair& serving, const pki::PemPair& ca,
                            const TlsPolicy& policy, Time now) {
  if (serving.cert_pem.empty() || serving.key_pem.empty()) {
    return "it is missing";
  }
  Result<pki::CertificateInfo> info = pki::read_certificate(serving.cert_pem);
  if (!info) {
    return "it does not parse: " + info.error().message;
  }
  Result<bool> matches = pki::key_matches(serving.cert_pem, serving.key_pem);
  if (!matches || !*matches) {
    return "its key is not its certificate's";
  }
  for (const std::string& name : policy.dns_names) {
    if (Status verified = pki::verify_serving_certificate(serving.cert_pem, ca.cert_pem, name, now);
        !verified) {
      return "it does not verify for " + name + " against the CA: " + verified.error().message;
    }
  }
  if (now >= renewal_time(*info, policy.renew_fraction)) {
    return "it is due for renewal (valid until " + kube::format_rfc3339(info->not_after) + ")";
  }
  return "";
}

}  // namespace

TlsMaterial read_tls_secret(const Json& secret) {
  TlsMaterial material;
  const Json* data = member(secret, "data");
  material.ca = {decoded(data, kCaCertKey), decoded(data, kCaKeyKey)};
  material.serving = {decoded(data, kTlsCertKey), decoded(data, kTlsKeyKey)};
  pki::PemPair next{decoded(data, kNextCaCertKey), decoded(data, kNextCaKeyKey)};
  if (!next.cert_pem.empty() || !next.key_pem.empty()) {
    material.next_ca = std::move(next);
  }
  material.previous_ca_pem = decoded(data, kPreviousCaCertKey);
  if (const Json* metadata = member(secret, "metadata"); metadata != nullptr) {
    if (const Json* annotations = member(*metadata, "annotations"); annotations != nullptr) {
      material.previous_until =
          kube::parse_rfc3339(string_member(*annotations, kPreviousUntilAnnotation));
    }
  }
  return material;
}

Json tls_secret_data(const TlsMaterial& material) {
  Json data = Json::object();
  data[kCaCertKey] = base64_encode(material.ca.cert_pem);
  data[kCaKeyKey] = base64_encode(material.ca.key_pem);
  data[kTlsCertKey] = base64_encode(material.serving.cert_pem);
  data[kTlsKeyKey] = base64_encode(material.serving.key_pem);
  if (material.next_ca) {
    data[kNextCaCertKey] = base64_encode(material.next_ca->cert_pem);
    data[kNextCaKeyKey] = base64_encode(material.next_ca->key_pem);
  }
  if (!material.previous_ca_pem.empty()) {
    data[kPreviousCaCertKey] = base64_encode(material.previous_ca_pem);
  }
  return data;
}

Json tls_secret_annotations(const TlsMaterial& material) {
  Json annotations = Json::object();
  if (!material.previous_ca_pem.empty() && material.previous_until) {
    annotations[kPreviousUntilAnnotation] = kube::format_rfc3339(*material.previous_until);
  }
  return annotations;
}

Result<TlsPlan> plan_tls(const std::optional<TlsMaterial>& current, const TlsPolicy& policy,
                         Time now, bool bundles_hold_next_ca) {
  TlsPlan plan;
  TlsMaterial next = current.value_or(TlsMaterial{});
  bool new_serving = false;

  // 1. A CA that can sign.
  if (std::string problem = ca_problem(next.ca, now); !problem.empty()) {
    plan.reasons.push_back(current ? "the CA in the Secret cannot be used: " + problem
                                   : "there is no Secret yet");
    // A CA certificate that is still valid may be what the served certificate chains to: it
    // stays trusted for the overlap, as after a rotation.
    Result<pki::CertificateInfo> old = pki::read_certificate(next.ca.cert_pem);
    if (old && old->is_ca && now <= old->not_after) {
      next.previous_ca_pem = next.ca.cert_pem;
      next.previous_until = now + policy.previous_overlap;
    }
    Result<pki::PemPair> ca =
        pki::make_ca(policy.ca_common_name, validity_from(now, policy, policy.ca_lifetime));
    if (!ca) {
      return ca.error();
    }
    next.ca = std::move(*ca);
    next.next_ca.reset();
    new_serving = true;
  }

  // 2. and 3. CA rotation: the next CA enters the bundles first, and signs once they hold it.
  if (next.next_ca) {
    if (std::string problem = ca_problem(*next.next_ca, now); !problem.empty()) {
      plan.reasons.push_back("the next CA cannot be used: " + problem);
      next.next_ca.reset();
    }
  }
  if (!new_serving && next.next_ca && bundles_hold_next_ca) {
    plan.reasons.push_back("every caBundle holds the next CA: it now signs");
    next.previous_ca_pem = next.ca.cert_pem;
    next.previous_until = now + policy.previous_overlap;
    next.ca = std::move(*next.next_ca);
    next.next_ca.reset();
    plan.rotated_ca = true;
    new_serving = true;
  }
  const Result<pki::CertificateInfo> ca_info = pki::read_certificate(next.ca.cert_pem);
  if (!ca_info) {
    return ca_info.error();
  }
  const Time ca_renewal = renewal_time(*ca_info, policy.renew_fraction);
  if (!next.next_ca && now >= ca_renewal) {
    plan.reasons.push_back("the CA is due for renewal (valid until " +
                           kube::format_rfc3339(ca_info->not_after) +
                           "): a next CA is added to "
                           "the caBundles before it signs");
    Result<pki::PemPair> ca =
        pki::make_ca(policy.ca_common_name, validity_from(now, policy, policy.ca_lifetime));
    if (!ca) {
      return ca.error();
    }
    next.next_ca = std::move(*ca);
  }

  // 4. The serving certificate.
  if (!new_serving) {
    if (std::string problem = serving_problem(next.serving, next.ca, policy, now);
        !problem.empty()) {
      plan.reasons.push_back("the serving certificate: " + problem);
      new_serving = true;
    }
  }
  if (new_serving) {
    pki::Validity validity = validity_from(now, policy, policy.cert_lifetime);
    validity.not_before = std::max(validity.not_before, ca_info->not_before);
    validity.not_after = std::min(validity.not_after, ca_info->not_after);
    Result<pki::PemPair> serving =
        pki::issue_serving_certificate(next.ca, policy.dns_names, validity);
    if (!serving) {
      return serving.error();
    }
    next.serving = std::move(*serving);
    plan.renewed_certificate = true;
  }

  // 5. A retired CA leaves the bundles after its overlap.
  if (!next.previous_ca_pem.empty()) {
    Result<pki::CertificateInfo> previous = pki::read_certificate(next.previous_ca_pem);
    if (!previous || !next.previous_until || now >= *next.previous_until ||
        now > previous->not_after) {
      plan.reasons.push_back("the previous CA's overlap is over: it leaves the caBundles");
      next.previous_ca_pem.clear();
      next.previous_until.reset();
    }
  } else {
    next.previous_until.reset();
  }

  // What is due next: the earliest renewal or end of an overlap.
  Time due = next.next_ca ? Time::max() : ca_renewal;
  if (Result<pki::CertificateInfo> serving = pki::read_certificate(next.serving.cert_pem);
      serving) {
    due = std::min(due, renewal_time(*serving, policy.renew_fraction));
  }
  if (next.previous_until) {
    due = std::min(due, *next.previous_until);
  }
  plan.next_check = std::max(due, now);

  plan.bundle.push_back(next.ca.cert_pem);
  if (next.next_ca) {
    plan.bundle.push_back(next.next_ca->cert_pem);
  }
  if (!next.previous_ca_pem.empty()) {
    plan.bundle.push_back(next.previous_ca_pem);
  }
  if (!current || !(next == *current)) {
    plan.write = std::move(next);
  }
  return plan;
}

}  // namespace topoguard::selftls
