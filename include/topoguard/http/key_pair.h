// A serving certificate chain and its private key, immutable once parsed. The OpenSSL objects
// stay inside src/http (tls_native.h), so this header can be included without OpenSSL.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "topoguard/common/result.h"

namespace topoguard::http {

class KeyPair {
 public:
  struct Native;  // the certificate, its chain and the key, owned

  explicit KeyPair(std::unique_ptr<Native> native);
  ~KeyPair();
  KeyPair(const KeyPair&) = delete;
  KeyPair& operator=(const KeyPair&) = delete;

  [[nodiscard]] const Native& native() const { return *native_; }
  [[nodiscard]] std::int64_t not_before() const { return not_before_; }  // seconds since epoch
  [[nodiscard]] std::int64_t not_after() const { return not_after_; }
  // Whether `now` (seconds since epoch) lies inside the validity period.
  [[nodiscard]] bool valid_at(std::int64_t now) const;

 private:
  std::unique_ptr<Native> native_;
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

}  // namespace topoguard::http
