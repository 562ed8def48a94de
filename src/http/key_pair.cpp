#include "topoguard/http/key_pair.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <ctime>

#include "openssl_error.h"
#include "tls_native.h"
#include "topoguard/common/text_file.h"

namespace topoguard::http {
namespace {

std::int64_t to_epoch(const ASN1_TIME* time) {
  std::tm tm{};
  if (time == nullptr || ASN1_TIME_to_tm(time, &tm) != 1) {
    return 0;
  }
  return static_cast<std::int64_t>(timegm(&tm));
}

struct BioDeleter {
  void operator()(BIO* bio) const { BIO_free(bio); }
};
using BioPtr = std::unique_ptr<BIO, BioDeleter>;

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
  ERR_clear_error();
  BioPtr cert_bio(BIO_new_mem_buf(cert_pem.data(), static_cast<int>(cert_pem.size())));
  X509* leaf = PEM_read_bio_X509(cert_bio.get(), nullptr, nullptr, nullptr);
  if (leaf == nullptr) {
    return openssl_error("no PEM certificate in the certificate file");
  }
  STACK_OF(X509)* chain = sk_X509_new_null();
  while (X509* extra = PEM_read_bio_X509(cert_bio.get(), nullptr, nullptr, nullptr)) {
    sk_X509_push(chain, extra);
  }
  ERR_clear_error();  // the loop ends on "no start line", which is not an error

  BioPtr key_bio(BIO_new_mem_buf(key_pem.data(), static_cast<int>(key_pem.size())));
  EVP_PKEY* key = PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr);
  // The pair owns all three from here on.
  auto pair = std::make_shared<KeyPair>(std::make_unique<KeyPair::Native>(leaf, chain, key));
  if (key == nullptr) {
    return openssl_error("no PEM private key in the key file");
  }
  if (X509_check_private_key(leaf, key) != 1) {
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
