// PEM text read with OpenSSL, in one place: certificate bundles and unencrypted private keys,
// and OpenSSL's error queue turned into the project's Error. For the modules that hold OpenSSL
// objects themselves (http, kube, pki); none of them names these types in its own public headers.
#pragma once

#include <openssl/evp.h>
#include <openssl/x509.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "topoguard/common/result.h"

namespace topoguard::pem {

struct CertificateFree {
  void operator()(X509* cert) const { X509_free(cert); }
};
struct PrivateKeyFree {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
using CertificatePtr = std::unique_ptr<X509, CertificateFree>;
using PrivateKeyPtr = std::unique_ptr<EVP_PKEY, PrivateKeyFree>;

// `message` plus OpenSSL's reason for the first queued failure (if any); the queue is cleared so
// the next call starts clean.
[[nodiscard]] Error openssl_error(std::string message,
                                  ErrorCode code = ErrorCode::kInvalidValue);

// The certificates of a PEM bundle, in order. A block that does not decode is an error rather
// than the end of the bundle, so a damaged bundle is not cut short; none at all is an error too.
[[nodiscard]] Result<std::vector<CertificatePtr>> read_certificates(std::string_view pem);

// The first certificate of PEM text (what follows it is not read).
[[nodiscard]] Result<CertificatePtr> read_first_certificate(std::string_view pem);

// An unencrypted private key (PKCS#8, or the traditional RSA/EC forms). An encrypted one is
// refused: with no passphrase callback OpenSSL would prompt on the terminal.
[[nodiscard]] Result<PrivateKeyPtr> read_private_key(std::string_view pem);

}  // namespace topoguard::pem
