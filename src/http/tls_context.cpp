#include "topoguard/http/tls_context.h"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <memory>

#include "tls_native.h"
#include "topoguard/common/text_file.h"
#include "topoguard/pem/pem.h"

namespace topoguard::http {

using pem::openssl_error;

namespace {

// SSL_CTX_set_cert_cb: runs in the handshake, before cipher selection.
int install_current_pair(SSL* ssl, void* arg) {
  const auto* key_pairs = static_cast<const KeyPairSource*>(arg);
  const KeyPairPtr pair = (*key_pairs)();
  if (pair == nullptr) {
    return 0;  // no certificate yet (self-managed TLS before its Secret is read): no handshake
  }
  const KeyPair::Native& native = pair->native();
  // SSL_use_cert_and_key takes its own references, so the pair may be swapped out meanwhile.
  return SSL_use_cert_and_key(ssl, native.certificate, native.key, native.chain, 1) == 1 ? 1 : 0;
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

// Trusts the certificates of the PEM bundle at `path` for client certificates and names them in
// the handshake's CA list. Read through the bounded reader, not OpenSSL's own file loading.
Status load_client_ca(SSL_CTX& ctx, const std::string& path) {
  Result<std::string> pem = read_text_file(path, kMaxCredentialFileBytes);
  if (!pem) {
    return pem.error();
  }
  Result<std::vector<pem::CertificatePtr>> certs = pem::read_certificates(*pem);
  if (!certs) {
    return Error{certs.error().code, "the client CA file " + path + ": " + certs.error().message,
                 {}};
  }
  for (const pem::CertificatePtr& cert : *certs) {
    if (X509_STORE_add_cert(SSL_CTX_get_cert_store(&ctx), cert.get()) != 1 ||
        SSL_CTX_add_client_CA(&ctx, cert.get()) != 1) {
      return openssl_error("cannot trust a certificate of the client CA file " + path);
    }
  }
  return Ok{};
}

Status configure(SSL_CTX& ctx, const KeyPairSource& key_pairs, const std::string& client_ca) {
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
  SSL_CTX_set_cert_cb(&ctx, install_current_pair, const_cast<KeyPairSource*>(&key_pairs));
  SSL_CTX_set_alpn_select_cb(&ctx, select_http11, nullptr);

  // Session resumption with client verification needs a session id context.
  static constexpr unsigned char kSessionContext[] = "topoguard";
  SSL_CTX_set_session_id_context(&ctx, kSessionContext, sizeof(kSessionContext) - 1);

  if (!client_ca.empty()) {
    if (Status loaded = load_client_ca(ctx, client_ca); !loaded) {
      return loaded;
    }
    SSL_CTX_set_verify(&ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  }
  return Ok{};
}

}  // namespace

TlsContext::TlsContext(std::unique_ptr<Native> native, KeyPairSource key_pairs)
    : native_(std::move(native)), key_pairs_(std::move(key_pairs)) {}

TlsContext::~TlsContext() = default;

Result<std::unique_ptr<TlsContext>> TlsContext::create(KeyPairSource key_pairs,
                                                       const std::string& client_ca) {
  SSL_CTX* context = SSL_CTX_new(TLS_server_method());
  if (context == nullptr) {
    Error error;
    error.code = ErrorCode::kInternal;
    error.message = "cannot create the TLS server context";
    return error;
  }
  std::unique_ptr<TlsContext> created(
      new TlsContext(std::make_unique<Native>(context), std::move(key_pairs)));
  if (Status status = configure(*context, created->key_pairs_, client_ca); !status) {
    return status.error();
  }
  return created;
}

}  // namespace topoguard::http
