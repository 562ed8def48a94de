// The webhook's CA and serving certificates: their fields as OpenSSL reads them, verification at
// given times, names and CAs, CA rotation through a bundle, and every way the inputs can be bad.
// Times are fixed (2030) so the tests never depend on the machine's clock.
#include "topoguard/pki/certificates.h"

#include <gtest/gtest.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "note_name.h"
#include "temp_dir.h"
#include "topoguard/http/key_pair.h"

namespace topoguard::pki {
namespace {

using namespace std::chrono_literals;
using std::chrono::days;
using std::chrono::January;
using std::chrono::sys_days;
using std::chrono::year;

const Time kT0 = sys_days{year{2030} / January / 1};
const Validity kCaValidity{kT0, kT0 + days{3650}};
const Validity kCertValidity{kT0 + days{1}, kT0 + days{366}};
const std::vector<std::string> kNames{"svc.ns.svc", "svc.ns.svc.cluster.local"};

template <typename T, void (*Free)(T*)>
struct Deleter {
  void operator()(T* value) const { Free(value); }
};
using CertPtr = std::unique_ptr<X509, Deleter<X509, X509_free>>;
using KeyPtr = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY, EVP_PKEY_free>>;
using BioPtr = std::unique_ptr<BIO, Deleter<BIO, BIO_free_all>>;

CertPtr parse_cert(const std::string& pem) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  return CertPtr(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
}

KeyPtr parse_key(const std::string& pem) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  return KeyPtr(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
}

std::string cert_pem(X509* cert) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_X509(bio.get(), cert);
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(size));
}

std::string curve_of(EVP_PKEY* key) {
  std::array<char, 64> name{};
  std::size_t length = 0;
  if (EVP_PKEY_get_group_name(key, name.data(), name.size(), &length) != 1) {
    return "";
  }
  return std::string(name.data(), length);
}

// Whether `cert` has extension `nid`, and whether it is critical.
struct ExtensionState {
  bool present = false;
  bool critical = false;
};
ExtensionState extension(X509* cert, int nid) {
  const int index = X509_get_ext_by_NID(cert, nid, -1);
  if (index < 0) {
    return {};
  }
  return {true, X509_EXTENSION_get_critical(X509_get_ext(cert, index)) == 1};
}

std::string serial_hex(X509* cert) {
  BIGNUM* number = ASN1_INTEGER_to_BN(X509_get0_serialNumber(cert), nullptr);
  char* hex = BN_bn2hex(number);
  std::string text = hex;
  OPENSSL_free(hex);
  BN_free(number);
  return text;
}

PemPair ca_or_die(std::string_view name = "topoguard-ca", Validity validity = kCaValidity) {
  Result<PemPair> ca = make_ca(name, validity);
  EXPECT_TRUE(ca) << (ca ? "" : ca.error().to_string());
  return ca ? *ca : PemPair{};
}

PemPair cert_or_die(const PemPair& ca, const std::vector<std::string>& names = kNames,
                    Validity validity = kCertValidity) {
  Result<PemPair> cert = issue_serving_certificate(ca, names, validity);
  EXPECT_TRUE(cert) << (cert ? "" : cert.error().to_string());
  return cert ? *cert : PemPair{};
}

