// The webhook's own PKI for self-managed TLS: makes a CA and the serving certificate it signs,
// reads and verifies certificates. Everything is in memory with PEM text in and out; nothing reads
// the clock (the caller passes every time), so a controller can decide renewals from values.
// All functions are safe to call from several threads; none keeps state between calls.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "topoguard/common/result.h"

namespace topoguard::pki {

using Time = std::chrono::system_clock::time_point;

struct PemPair {
  std::string cert_pem;
  std::string key_pem;  // PKCS#8 ("BEGIN PRIVATE KEY"), unencrypted

  bool operator==(const PemPair&) const = default;
};

// Kept to the second, rounded down; not_after must be later than not_before. RFC 5280 counts
// the second of not_after as valid, OpenSSL (and so verify_serving_certificate) does not.
struct Validity {
  Time not_before;
  Time not_after;
};

struct CertificateInfo {
  // Dates beyond what Time holds (e.g. the "no expiry" 9999-12-31) read as Time::min()/max().
  Time not_before;
  Time not_after;
  bool is_ca = false;                  // basicConstraints CA:TRUE
  std::vector<std::string> dns_names;  // subjectAltName DNS entries, in order
  std::string subject;                 // RFC 2253, e.g. "CN=topoguard-ca"; empty when none
  std::string fingerprint;             // SHA-256 of the DER, lowercase hex
};

// A self-signed CA: ECDSA P-256 with SHA-256, random 128-bit serial, basicConstraints critical
// CA:TRUE pathlen:0, keyUsage critical keyCertSign+cRLSign, subjectKeyIdentifier.
[[nodiscard]] Result<PemPair> make_ca(std::string_view common_name, Validity validity);

// A serving certificate signed by `ca`: ECDSA P-256 key, subjectAltName DNS = `dns_names` (at
// least one, each a DNS name, "*." allowed first), CN = the first name (no subject, and a critical
// SAN instead, when it is longer than the 64 characters a CN may hold), basicConstraints critical
// CA:FALSE, keyUsage critical digitalSignature, extendedKeyUsage serverAuth, SKI and AKI.
// Fails when `ca` is not a CA, its key is not the certificate's, or `validity` is not inside the
// CA's validity.
[[nodiscard]] Result<PemPair> issue_serving_certificate(const PemPair& ca,
                                                        const std::vector<std::string>& dns_names,
                                                        Validity validity);

// The first certificate of `pem`.
[[nodiscard]] Result<CertificateInfo> read_certificate(std::string_view pem);
// Every certificate of a PEM bundle, in order; fails on none or on a damaged one.
[[nodiscard]] Result<std::vector<CertificateInfo>> read_certificates(std::string_view pem_bundle);

// Whether `key_pem` is the private key of the (first) certificate of `cert_pem`.
[[nodiscard]] Result<bool> key_matches(std::string_view cert_pem, std::string_view key_pem);

// Verifies the first certificate of `cert_pem` (further ones are untrusted intermediates) as a
// TLS server certificate for `dns_name` at time `at`, trusting the CAs of `ca_bundle_pem`. The
// error says why it does not verify (OpenSSL's reason and the certificate concerned).
[[nodiscard]] Status verify_serving_certificate(std::string_view cert_pem,
                                                std::string_view ca_bundle_pem,
                                                std::string_view dns_name, Time at);

// One PEM bundle of the certificates of `pems`, each once (by fingerprint), in order of first
// appearance; e.g. {new CA, current bundle} while rotating so clients trust both.
[[nodiscard]] Result<std::string> make_bundle(const std::vector<std::string>& pems);

}  // namespace topoguard::pki
