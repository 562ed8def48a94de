// The one PEM reader: bundles in order, a damaged block as an error (not the end of the bundle),
// and encrypted keys refused instead of prompting.
#include "topoguard/pem/pem.h"

#include <gtest/gtest.h>
#include <openssl/bio.h>
#include <openssl/pem.h>

#include <chrono>
#include <string>

#include "topoguard/pki/certificates.h"

namespace topoguard::pem {
namespace {

using std::chrono::days;

pki::PemPair make_ca(std::string_view name) {
  const pki::Time start = std::chrono::sys_days{std::chrono::year{2030} / 1 / 1};
  Result<pki::PemPair> ca = pki::make_ca(name, {start, start + days{365}});
  EXPECT_TRUE(ca) << (ca ? "" : ca.error().to_string());
  return ca ? *ca : pki::PemPair{};
}

std::string subject_of(const CertificatePtr& cert) {
  char text[256] = {};
  X509_NAME_oneline(X509_get_subject_name(cert.get()), text, sizeof text);
  return text;
}

TEST(Pem, ReadsEveryCertificateOfABundleInOrder) {
  const pki::PemPair first = make_ca("first");
  const pki::PemPair second = make_ca("second");
  const Result<std::vector<CertificatePtr>> certs =
      read_certificates(first.cert_pem + second.cert_pem);
  ASSERT_TRUE(certs) << certs.error().to_string();
  ASSERT_EQ(certs->size(), 2U);
  EXPECT_EQ(subject_of((*certs)[0]), "/CN=first");
  EXPECT_EQ(subject_of((*certs)[1]), "/CN=second");
  const Result<CertificatePtr> leaf = read_first_certificate(second.cert_pem + first.cert_pem);
  ASSERT_TRUE(leaf);
  EXPECT_EQ(subject_of(*leaf), "/CN=second");
}

TEST(Pem, ADamagedBlockOrNoCertificateIsAnError) {
  const pki::PemPair ca = make_ca("ca");
  std::string damaged = ca.cert_pem;
  damaged.replace(damaged.find('\n') + 1, 8, "!!!!!!!!");
  const Result<std::vector<CertificatePtr>> cut = read_certificates(ca.cert_pem + damaged);
  ASSERT_FALSE(cut);
  EXPECT_NE(cut.error().message.find("PEM certificate 2 cannot be read"), std::string::npos)
      << cut.error().message;
  const Result<std::vector<CertificatePtr>> none = read_certificates("no PEM here\n");
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().message, "no PEM certificate found");
  EXPECT_FALSE(read_first_certificate(""));
}

TEST(Pem, ReadsAnUnencryptedKeyAndRefusesAnEncryptedOne) {
  const pki::PemPair ca = make_ca("ca");
  const Result<PrivateKeyPtr> key = read_private_key(ca.key_pem);
  ASSERT_TRUE(key) << key.error().to_string();
  const Result<CertificatePtr> cert = read_first_certificate(ca.cert_pem);
  ASSERT_TRUE(cert);
  EXPECT_EQ(X509_check_private_key(cert->get(), key->get()), 1);

  BIO* out = BIO_new(BIO_s_mem());
  ASSERT_EQ(PEM_write_bio_PKCS8PrivateKey(out, key->get(), EVP_aes_256_cbc(), "secret", 6,
                                          nullptr, nullptr),
            1);
  char* data = nullptr;
  const long size = BIO_get_mem_data(out, &data);  // NOLINT(google-runtime-int): OpenSSL's type
  const std::string encrypted(data, static_cast<std::size_t>(size));
  BIO_free(out);
  ASSERT_NE(encrypted.find("ENCRYPTED"), std::string::npos);
  const Result<PrivateKeyPtr> refused = read_private_key(encrypted);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("no unencrypted PEM private key found"),
            std::string::npos);
  EXPECT_FALSE(read_private_key(ca.cert_pem));
}

}  // namespace
}  // namespace topoguard::pem