// The CA carries what was asked, to the second (the sub-second part is dropped), on a P-256 key.
TEST(MakeCaTest, HasTheRequestedFields) {
  const Result<PemPair> ca = make_ca("topoguard-ca", {kT0 + 500ms, kT0 + days{3650} + 999ms});
  ASSERT_TRUE(ca) << ca.error().to_string();
  EXPECT_TRUE(ca->key_pem.starts_with("-----BEGIN PRIVATE KEY-----\n")) << ca->key_pem;

  const Result<CertificateInfo> info = read_certificate(ca->cert_pem);
  ASSERT_TRUE(info) << info.error().to_string();
  EXPECT_TRUE(info->is_ca);
  EXPECT_EQ(info->subject, "CN=topoguard-ca");
  EXPECT_EQ(info->not_before, kT0);
  EXPECT_EQ(info->not_after, kT0 + days{3650});
  EXPECT_TRUE(info->dns_names.empty());
  EXPECT_EQ(info->fingerprint.size(), 64U);
  EXPECT_EQ(info->fingerprint.find_first_not_of("0123456789abcdef"), std::string::npos);

  const KeyPtr key = parse_key(ca->key_pem);
  ASSERT_NE(key, nullptr);
  EXPECT_EQ(curve_of(key.get()), "prime256v1");
  const CertPtr cert = parse_cert(ca->cert_pem);
  ASSERT_NE(cert, nullptr);
  EXPECT_EQ(curve_of(X509_get0_pubkey(cert.get())), "prime256v1");
  EXPECT_EQ(X509_get_signature_nid(cert.get()), NID_ecdsa_with_SHA256);
  EXPECT_EQ(X509_get_version(cert.get()), X509_VERSION_3);
  EXPECT_EQ(X509_NAME_cmp(X509_get_subject_name(cert.get()), X509_get_issuer_name(cert.get())), 0);
  EXPECT_EQ(X509_verify(cert.get(), key.get()), 1);  // self-signed with its own key
}

// basicConstraints CA:TRUE pathlen:0 and keyUsage keyCertSign+cRLSign, both critical; an SKI; a
// positive random serial of at most 128 bits.
TEST(MakeCaTest, HasCaExtensionsAndRandomSerial) {
  const PemPair first = ca_or_die();
  const PemPair second = ca_or_die();
  const CertPtr cert = parse_cert(first.cert_pem);
  ASSERT_NE(cert, nullptr);
  EXPECT_EQ(X509_check_ca(cert.get()), 1);
  EXPECT_EQ(X509_get_pathlen(cert.get()), 0);
  EXPECT_TRUE(extension(cert.get(), NID_basic_constraints).critical);
  EXPECT_TRUE(extension(cert.get(), NID_key_usage).critical);
  EXPECT_EQ(X509_get_key_usage(cert.get()), static_cast<uint32_t>(KU_KEY_CERT_SIGN | KU_CRL_SIGN));
  EXPECT_NE(X509_get0_subject_key_id(cert.get()), nullptr);

  const std::string serial = serial_hex(cert.get());
  EXPECT_FALSE(serial.starts_with("-")) << serial;
  EXPECT_LE(serial.size(), 32U) << serial;
  EXPECT_NE(serial, serial_hex(parse_cert(second.cert_pem).get()));
}

// The serving certificate names the Service, is valid as asked, is a serverAuth leaf of its CA
// and can be loaded by the HTTPS server.
TEST(IssueServingCertificateTest, HasNamesValidityAndLeafExtensions) {
  const PemPair ca = ca_or_die();
  const PemPair serving = cert_or_die(ca);
  EXPECT_TRUE(serving.key_pem.starts_with("-----BEGIN PRIVATE KEY-----\n"));

  const Result<CertificateInfo> info = read_certificate(serving.cert_pem);
  ASSERT_TRUE(info) << info.error().to_string();
  EXPECT_FALSE(info->is_ca);
  EXPECT_EQ(info->subject, "CN=svc.ns.svc");
  EXPECT_EQ(info->dns_names, kNames);
  EXPECT_EQ(info->not_before, kCertValidity.not_before);
  EXPECT_EQ(info->not_after, kCertValidity.not_after);

  const CertPtr cert = parse_cert(serving.cert_pem);
  const CertPtr ca_cert = parse_cert(ca.cert_pem);
  ASSERT_NE(cert, nullptr);
  ASSERT_NE(ca_cert, nullptr);
  EXPECT_EQ(curve_of(X509_get0_pubkey(cert.get())), "prime256v1");
  EXPECT_EQ(X509_check_issued(ca_cert.get(), cert.get()), X509_V_OK);
  EXPECT_EQ(X509_check_ca(cert.get()), 0);
  EXPECT_TRUE(extension(cert.get(), NID_basic_constraints).critical);
  EXPECT_TRUE(extension(cert.get(), NID_key_usage).critical);
  EXPECT_EQ(X509_get_key_usage(cert.get()), static_cast<uint32_t>(KU_DIGITAL_SIGNATURE));
  EXPECT_EQ(X509_get_extended_key_usage(cert.get()), static_cast<uint32_t>(XKU_SSL_SERVER));
  EXPECT_FALSE(extension(cert.get(), NID_subject_alt_name).critical);
  EXPECT_NE(X509_get0_subject_key_id(cert.get()), nullptr);
  ASSERT_NE(X509_get0_authority_key_id(cert.get()), nullptr);
  EXPECT_EQ(ASN1_OCTET_STRING_cmp(X509_get0_authority_key_id(cert.get()),
                                  X509_get0_subject_key_id(ca_cert.get())),
            0);

  const Result<http::KeyPairPtr> pair = http::parse_key_pair(serving.cert_pem, serving.key_pem);
  ASSERT_TRUE(pair) << pair.error().to_string();
  EXPECT_EQ((*pair)->not_before(), std::chrono::system_clock::to_time_t(kCertValidity.not_before));
  EXPECT_EQ((*pair)->not_after(), std::chrono::system_clock::to_time_t(kCertValidity.not_after));
}

