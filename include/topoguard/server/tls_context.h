// Hardening of the server's SSL_CTX and per-handshake certificate selection: TLS 1.2 minimum
// (1.3 negotiated when the client offers it), AEAD ciphers with forward secrecy only, no
// compression or renegotiation, ALPN http/1.1, optional client-certificate verification. The
// certificate callback installs CertReloader::current() on every handshake, which is how a
// rotated pair is picked up without touching connections already open.
#pragma once

#include <string>

#include <openssl/types.h>

#include "topoguard/common/result.h"
#include "topoguard/server/cert_reloader.h"

namespace topoguard::server {

inline constexpr const char* kTls12Ciphers =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";
inline constexpr const char* kTls13Ciphersuites =
    "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256";

// `certs` must outlive `ctx`. `client_ca` empty: clients are not asked for a certificate;
// otherwise a client certificate signed by one of its CAs is required.
[[nodiscard]] Status configure_tls_context(SSL_CTX& ctx, const CertReloader& certs,
                                           const std::string& client_ca);

}  // namespace topoguard::server
