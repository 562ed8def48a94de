#include "topoguard/server/tls_context.h"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "openssl_error.h"

namespace topoguard::server {
namespace {

// SSL_CTX_set_cert_cb: runs in the handshake, before cipher selection.
int install_current_pair(SSL* ssl, void* arg) {
  const auto* certs = static_cast<const CertReloader*>(arg);
  const KeyPairPtr pair = certs->current();
  // SSL_use_cert_and_key takes its own references, so the pair may be swapped out meanwhile.
  return SSL_use_cert_and_key(ssl, pair->certificate(), pair->key(), pair->chain(), 1) == 1 ? 1
                                                                                             : 0;
}

// ALPN: HTTP/1.1 is the one protocol served. A client that offers only h2 gets no ALPN answer
// and falls back (or fails its own way) instead of speaking h2 to an HTTP/1.1 server.
int select_http11(SSL* /*ssl*/, const unsigned char** out, unsigned char* out_length,
                  const unsigned char* offered, unsigned int offered_length, void* /*arg*/) {
  static constexpr unsigned char kHttp11[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
  unsigned char* selected = nullptr;
  if (SSL_select_next_proto(&selected, out_length, kHttp11, sizeof(kHttp11), offered,
                            offered_length) != OPENSSL_NPN_NEGOTIATED) {
    return SSL_TLSEXT_ERR_NOACK;
  }
  *out = selected;
  return SSL_TLSEXT_ERR_OK;
}

}  // namespace

Status configure_tls_context(SSL_CTX& ctx, const CertReloader& certs,
                             const std::string& client_ca) {
  ERR_clear_error();
  if (SSL_CTX_set_min_proto_version(&ctx, TLS1_2_VERSION) != 1) {
    return openssl_error("cannot set the minimum TLS version");
  }
  if (SSL_CTX_set_cipher_list(&ctx, kTls12Ciphers) != 1) {
    return openssl_error("cannot set the TLS 1.2 ciphers");
  }
  if (SSL_CTX_set_ciphersuites(&ctx, kTls13Ciphersuites) != 1) {
    return openssl_error("cannot set the TLS 1.3 cipher suites");
  }
  if (SSL_CTX_set1_groups_list(&ctx, "X25519:P-256:P-384") != 1) {
    return openssl_error("cannot set the key exchange groups");
  }
  SSL_CTX_set_options(&ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION |
                                SSL_OP_CIPHER_SERVER_PREFERENCE);
  SSL_CTX_set_cert_cb(&ctx, install_current_pair, const_cast<CertReloader*>(&certs));
  SSL_CTX_set_alpn_select_cb(&ctx, select_http11, nullptr);

  // Session resumption with client verification needs a session id context.
  static constexpr unsigned char kSessionContext[] = "topoguard";
  SSL_CTX_set_session_id_context(&ctx, kSessionContext, sizeof(kSessionContext) - 1);

  if (!client_ca.empty()) {
    if (SSL_CTX_load_verify_locations(&ctx, client_ca.c_str(), nullptr) != 1) {
      return openssl_error("cannot load the client CA file " + client_ca);
    }
    STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(client_ca.c_str());
    if (names == nullptr) {
      return openssl_error("no CA certificate in the client CA file " + client_ca);
    }
    SSL_CTX_set_client_CA_list(&ctx, names);
    SSL_CTX_set_verify(&ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  }
  return Ok{};
}

}  // namespace topoguard::server