// A first name too long for a CN (64 characters) leaves the subject empty, and then the
// subjectAltName is critical (RFC 5280 4.2.1.6); the certificate still verifies.
TEST(IssueServingCertificateTest, LongFirstNameLeavesSubjectEmpty) {
  const std::string long_name = std::string(40, 'a') + "." + std::string(40, 'b') + ".svc";
  const PemPair ca = ca_or_die();
  const PemPair serving = cert_or_die(ca, {long_name});
  const Result<CertificateInfo> info = read_certificate(serving.cert_pem);
  ASSERT_TRUE(info) << info.error().to_string();
  EXPECT_EQ(info->subject, "");
  EXPECT_EQ(info->dns_names, std::vector<std::string>{long_name});
  EXPECT_TRUE(extension(parse_cert(serving.cert_pem).get(), NID_subject_alt_name).critical);
  const Status verified =
      verify_serving_certificate(serving.cert_pem, ca.cert_pem, long_name, kT0 + days{2});
  EXPECT_TRUE(verified) << verified.error().to_string();
}

struct VerifyCase {
  std::string_view note;
  std::string_view dns_name;
  Time at;
  bool other_ca = false;  // verify against a CA that did not sign it
  std::string_view why;   // empty: verifies; else part of the error
};

class VerifyTest : public ::testing::TestWithParam<VerifyCase> {
 protected:
  static void SetUpTestSuite() {
    ca_ = ca_or_die();
    other_ca_ = ca_or_die();
    serving_ = cert_or_die(ca_);
  }
  inline static PemPair ca_;
  inline static PemPair other_ca_;
  inline static PemPair serving_;
};

// Verification as a TLS client of the webhook would do it: name, time window (OpenSSL's: from
// not_before, up to but not at not_after) and the trusted CA.
TEST_P(VerifyTest, Verifies) {
  const VerifyCase& c = GetParam();
  const Status verified = verify_serving_certificate(
      serving_.cert_pem, c.other_ca ? other_ca_.cert_pem : ca_.cert_pem, c.dns_name, c.at);
  if (c.why.empty()) {
    EXPECT_TRUE(verified) << verified.error().to_string();
  } else {
    ASSERT_FALSE(verified);
    EXPECT_EQ(verified.error().code, ErrorCode::kInvalidValue);
    EXPECT_NE(verified.error().message.find(c.why), std::string::npos) << verified.error().message;
  }
  EXPECT_EQ(ERR_peek_error(), 0U);  // nothing left in the thread's OpenSSL error queue
}

