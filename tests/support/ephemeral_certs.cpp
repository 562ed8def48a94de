#include "ephemeral_certs.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>

namespace topoguard::testing {
namespace {

template <typename T, void (*Free)(T*)>
struct Deleter {
  void operator()(T* value) const { Free(value); }
};
using KeyPtr = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY, EVP_PKEY_free>>;
using CertPtr = std::unique_ptr<X509, Deleter<X509, X509_free>>;

void check(bool ok, const char* what) {
  if (!ok) {
    throw std::runtime_error(std::string("test certificate generation failed: ") + what);
  }
}

std::string bio_text(BIO* bio) {
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio, &data);
  std::string text(data, static_cast<std::size_t>(size));
  BIO_free(bio);
  return text;
}

std::string cert_pem(X509* cert) {
  BIO* bio = BIO_new(BIO_s_mem());
  check(PEM_write_bio_X509(bio, cert) == 1, "PEM_write_bio_X509");
  return bio_text(bio);
}

std::string key_pem(EVP_PKEY* key) {
  BIO* bio = BIO_new(BIO_s_mem());
  check(PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr) == 1,
        "PEM_write_bio_PrivateKey");
  return bio_text(bio);
}

KeyPtr new_key() {
  KeyPtr key(EVP_EC_gen("P-256"));
  check(key != nullptr, "EVP_EC_gen");
  return key;
}

void add_extension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* extension = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  check(extension != nullptr, "X509V3_EXT_conf_nid");
  X509_add_ext(cert, extension, -1);
  X509_EXTENSION_free(extension);
}

CertPtr new_cert(const std::string& common_name, EVP_PKEY* key, long serial, long valid_seconds) {
  CertPtr cert(X509_new());
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), serial);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -60);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), valid_seconds);
  X509_set_pubkey(cert.get(), key);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(common_name.c_str()), -1, -1,
                             0);
  return cert;
}

CertPtr parse_cert(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  CertPtr cert(PEM_read_bio_X509(bio, nullptr, nullptr, nullptr));
  BIO_free(bio);
  check(cert != nullptr, "parse CA certificate");
  return cert;
}

KeyPtr parse_key(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  KeyPtr key(PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr));
  BIO_free(bio);
  check(key != nullptr, "parse CA key");
  return key;
}

}  // namespace

PemPair make_ca(const std::string& common_name) {
  KeyPtr key = new_key();
  CertPtr cert = new_cert(common_name, key.get(), 1, 24 * 3600);
  X509_set_issuer_name(cert.get(), X509_get_subject_name(cert.get()));
  add_extension(cert.get(), cert.get(), NID_basic_constraints, "critical,CA:TRUE");
  add_extension(cert.get(), cert.get(), NID_key_usage, "critical,keyCertSign,cRLSign");
  add_extension(cert.get(), cert.get(), NID_subject_key_identifier, "hash");
  check(X509_sign(cert.get(), key.get(), EVP_sha256()) > 0, "X509_sign CA");
  return {cert_pem(cert.get()), key_pem(key.get())};
}

PemPair make_leaf(const PemPair& ca, const std::string& common_name,
                  const std::vector<std::string>& sans, bool client, long serial,
                  long valid_seconds) {
  CertPtr ca_cert = parse_cert(ca.cert);
  KeyPtr ca_key = parse_key(ca.key);
  KeyPtr key = new_key();
  CertPtr cert = new_cert(common_name, key.get(), serial, valid_seconds);
  X509_set_issuer_name(cert.get(), X509_get_subject_name(ca_cert.get()));
  add_extension(cert.get(), ca_cert.get(), NID_basic_constraints, "critical,CA:FALSE");
  add_extension(cert.get(), ca_cert.get(), NID_key_usage, "critical,digitalSignature");
  add_extension(cert.get(), ca_cert.get(), NID_ext_key_usage,
                client ? "clientAuth" : "serverAuth");
  if (!sans.empty()) {
    std::string value;
    for (const auto& san : sans) {
      value += (value.empty() ? "" : ",") + san;
    }
    add_extension(cert.get(), ca_cert.get(), NID_subject_alt_name, value);
  }
  check(X509_sign(cert.get(), ca_key.get(), EVP_sha256()) > 0, "X509_sign leaf");
  return {cert_pem(cert.get()), key_pem(key.get())};
}

TestPki make_test_pki() {
  TestPki pki;
  pki.ca = make_ca("topoguard test CA");
  pki.server = make_leaf(pki.ca, "topoguard.topoguard.svc",
                         {"DNS:topoguard.topoguard.svc", "DNS:topoguard.topoguard.svc.cluster.local",
                          "DNS:localhost", "IP:127.0.0.1"},
                         false, 2);
  pki.client = make_leaf(pki.ca, "kube-apiserver", {}, true, 3);
  return pki;
}

void write_file(const std::string& path, const std::string& text) {
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << text;
  }
  std::filesystem::rename(temporary, path);
}

std::string make_temp_dir(const std::string& prefix) {
  std::string pattern =
      (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
  check(::mkdtemp(pattern.data()) != nullptr, "mkdtemp");
  return pattern;
}

}  // namespace topoguard::testing
