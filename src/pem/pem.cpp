#include "topoguard/pem/pem.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>

#include <array>
#include <climits>
#include <utility>

namespace topoguard::pem {
namespace {

struct BioFree {
  void operator()(BIO* bio) const { BIO_free_all(bio); }
};
using BioPtr = std::unique_ptr<BIO, BioFree>;

Result<BioPtr> memory_bio(std::string_view text) {
  if (text.size() > static_cast<std::size_t>(INT_MAX)) {
    return Error{ErrorCode::kTooLarge, "PEM text larger than 2 GiB", {}};
  }
  BioPtr bio(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
  if (!bio) {
    return openssl_error("cannot allocate a memory BIO", ErrorCode::kInternal);
  }
  return bio;
}

Result<std::vector<CertificatePtr>> read(std::string_view pem, bool first_only) {
  ERR_clear_error();
  Result<BioPtr> bio = memory_bio(pem);
  if (!bio) {
    return bio.error();
  }
  std::vector<CertificatePtr> certs;
  while (X509* cert = PEM_read_bio_X509(bio->get(), nullptr, nullptr, nullptr)) {
    certs.emplace_back(cert);
    if (first_only) {
      ERR_clear_error();
      return certs;
    }
  }
  const unsigned long last = ERR_peek_last_error();  // NOLINT(google-runtime-int)
  const bool clean_end = last == 0 || (ERR_GET_LIB(last) == ERR_LIB_PEM &&
                                       ERR_GET_REASON(last) == PEM_R_NO_START_LINE);
  if (!clean_end) {
    return openssl_error("PEM certificate " + std::to_string(certs.size() + 1) + " cannot be read");
  }
  ERR_clear_error();
  if (certs.empty()) {
    return Error{ErrorCode::kInvalidValue, "no PEM certificate found", {}};
  }
  return certs;
}

int refuse_passphrase(char* /*buffer*/, int /*size*/, int /*rwflag*/, void* /*user*/) { return -1; }

}  // namespace

Error openssl_error(std::string message, ErrorCode code) {
  const unsigned long first = ERR_get_error();  // NOLINT(google-runtime-int): OpenSSL's type
  if (first != 0) {
    std::array<char, 256> text{};
    ERR_error_string_n(first, text.data(), text.size());
    message += " (" + std::string(text.data()) + ")";
  }
  ERR_clear_error();
  return Error{code, std::move(message), {}};
}

Result<std::vector<CertificatePtr>> read_certificates(std::string_view pem) {
  return read(pem, /*first_only=*/false);
}

Result<CertificatePtr> read_first_certificate(std::string_view pem) {
  Result<std::vector<CertificatePtr>> certs = read(pem, /*first_only=*/true);
  if (!certs) {
    return certs.error();
  }
  return std::move(certs->front());
}

Result<PrivateKeyPtr> read_private_key(std::string_view pem) {
  ERR_clear_error();
  Result<BioPtr> bio = memory_bio(pem);
  if (!bio) {
    return bio.error();
  }
  PrivateKeyPtr key(PEM_read_bio_PrivateKey(bio->get(), nullptr, refuse_passphrase, nullptr));
  if (!key) {
    return openssl_error("no unencrypted PEM private key found");
  }
  return key;
}

}  // namespace topoguard::pem