INSTANTIATE_TEST_SUITE_P(
    Cases, VerifyTest,
    ::testing::Values(
        VerifyCase{"ServiceName", "svc.ns.svc", kT0 + days{30}, false, ""},
        VerifyCase{"ClusterLocalName", "svc.ns.svc.cluster.local", kT0 + days{30}, false, ""},
        VerifyCase{"NameIsCaseInsensitive", "SVC.ns.svc", kT0 + days{30}, false, ""},
        VerifyCase{"OtherName", "other.ns.svc", kT0 + days{30}, false, "hostname mismatch"},
        VerifyCase{"ParentName", "ns.svc", kT0 + days{30}, false, "hostname mismatch"},
        VerifyCase{"EmptyName", "", kT0 + days{30}, false, "no DNS name"},
        VerifyCase{"AtNotBefore", "svc.ns.svc", kCertValidity.not_before, false, ""},
        VerifyCase{"BeforeNotBefore", "svc.ns.svc", kCertValidity.not_before - 1s, false,
                   "not yet valid"},
        VerifyCase{"LastSecond", "svc.ns.svc", kCertValidity.not_after - 1s, false, ""},
        VerifyCase{"AtNotAfter", "svc.ns.svc", kCertValidity.not_after, false, "has expired"},
        VerifyCase{"OtherCa", "svc.ns.svc", kT0 + days{30}, true,
                   "unable to get local issuer certificate"}),
    topoguard::testing::NoteName());

// During a CA rotation the bundle holds the old and the new CA (same name, different keys), and
// certificates of either verify against it; without the bundle the old one does not.
TEST(BundleTest, OldAndNewCaVerifyCertificatesOfBoth) {
  const PemPair old_ca = ca_or_die("topoguard-ca");
  const PemPair new_ca = ca_or_die("topoguard-ca");
  const PemPair old_cert = cert_or_die(old_ca);
  const PemPair new_cert = cert_or_die(new_ca);

  const Result<std::string> bundle = make_bundle({new_ca.cert_pem, old_ca.cert_pem});
  ASSERT_TRUE(bundle) << bundle.error().to_string();
  for (const PemPair* cert : {&old_cert, &new_cert}) {
    for (const std::string& name : kNames) {
      const Status verified =
          verify_serving_certificate(cert->cert_pem, *bundle, name, kT0 + days{30});
      EXPECT_TRUE(verified) << verified.error().to_string();
    }
  }
  EXPECT_FALSE(
      verify_serving_certificate(old_cert.cert_pem, new_ca.cert_pem, kNames[0], kT0 + days{30}));
  // A bundle that repeats a CA is still a trust store.
  EXPECT_TRUE(verify_serving_certificate(new_cert.cert_pem, new_ca.cert_pem + new_ca.cert_pem,
                                         kNames[0], kT0 + days{30}));
}

// Each certificate once, in order of first appearance; empty parts add nothing.
TEST(BundleTest, KeepsEachCertificateOnceInOrder) {
  const PemPair a = ca_or_die("a");
  const PemPair b = ca_or_die("b");
  const PemPair c = ca_or_die("c");
  const Result<std::string> bundle =
      make_bundle({b.cert_pem, "", a.cert_pem + b.cert_pem, "\n", c.cert_pem + a.cert_pem});
  ASSERT_TRUE(bundle) << bundle.error().to_string();
  EXPECT_EQ(*bundle, b.cert_pem + a.cert_pem + c.cert_pem);

  const Result<std::vector<CertificateInfo>> infos = read_certificates(*bundle);
  ASSERT_TRUE(infos) << infos.error().to_string();
  ASSERT_EQ(infos->size(), 3U);
  EXPECT_EQ((*infos)[0].subject, "CN=b");
  EXPECT_EQ((*infos)[1].subject, "CN=a");
  EXPECT_EQ((*infos)[2].subject, "CN=c");

  EXPECT_EQ(*make_bundle({}), "");
  const Result<std::string> bad = make_bundle({a.cert_pem, "not PEM"});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("PEM 2"), std::string::npos) << bad.error().message;
}

// A key matches its own certificate only.
TEST(KeyMatchesTest, OwnKeyOnly) {
  const PemPair ca = ca_or_die();
  const PemPair serving = cert_or_die(ca);
  EXPECT_TRUE(*key_matches(ca.cert_pem, ca.key_pem));
  EXPECT_TRUE(*key_matches(serving.cert_pem, serving.key_pem));
  EXPECT_FALSE(*key_matches(serving.cert_pem, ca.key_pem));
  EXPECT_FALSE(*key_matches(ca.cert_pem, serving.key_pem));
  EXPECT_EQ(ERR_peek_error(), 0U);
}

struct BadPemCase {
  std::string_view note;
  std::string pem;
};

