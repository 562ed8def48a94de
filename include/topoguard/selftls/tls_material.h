// The webhook's own certificates as its Secret holds them, and what the Secret should hold next.
//
// The Secret keeps `ca.crt`/`ca.key` (the CA that signed the serving certificate) and
// `tls.crt`/`tls.key` (the serving certificate), as cert-manager lays them out, so a Secret
// volume or a bring-your-own setup reads the same keys. Rotating the CA takes two more:
// `ca-next.crt`/`ca-next.key`, a CA already in every caBundle but not yet signing, and
// `ca-previous.crt`, the CA that signed the certificate before, kept in the caBundles until
// the time in the annotation topoguard.dev/ca-previous-until. The caBundle is therefore a
// function of the Secret alone, and any replica that takes over the Lease continues a rotation
// where the last writer left it.
//
// plan_tls() is the whole rotation as a pure function of the Secret, the time and whether the
// caBundles already carry the next CA (the controller does the I/O):
//  1. no usable CA: a new CA and serving certificate (first start, or a Secret nobody can use);
//  2. the CA past `renew_fraction` of its life and no next CA: a next CA, added to the bundle;
//  3. a next CA that every caBundle holds: it signs a new serving certificate and becomes the
//     CA; the old CA stays in the bundle for `previous_overlap`;
//  4. a serving certificate that is missing, unusable, not the CA's, not for the Service's names
//     or past `renew_fraction` of its life: a new one from the current CA;
//  5. a previous CA past its time: dropped from the bundle.
// The bundle never loses the CA of a certificate that may still be served, and never lacks the
// CA of the certificate about to be served.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "topoguard/common/json.h"
#include "topoguard/common/result.h"
#include "topoguard/pki/certificates.h"

namespace topoguard::selftls {

using pki::Time;

struct TlsMaterial {
  pki::PemPair ca;
  std::optional<pki::PemPair> next_ca;
  std::string previous_ca_pem;  // empty: none
  std::optional<Time> previous_until;
  pki::PemPair serving;

  bool operator==(const TlsMaterial&) const = default;
};

// The Secret's data keys and annotation.
inline constexpr const char* kCaCertKey = "ca.crt";
inline constexpr const char* kCaKeyKey = "ca.key";
inline constexpr const char* kTlsCertKey = "tls.crt";
inline constexpr const char* kTlsKeyKey = "tls.key";
inline constexpr const char* kNextCaCertKey = "ca-next.crt";
inline constexpr const char* kNextCaKeyKey = "ca-next.key";
inline constexpr const char* kPreviousCaCertKey = "ca-previous.crt";
inline constexpr const char* kPreviousUntilAnnotation = "topoguard.dev/ca-previous-until";

// Reads a Secret object (data base64-encoded, as the API returns it). Keys that are absent or
// not base64 read as empty; whether the PEMs are usable is plan_tls()'s question.
[[nodiscard]] TlsMaterial read_tls_secret(const Json& secret);
// The `data` and `metadata.annotations` a Secret holding `material` needs (type kubernetes.io/tls).
[[nodiscard]] Json tls_secret_data(const TlsMaterial& material);
[[nodiscard]] Json tls_secret_annotations(const TlsMaterial& material);

struct TlsPolicy {
  std::vector<std::string> dns_names;  // the serving certificate's names, the first is its CN
  std::string ca_common_name = "topoguard-webhook-ca";
  std::chrono::seconds ca_lifetime{std::chrono::hours(24 * 3650)};
  std::chrono::seconds cert_lifetime{std::chrono::hours(24 * 365)};
  double renew_fraction = 2.0 / 3.0;  // renewed once this much of a lifetime has passed
  // Certificates start this far in the past (at most a tenth of their lifetime), for clocks
  // behind the writer's.
  std::chrono::seconds backdate{std::chrono::hours(1)};
  // How long a retired CA stays trusted: long enough for every replica to serve the new
  // certificate and every API server to read the new bundle.
  std::chrono::seconds previous_overlap{std::chrono::hours(1)};
};

struct TlsPlan {
  std::optional<TlsMaterial> write;  // the Secret must become this; nullopt: it is right
  std::vector<std::string> reasons;  // why, for logs ("the serving certificate expires ...")
  std::vector<std::string> bundle;   // the CA certificates every caBundle must hold, in order
  bool rotated_ca = false;           // a next CA began signing
  bool renewed_certificate = false;  // a new serving certificate was issued
  Time next_check;                   // nothing is due before this time
};

// `bundles_hold_next_ca`: every webhook configuration's caBundle holds material.next_ca.
// Fails only when a new key or certificate cannot be made.
[[nodiscard]] Result<TlsPlan> plan_tls(const std::optional<TlsMaterial>& current,
                                       const TlsPolicy& policy, Time now,
                                       bool bundles_hold_next_ca);

}  // namespace topoguard::selftls
