#include "topoguard/http/key_pair.h"

#include <openssl/err.h>
#include <openssl/x509.h>

#include <ctime>

#include "tls_native.h"
#include "topoguard/common/text_file.h"
#include "topoguard/pem/pem.h"

namespace topoguard::http {

using pem::openssl_error;

namespace {

std::int64_t to_epoch(const ASN1_TIME* time) {
  std::tm tm{};
  if (time == nullptr || ASN1_TIME_to_tm(time, &tm) != 1) {
    return 0;
  }
  return static_cast<std::int64_t>(timegm(&tm));
}

}  // namespace

KeyPair::KeyPair(std::unique_ptr<Native> native) : native_(std::move(native)) {
  not_before_ = to_epoch(X509_get0_notBefore(native_->certificate));
  not_after_ = to_epoch(X509_get0_notAfter(native_->certificate));
}

KeyPair::~KeyPair() = default;

bool KeyPair::valid_at(std::int64_t now) const {
  return now >= not_before_ && now < not_after_;
}

Result<KeyPairPtr> parse_key_pair(const std::string& cert_pem, const std::string& key_pem) {
  Result<std::vector<pem::CertificatePtr>> certs = pem::read_certificates(cert_pem);
  if (!certs) {
    return Error{certs.error().code, "the certificate file: " + certs.error().message, {}};
  }
  Result<pem::PrivateKeyPtr> key = pem::read_private_key(key_pem);
  if (!key) {
    return Error{key.error().code, "the key file: " + key.error().message, {}};
  }
  X509* leaf = certs->front().release();
  EVP_PKEY* private_key = key->release();
  STACK_OF(X509)* chain = sk_X509_new_null();
  for (std::size_t i = 1; i < certs->size(); ++i) {
    sk_X509_push(chain, (*certs)[i].release());
  }
  // The pair owns all three from here on.
  auto pair =
      std::make_shared<KeyPair>(std::make_unique<KeyPair::Native>(leaf, chain, private_key));
  if (X509_check_private_key(leaf, private_key) != 1) {
    return openssl_error("the private key does not match the certificate");
  }
  return KeyPairPtr(std::move(pair));
}

Result<KeyPairPtr> load_key_pair(const std::string& cert_path, const std::string& key_path) {
  Result<std::string> cert = read_text_file(cert_path, kMaxCredentialFileBytes);
  if (!cert) {
    return cert.error();
  }
  Result<std::string> key = read_text_file(key_path, kMaxCredentialFileBytes);
  if (!key) {
    return key.error();
  }
  Result<KeyPairPtr> pair = parse_key_pair(*cert, *key);
  if (!pair) {
    Error error = pair.error();
    error.message = cert_path + " + " + key_path + ": " + error.message;
    error.location.file = cert_path;
    return error;
  }
  return pair;
}

}  // namespace topoguard::http
