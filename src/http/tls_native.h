// The OpenSSL objects behind the public TLS types, for the sources of src/http only.
#pragma once

#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "topoguard/http/key_pair.h"
#include "topoguard/http/tls_context.h"

namespace topoguard::http {

struct KeyPair::Native {
  Native(X509* leaf, STACK_OF(X509) * intermediates, EVP_PKEY* private_key)
      : certificate(leaf), chain(intermediates), key(private_key) {}
  ~Native() {
    X509_free(certificate);
    sk_X509_pop_free(chain, X509_free);
    EVP_PKEY_free(key);
  }
  Native(const Native&) = delete;
  Native& operator=(const Native&) = delete;

  X509* certificate;
  STACK_OF(X509) * chain;  // intermediates, may be empty
  EVP_PKEY* key;           // nullptr only while a pair is being refused
};

struct TlsContext::Native {
  explicit Native(SSL_CTX* server_context) : context(server_context) {}
  ~Native() { SSL_CTX_free(context); }
  Native(const Native&) = delete;
  Native& operator=(const Native&) = delete;

  SSL_CTX* context;
};

}  // namespace topoguard::http