class BadPemTest : public ::testing::TestWithParam<BadPemCase> {};

// Text that holds no readable certificate or key is an error from every function, never a crash
// or a prompt, and leaves no OpenSSL error behind.
TEST_P(BadPemTest, IsAnError) {
  const PemPair ca = ca_or_die();
  const std::string& pem = GetParam().pem;
  EXPECT_FALSE(read_certificate(pem));
  EXPECT_FALSE(read_certificates(pem));
  EXPECT_FALSE(key_matches(pem, ca.key_pem));
  EXPECT_FALSE(key_matches(ca.cert_pem, pem));
  EXPECT_FALSE(verify_serving_certificate(pem, ca.cert_pem, "svc.ns.svc", kT0));
  EXPECT_FALSE(verify_serving_certificate(ca.cert_pem, pem, "svc.ns.svc", kT0));
  if (pem.empty()) {
    EXPECT_EQ(*make_bundle({pem}), "");  // an empty part adds nothing
  } else {
    EXPECT_FALSE(make_bundle({pem}));
  }
  EXPECT_FALSE(issue_serving_certificate({pem, ca.key_pem}, kNames, kCertValidity));
  EXPECT_FALSE(issue_serving_certificate({ca.cert_pem, pem}, kNames, kCertValidity));
  EXPECT_EQ(ERR_peek_error(), 0U);
}

// Well-formed PEM around the first two base64 lines of a certificate: DER cut short.
std::string damaged_certificate() {
  const std::string pem = ca_or_die().cert_pem;
  const std::size_t header_end = pem.find('\n') + 1;
  const std::size_t two_lines = pem.find('\n', pem.find('\n', header_end) + 1) + 1;
  return pem.substr(0, two_lines) + "-----END CERTIFICATE-----\n";
}

std::string encrypted_key() {
  const KeyPtr key = parse_key(ca_or_die().key_pem);
  BioPtr bio(BIO_new(BIO_s_mem()));
  static const char kPassphrase[] = "secret";
  PEM_write_bio_PKCS8PrivateKey(bio.get(), key.get(), EVP_aes_256_cbc(), kPassphrase,
                                sizeof(kPassphrase) - 1, nullptr, nullptr);
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(size));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, BadPemTest,
    ::testing::Values(
        BadPemCase{"Empty", ""}, BadPemCase{"NotPem", "hello"},
        BadPemCase{"HeaderOnly", "-----BEGIN CERTIFICATE-----\n"},
        BadPemCase{"BadBase64", "-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n"},
        BadPemCase{"NotDer", "-----BEGIN CERTIFICATE-----\naGVsbG8=\n-----END CERTIFICATE-----\n"},
        BadPemCase{"Truncated", ca_or_die().cert_pem.substr(0, 200)},
        BadPemCase{"EncryptedKeyOnly", encrypted_key()}),
    topoguard::testing::NoteName());

// A damaged certificate is not taken for the end of a bundle; only the first is read when asked.
TEST(ReadCertificatesTest, DamagedSecondCertificateIsAnError) {
  const PemPair ca = ca_or_die();
  const std::string bundle = ca.cert_pem + damaged_certificate();
  EXPECT_TRUE(read_certificate(bundle));
  const Result<std::vector<CertificateInfo>> all = read_certificates(bundle);
  ASSERT_FALSE(all);
  EXPECT_NE(all.error().message.find("certificate 2"), std::string::npos) << all.error().message;
  // Other PEM blocks between certificates (a key, say) are skipped.
  const Result<std::vector<CertificateInfo>> mixed =
      read_certificates(ca.cert_pem + ca.key_pem + ca.cert_pem);
  ASSERT_TRUE(mixed) << mixed.error().to_string();
  EXPECT_EQ(mixed->size(), 2U);
}

// A CA whose key is not its certificate's cannot issue, and says so.
TEST(IssueServingCertificateTest, MismatchedCaKeyIsAnError) {
  const PemPair ca = ca_or_die();
  const PemPair other = ca_or_die();
  const Result<PemPair> cert =
      issue_serving_certificate({ca.cert_pem, other.key_pem}, kNames, kCertValidity);
  ASSERT_FALSE(cert);
  EXPECT_NE(cert.error().message.find("CA key is not the private key"), std::string::npos)
      << cert.error().message;
}

