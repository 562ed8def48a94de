// The server's TLS configuration, hardened: TLS 1.2 minimum (1.3 negotiated when the client
// offers it), AEAD ciphers with forward secrecy only, no compression or renegotiation, ALPN
// http/1.1, optional client-certificate verification. Every handshake asks the key pair source
// for the current pair, which is how a rotated pair is picked up without touching connections
// already open. OpenSSL's context stays inside src/http (tls_native.h).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "topoguard/common/result.h"
#include "topoguard/http/key_pair.h"

namespace topoguard::http {

inline constexpr const char* kTls12Ciphers =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";
inline constexpr const char* kTls13Ciphersuites =
    "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256";

// The pair to serve with now; called on every handshake, from the event-loop threads.
using KeyPairSource = std::function<KeyPairPtr()>;

class TlsContext {
 public:
  struct Native;  // OpenSSL's server context, owned

  // `client_ca` empty: clients are not asked for a certificate; otherwise a client certificate
  // signed by one of its CAs is required.
  [[nodiscard]] static Result<std::unique_ptr<TlsContext>> create(KeyPairSource key_pairs,
                                                                  const std::string& client_ca);
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  [[nodiscard]] const Native& native() const { return *native_; }

 private:
  TlsContext(std::unique_ptr<Native> native, KeyPairSource key_pairs);

  std::unique_ptr<Native> native_;
  KeyPairSource key_pairs_;  // read by the handshake callback through its address
};

}  // namespace topoguard::http
