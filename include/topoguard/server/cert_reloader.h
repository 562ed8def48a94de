// The serving key pair, re-read when its files change (Secret volume update, cert-manager
// renewal) and handed to every new TLS handshake (see tls_context.h). A pair that does not parse,
// or whose key does not match its certificate, is refused and the previous pair stays in use.
// A Reloadable: current() is safe from any thread; poll() is called from one watcher thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <openssl/x509.h>

#include "topoguard/common/result.h"
#include "topoguard/server/reloadable.h"

namespace topoguard::server {

// An immutable certificate chain + private key. Owns its OpenSSL objects.
class KeyPair {
 public:
  KeyPair(X509* certificate, STACK_OF(X509) * chain, EVP_PKEY* key);
  ~KeyPair();
  KeyPair(const KeyPair&) = delete;
  KeyPair& operator=(const KeyPair&) = delete;

  [[nodiscard]] X509* certificate() const { return certificate_; }
  [[nodiscard]] STACK_OF(X509) * chain() const { return chain_; }  // intermediates, may be empty
  [[nodiscard]] EVP_PKEY* key() const { return key_; }
  [[nodiscard]] std::int64_t not_before() const { return not_before_; }  // seconds since epoch
  [[nodiscard]] std::int64_t not_after() const { return not_after_; }
  // Whether `now` (seconds since epoch) lies inside the validity period.
  [[nodiscard]] bool valid_at(std::int64_t now) const;

 private:
  X509* certificate_;
  STACK_OF(X509) * chain_;
  EVP_PKEY* key_;
  std::int64_t not_before_ = 0;
  std::int64_t not_after_ = 0;
};

using KeyPairPtr = std::shared_ptr<const KeyPair>;

// Parses PEM text: the first certificate is the leaf, further ones the chain. Fails when the
// key does not belong to the leaf certificate.
[[nodiscard]] Result<KeyPairPtr> parse_key_pair(const std::string& cert_pem,
                                                const std::string& key_pem);
[[nodiscard]] Result<KeyPairPtr> load_key_pair(const std::string& cert_path,
                                               const std::string& key_path);

class CertReloader : public Reloadable<KeyPair> {
 public:
  // Loads the initial pair; an error when it cannot be used.
  [[nodiscard]] static Result<std::shared_ptr<CertReloader>> create(std::string cert_path,
                                                                    std::string key_path);

 private:
  friend class Reloadable<KeyPair>;
  using Reloadable::Reloadable;
};

}  // namespace topoguard::server