// A serving certificate cannot act as a CA.
TEST(IssueServingCertificateTest, LeafAsCaIsAnError) {
  const PemPair serving = cert_or_die(ca_or_die());
  const Result<PemPair> cert = issue_serving_certificate(serving, kNames, kCertValidity);
  ASSERT_FALSE(cert);
  EXPECT_NE(cert.error().message.find("not a CA"), std::string::npos) << cert.error().message;
}

struct ValidityCase {
  std::string_view note;
  Validity validity;
  std::string_view why;  // empty: issued
};

class IssueValidityTest : public ::testing::TestWithParam<ValidityCase> {};

// The certificate's validity must lie inside the CA's (ends included) and not be reversed.
TEST_P(IssueValidityTest, IsCheckedAgainstTheCa) {
  const PemPair ca = ca_or_die();
  const Result<PemPair> cert = issue_serving_certificate(ca, kNames, GetParam().validity);
  if (GetParam().why.empty()) {
    EXPECT_TRUE(cert) << cert.error().to_string();
  } else {
    ASSERT_FALSE(cert);
    EXPECT_EQ(cert.error().code, ErrorCode::kInvalidValue);
    EXPECT_NE(cert.error().message.find(GetParam().why), std::string::npos) << cert.error().message;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, IssueValidityTest,
    ::testing::Values(
        ValidityCase{"SameAsCa", kCaValidity, ""},
        ValidityCase{"StartsBeforeCa",
                     {kCaValidity.not_before - 1s, kCaValidity.not_after},
                     "not inside the CA's validity 2030-01-01T00:00:00Z..2039-12-30T00:00:00Z"},
        ValidityCase{"EndsAfterCa",
                     {kCaValidity.not_before, kCaValidity.not_after + 1s},
                     "not inside the CA's validity"},
        ValidityCase{"Reversed", {kT0 + days{2}, kT0 + days{1}}, "is not after not_before"},
        ValidityCase{"Empty", {kT0 + days{1}, kT0 + days{1} + 999ms}, "is not after not_before"}),
    topoguard::testing::NoteName());

// Names are checked before they go into the certificate: no empty list, no empty label, nothing
// that would read as another SAN entry.
TEST(IssueServingCertificateTest, RejectsWhatIsNotADnsName) {
  const PemPair ca = ca_or_die();
  EXPECT_FALSE(issue_serving_certificate(ca, {}, kCertValidity));
  const std::string label63(63, 'a');
  for (const std::string& bad : std::vector<std::string>{
           "", ".", "a..b", "a.", "-a.svc", "a-.svc", "a_b.svc", "svc,DNS:evil.example",
           "svc.ns.svc\n", "*", "a.*.svc", std::string(64, 'a') + ".svc",
           label63 + "." + label63 + "." + label63 + "." + label63}) {
    const Result<PemPair> cert = issue_serving_certificate(ca, {"svc.ns.svc", bad}, kCertValidity);
    ASSERT_FALSE(cert) << bad;
    EXPECT_EQ(cert.error().code, ErrorCode::kInvalidValue);
  }
  const PemPair wildcard = cert_or_die(ca, {"*.ns.svc", std::string(63, 'a') + ".ns.svc"});
  EXPECT_TRUE(
      verify_serving_certificate(wildcard.cert_pem, ca.cert_pem, "svc.ns.svc", kT0 + days{30}));
}

// An empty or reversed validity or an unusable common name makes no CA.
TEST(MakeCaTest, RejectsBadInput) {
  EXPECT_FALSE(make_ca("topoguard-ca", {kT0 + 1s, kT0}));
  EXPECT_FALSE(make_ca("", kCaValidity));
  EXPECT_FALSE(make_ca(std::string(65, 'a'), kCaValidity));
  EXPECT_TRUE(make_ca(std::string(64, 'a'), kCaValidity));
  EXPECT_FALSE(make_ca("topoguard-ca", {kT0, kT0}));
  EXPECT_TRUE(make_ca("topoguard-ca", {kT0, kT0 + 1s}));
}

// Times outside 1950..2049 are written as GeneralizedTime and read back, down to the extremes
// Time holds; a "no expiry" 9999-12-31 from elsewhere reads as Time::max().
TEST(TimeTest, ExtremeTimesDoNotBreak) {
  const Time y1900 = sys_days{year{1900} / January / 1};
  const Time y1940 = sys_days{year{1940} / January / 1};
  const PemPair old_ca = ca_or_die("old", {y1900, y1940});
  const Result<CertificateInfo> old_info = read_certificate(old_ca.cert_pem);
  ASSERT_TRUE(old_info) << old_info.error().to_string();
  EXPECT_EQ(old_info->not_before, y1900);
  EXPECT_EQ(old_info->not_after, y1940);
  const PemPair old_cert = cert_or_die(old_ca, kNames, {y1900 + days{1}, y1940 - days{1}});
  const Status verified =
      verify_serving_certificate(old_cert.cert_pem, old_ca.cert_pem, kNames[0], y1900 + days{2});
  EXPECT_TRUE(verified) << verified.error().to_string();

  const PemPair widest = ca_or_die("widest", {Time::min(), Time::max()});
  const Result<CertificateInfo> widest_info = read_certificate(widest.cert_pem);
  ASSERT_TRUE(widest_info) << widest_info.error().to_string();
  EXPECT_EQ(widest_info->not_before, Time::min());  // clamped: floor(min) is below Time's range
  EXPECT_EQ(widest_info->not_after, std::chrono::floor<std::chrono::seconds>(Time::max()));
  EXPECT_TRUE(cert_or_die(widest, kNames, {Time::min(), Time::max()}).cert_pem.size() > 0);

  const PemPair ca = ca_or_die();
  const CertPtr cert = parse_cert(ca.cert_pem);
  ASSERT_EQ(ASN1_TIME_set_string(X509_getm_notAfter(cert.get()), "99991231235959Z"), 1);
  // Signing again also drops the DER OpenSSL cached when it parsed the certificate.
  ASSERT_GT(X509_sign(cert.get(), parse_key(ca.key_pem).get(), EVP_sha256()), 0);
  const Result<CertificateInfo> forever = read_certificate(cert_pem(cert.get()));
  ASSERT_TRUE(forever) << forever.error().to_string();
  EXPECT_EQ(forever->not_after, Time::max());
}

std::string run(const std::string& command) {
  std::string output;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) {
    return "popen failed";
  }
  std::array<char, 512> buffer{};
  while (std::fgets(buffer.data(), buffer.size(), pipe) != nullptr) {
    output += buffer.data();
  }
  const int status = ::pclose(pipe);
  return (status == 0 ? "ok: " : "failed: ") + output;
}

// The openssl command line (another client) accepts the certificate for the Service's names as
// a TLS server certificate, even in strict RFC 5280 mode, and refuses another name.
TEST(OpenSslCliTest, VerifiesTheServingCertificate) {
  if (std::system("command -v openssl >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "no openssl command";
  }
  const PemPair ca = ca_or_die();
  const PemPair serving = cert_or_die(ca);
  const topoguard::testing::TempDir dir;
  const std::string ca_file = dir.write("ca.pem", ca.cert_pem);
  const std::string cert_file = dir.write("cert.pem", serving.cert_pem);
  const std::string at = std::to_string(std::chrono::system_clock::to_time_t(kT0 + days{30}));
  const auto verify = [&](const std::string& name) {
    return run("openssl verify -x509_strict -attime " + at + " -CAfile '" + ca_file +
               "' -verify_hostname " + name + " -purpose sslserver '" + cert_file + "'");
  };
  EXPECT_TRUE(verify("svc.ns.svc").starts_with("ok: ")) << verify("svc.ns.svc");
  EXPECT_TRUE(verify("svc.ns.svc.cluster.local").starts_with("ok: "));
  const std::string wrong = verify("other.ns.svc");
  EXPECT_TRUE(wrong.starts_with("failed: ")) << wrong;
  EXPECT_NE(wrong.find("hostname mismatch"), std::string::npos) << wrong;
}

}  // namespace
}  // namespace topoguard::pki
