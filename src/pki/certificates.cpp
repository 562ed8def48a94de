#include "topoguard/pki/certificates.h"

#include <openssl/asn1.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <initializer_list>
#include <memory>
#include <optional>
#include <set>
#include <utility>

#include "topoguard/pem/pem.h"

namespace topoguard::pki {
namespace {

template <typename T, void (*Free)(T*)>
struct Deleter {
  void operator()(T* value) const { Free(value); }
};
template <typename T, void (*Free)(T*)>
using Owned = std::unique_ptr<T, Deleter<T, Free>>;
using BioPtr = Owned<BIO, BIO_free_all>;
using CertPtr = pem::CertificatePtr;
using KeyPtr = pem::PrivateKeyPtr;
using pem::openssl_error;

// Owns the stack, not the certificates in it (they stay owned by their CertPtr).
struct StackDeleter {
  void operator()(STACK_OF(X509) * stack) const { sk_X509_free(stack); }
};
using CertStackPtr = std::unique_ptr<STACK_OF(X509), StackDeleter>;

struct GeneralNamesDeleter {
  void operator()(GENERAL_NAMES* names) const { GENERAL_NAMES_free(names); }
};

// A CN holds at most 64 characters (RFC 5280 ub-common-name).
constexpr std::size_t kMaxCommonName = 64;

Error invalid(std::string message) {
  return Error{ErrorCode::kInvalidValue, std::move(message), {}};
}

// --- time: whole seconds since the epoch, so nothing depends on the host's time_t or tz ---

std::int64_t to_seconds(Time time) {
  return std::chrono::floor<std::chrono::seconds>(time.time_since_epoch()).count();
}

// Clamps what Time cannot hold (its nanoseconds span 1677..2262) instead of overflowing.
Time from_seconds(std::int64_t count) {
  using std::chrono::seconds;
  constexpr std::int64_t kMax = std::chrono::floor<seconds>(Time::max().time_since_epoch()).count();
  constexpr std::int64_t kMin = std::chrono::ceil<seconds>(Time::min().time_since_epoch()).count();
  if (count > kMax) {
    return Time::max();
  }
  if (count < kMin) {
    return Time::min();
  }
  return Time(std::chrono::duration_cast<Time::duration>(seconds(count)));
}

// The calendar arithmetic is done with <chrono> rather than timegm, for years before 1970 and
// after 2038 alike.
std::optional<std::int64_t> epoch_seconds(const ASN1_TIME* time) {
  std::tm tm{};
  if (time == nullptr || ASN1_TIME_to_tm(time, &tm) != 1) {
    return std::nullopt;
  }
  const std::chrono::year_month_day date{std::chrono::year{tm.tm_year + 1900},
                                         std::chrono::month{static_cast<unsigned>(tm.tm_mon + 1)},
                                         std::chrono::day{static_cast<unsigned>(tm.tm_mday)}};
  const std::chrono::sys_seconds at = std::chrono::sys_days{date} + std::chrono::hours{tm.tm_hour} +
                                      std::chrono::minutes{tm.tm_min} +
                                      std::chrono::seconds{tm.tm_sec};
  return at.time_since_epoch().count();
}

// "2030-01-02T03:04:05Z", for messages.
std::string format_time(std::int64_t seconds) {
  const std::chrono::sys_seconds at{std::chrono::seconds{seconds}};
  const std::chrono::sys_days day = std::chrono::floor<std::chrono::days>(at);
  const std::chrono::year_month_day date{day};
  const std::chrono::hh_mm_ss clock{at - day};
  std::array<char, 48> text{};
  std::snprintf(text.data(), text.size(), "%04d-%02u-%02uT%02d:%02d:%02dZ",
                static_cast<int>(date.year()), static_cast<unsigned>(date.month()),
                static_cast<unsigned>(date.day()), static_cast<int>(clock.hours().count()),
                static_cast<int>(clock.minutes().count()),
                static_cast<int>(clock.seconds().count()));
  return text.data();
}

struct Seconds {
  std::int64_t not_before;
  std::int64_t not_after;
};

Result<Seconds> checked_validity(const Validity& validity) {
  const Seconds seconds{to_seconds(validity.not_before), to_seconds(validity.not_after)};
  if (seconds.not_after <= seconds.not_before) {
    return invalid("not_after " + format_time(seconds.not_after) + " is not after not_before " +
                   format_time(seconds.not_before));
  }
  return seconds;
}

// ASN1_TIME_adj picks UTCTime for 1950..2049 and GeneralizedTime otherwise, as RFC 5280 wants.
Status set_validity(X509* cert, const Seconds& validity) {
  if (ASN1_TIME_adj(X509_getm_notBefore(cert), static_cast<time_t>(validity.not_before), 0, 0) ==
          nullptr ||
      ASN1_TIME_adj(X509_getm_notAfter(cert), static_cast<time_t>(validity.not_after), 0, 0) ==
          nullptr) {
    return openssl_error("cannot encode the validity " + format_time(validity.not_before) + ".." +
                         format_time(validity.not_after));
  }
  return Ok{};
}

Result<Seconds> read_validity(const X509* cert) {
  const std::optional<std::int64_t> not_before = epoch_seconds(X509_get0_notBefore(cert));
  const std::optional<std::int64_t> not_after = epoch_seconds(X509_get0_notAfter(cert));
  if (!not_before || !not_after) {
    return openssl_error("the certificate's validity cannot be read");
  }
  return Seconds{*not_before, *not_after};
}

// --- PEM ---

Result<std::string> take_text(BIO* bio) {
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio, &data);  // NOLINT(google-runtime-int): OpenSSL's type
  if (size < 0 || (size > 0 && data == nullptr)) {
    return openssl_error("cannot read a memory BIO", ErrorCode::kInternal);
  }
  return std::string(data, static_cast<std::size_t>(size));
}

Result<std::string> certificate_pem(X509* cert) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_X509(bio.get(), cert) != 1) {
    return openssl_error("cannot write the certificate as PEM", ErrorCode::kInternal);
  }
  return take_text(bio.get());
}

Result<std::string> private_key_pem(EVP_PKEY* key) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio ||
      PEM_write_bio_PKCS8PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    return openssl_error("cannot write the private key as PEM", ErrorCode::kInternal);
  }
  return take_text(bio.get());
}

Result<PemPair> pem_pair(X509* cert, EVP_PKEY* key) {
  Result<std::string> cert_text = certificate_pem(cert);
  if (!cert_text) {
    return cert_text.error();
  }
  Result<std::string> key_text = private_key_pem(key);
  if (!key_text) {
    return key_text.error();
  }
  return PemPair{std::move(*cert_text), std::move(*key_text)};
}

// --- reading ---

Result<std::string> fingerprint_bytes(X509* cert) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int size = 0;
  if (X509_digest(cert, EVP_sha256(), digest.data(), &size) != 1) {
    return openssl_error("cannot hash the certificate", ErrorCode::kInternal);
  }
  return std::string(reinterpret_cast<const char*>(digest.data()), size);
}

std::string lower_hex(std::string_view bytes) {
  constexpr std::string_view kDigits = "0123456789abcdef";
  std::string hex;
  hex.reserve(bytes.size() * 2);
  for (const char byte : bytes) {
    const auto value = static_cast<unsigned char>(byte);
    hex += kDigits[value >> 4U];
    hex += kDigits[value & 0x0fU];
  }
  return hex;
}

std::vector<std::string> dns_names_of(X509* cert) {
  std::vector<std::string> names;
  const std::unique_ptr<GENERAL_NAMES, GeneralNamesDeleter> sans(
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr)));
  if (!sans) {
    return names;
  }
  for (int i = 0; i < sk_GENERAL_NAME_num(sans.get()); ++i) {
    const GENERAL_NAME* name = sk_GENERAL_NAME_value(sans.get(), i);
    if (name->type == GEN_DNS) {
      const ASN1_IA5STRING* text = name->d.dNSName;
      names.emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(text)),
                         static_cast<std::size_t>(ASN1_STRING_length(text)));
    }
  }
  return names;
}

Result<std::string> subject_of(X509* cert) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || X509_NAME_print_ex(bio.get(), X509_get_subject_name(cert), 0, XN_FLAG_RFC2253) < 0) {
    return openssl_error("cannot print the certificate's subject", ErrorCode::kInternal);
  }
  return take_text(bio.get());
}

Result<CertificateInfo> describe(X509* cert) {
  Result<Seconds> validity = read_validity(cert);
  if (!validity) {
    return validity.error();
  }
  Result<std::string> subject = subject_of(cert);
  if (!subject) {
    return subject.error();
  }
  Result<std::string> digest = fingerprint_bytes(cert);
  if (!digest) {
    return digest.error();
  }
  CertificateInfo info;
  info.not_before = from_seconds(validity->not_before);
  info.not_after = from_seconds(validity->not_after);
  info.is_ca = (X509_get_extension_flags(cert) & EXFLAG_CA) != 0;
  info.dns_names = dns_names_of(cert);
  info.subject = std::move(*subject);
  info.fingerprint = lower_hex(*digest);
  ERR_clear_error();
  return info;
}

// --- issuing ---

// LDH labels of 1..63 characters, 253 in all, optionally below a leading "*." wildcard. Checked
// here so a name can never smuggle another SAN entry or an empty label into the certificate.
bool is_dns_name(std::string_view name) {
  if (name.starts_with("*.")) {
    name.remove_prefix(2);
  }
  if (name.empty() || name.size() > 253) {
    return false;
  }
  std::size_t label = 0;
  char previous = '.';
  for (const char c : name) {
    if (c == '.') {
      if (label == 0 || previous == '-') {
        return false;
      }
      label = 0;
    } else {
      const bool alphanumeric =
          (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
      if ((!alphanumeric && c != '-') || (c == '-' && label == 0) || ++label > 63) {
        return false;
      }
    }
    previous = c;
  }
  return label > 0 && previous != '-';
}

Result<KeyPtr> new_p256_key() {
  KeyPtr key(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"));
  if (!key) {
    return openssl_error("cannot generate a P-256 key", ErrorCode::kInternal);
  }
  return key;
}

// 128 random bits (RFC 5280 allows 20 octets; CA/B Forum wants at least 64 random bits).
Status set_random_serial(X509* cert) {
  std::array<unsigned char, 16> bytes{};
  if (RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1) {
    return openssl_error("no random bytes for the serial number", ErrorCode::kInternal);
  }
  bytes.back() |= 1U;  // a serial must be positive, and 0 is not
  const Owned<BIGNUM, BN_free> number(
      BN_bin2bn(bytes.data(), static_cast<int>(bytes.size()), nullptr));
  if (!number || BN_to_ASN1_INTEGER(number.get(), X509_get_serialNumber(cert)) == nullptr) {
    return openssl_error("cannot set the serial number", ErrorCode::kInternal);
  }
  return Ok{};
}

// A certificate with version 3, a random serial, `validity` and `key`'s public key.
Result<CertPtr> new_certificate(EVP_PKEY* key, const Seconds& validity) {
  CertPtr cert(X509_new());
  if (!cert || X509_set_version(cert.get(), X509_VERSION_3) != 1 ||
      X509_set_pubkey(cert.get(), key) != 1) {
    return openssl_error("cannot create a certificate", ErrorCode::kInternal);
  }
  if (Status serial = set_random_serial(cert.get()); !serial) {
    return serial.error();
  }
  if (Status set = set_validity(cert.get(), validity); !set) {
    return set.error();
  }
  return cert;
}

// A new key and an unsigned certificate for it, with a serial and `validity`.
struct KeyedCertificate {
  KeyPtr key;
  CertPtr cert;
};

Result<KeyedCertificate> new_keyed_certificate(const Seconds& validity) {
  Result<KeyPtr> key = new_p256_key();
  if (!key) {
    return key.error();
  }
  Result<CertPtr> cert = new_certificate(key->get(), validity);
  if (!cert) {
    return cert.error();
  }
  return KeyedCertificate{std::move(*key), std::move(*cert)};
}

Status set_common_name(X509* cert, std::string_view common_name) {
  X509_NAME* name = X509_get_subject_name(cert);
  if (X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                                 reinterpret_cast<const unsigned char*>(common_name.data()),
                                 static_cast<int>(common_name.size()), -1, 0) != 1) {
    return openssl_error("the common name \"" + std::string(common_name) + "\" cannot be encoded");
  }
  return Ok{};
}

struct Extension {
  int nid;
  const char* value;  // openssl.cnf syntax; only ever a constant here, never caller text
};

// `issuer` is the signing certificate (`cert` itself for a self-signed one), for the AKI.
Status add_extensions(X509* cert, X509* issuer, std::initializer_list<Extension> extensions) {
  for (const Extension& extension : extensions) {
    X509V3_CTX context{};
    X509V3_set_ctx(&context, issuer, cert, nullptr, nullptr, 0);
    const Owned<X509_EXTENSION, X509_EXTENSION_free> made(
        X509V3_EXT_nconf_nid(nullptr, &context, extension.nid, extension.value));
    if (!made || X509_add_ext(cert, made.get(), -1) != 1) {
      return openssl_error(std::string("cannot add the extension ") + OBJ_nid2sn(extension.nid) +
                               " = " + extension.value,
                           ErrorCode::kInternal);
    }
  }
  return Ok{};
}

// Built as GENERAL_NAMEs rather than a "DNS:a,DNS:b" string, so no name is parsed as syntax.
Status add_dns_names(X509* cert, const std::vector<std::string>& dns_names, bool critical) {
  const std::unique_ptr<GENERAL_NAMES, GeneralNamesDeleter> names(GENERAL_NAMES_new());
  if (!names) {
    return openssl_error("cannot allocate subjectAltName", ErrorCode::kInternal);
  }
  for (const std::string& dns_name : dns_names) {
    GENERAL_NAME* name = a2i_GENERAL_NAME(nullptr, nullptr, nullptr, GEN_DNS, dns_name.c_str(), 0);
    if (name == nullptr || sk_GENERAL_NAME_push(names.get(), name) <= 0) {
      GENERAL_NAME_free(name);
      return openssl_error("cannot add the DNS name " + dns_name, ErrorCode::kInternal);
    }
  }
  if (X509_add1_ext_i2d(cert, NID_subject_alt_name, names.get(), critical ? 1 : 0,
                        X509V3_ADD_DEFAULT) != 1) {
    return openssl_error("cannot add subjectAltName", ErrorCode::kInternal);
  }
  return Ok{};
}

Status sign(X509* cert, EVP_PKEY* key) {
  if (X509_sign(cert, key, EVP_sha256()) <= 0) {
    return openssl_error("cannot sign the certificate with SHA-256");
  }
  return Ok{};
}

}  // namespace

Result<PemPair> make_ca(std::string_view common_name, Validity validity) {
  Result<Seconds> seconds = checked_validity(validity);
  if (!seconds) {
    return seconds.error();
  }
  if (common_name.empty() || common_name.size() > kMaxCommonName) {
    return invalid("a CA's common name must have 1 to 64 characters, not " +
                   std::to_string(common_name.size()));
  }
  Result<KeyedCertificate> made = new_keyed_certificate(*seconds);
  if (!made) {
    return made.error();
  }
  EVP_PKEY* key = made->key.get();
  X509* ca = made->cert.get();
  if (Status name = set_common_name(ca, common_name); !name) {
    return name.error();
  }
  if (X509_set_issuer_name(ca, X509_get_subject_name(ca)) != 1) {
    return openssl_error("cannot set the issuer", ErrorCode::kInternal);
  }
  // One level only: this CA signs serving certificates, never another CA.
  const Status extended = add_extensions(ca, ca,
                                         {{NID_basic_constraints, "critical,CA:TRUE,pathlen:0"},
                                          {NID_key_usage, "critical,keyCertSign,cRLSign"},
                                          {NID_subject_key_identifier, "hash"}});
  if (!extended) {
    return extended.error();
  }
  if (Status signature = sign(ca, key); !signature) {
    return signature.error();
  }
  return pem_pair(ca, key);
}

Result<PemPair> issue_serving_certificate(const PemPair& ca,
                                          const std::vector<std::string>& dns_names,
                                          Validity validity) {
  Result<Seconds> seconds = checked_validity(validity);
  if (!seconds) {
    return seconds.error();
  }
  if (dns_names.empty()) {
    return invalid("a serving certificate needs at least one DNS name");
  }
  for (const std::string& name : dns_names) {
    if (!is_dns_name(name)) {
      return invalid("\"" + name + "\" is not a DNS name");
    }
  }
  Result<CertPtr> ca_cert = pem::read_first_certificate(ca.cert_pem);
  if (!ca_cert) {
    return Error{ca_cert.error().code, "CA certificate: " + ca_cert.error().message, {}};
  }
  Result<KeyPtr> ca_key = pem::read_private_key(ca.key_pem);
  if (!ca_key) {
    return Error{ca_key.error().code, "CA key: " + ca_key.error().message, {}};
  }
  if (X509_check_ca(ca_cert->get()) != 1) {
    return invalid("the CA certificate is not a CA (no basicConstraints CA:TRUE with keyCertSign)");
  }
  if (X509_check_private_key(ca_cert->get(), ca_key->get()) != 1) {
    return openssl_error("the CA key is not the private key of the CA certificate");
  }
  Result<Seconds> ca_validity = read_validity(ca_cert->get());
  if (!ca_validity) {
    return ca_validity.error();
  }
  if (seconds->not_before < ca_validity->not_before ||
      seconds->not_after > ca_validity->not_after) {
    return invalid("the validity " + format_time(seconds->not_before) + ".." +
                   format_time(seconds->not_after) + " is not inside the CA's validity " +
                   format_time(ca_validity->not_before) + ".." +
                   format_time(ca_validity->not_after));
  }

  Result<KeyedCertificate> made = new_keyed_certificate(*seconds);
  if (!made) {
    return made.error();
  }
  EVP_PKEY* key = made->key.get();
  X509* leaf = made->cert.get();
  // RFC 5280 4.2.1.6: with an empty subject the subjectAltName must be critical.
  const bool has_common_name = dns_names.front().size() <= kMaxCommonName;
  if (has_common_name) {
    if (Status name = set_common_name(leaf, dns_names.front()); !name) {
      return name.error();
    }
  }
  if (X509_set_issuer_name(leaf, X509_get_subject_name(ca_cert->get())) != 1) {
    return openssl_error("cannot set the issuer", ErrorCode::kInternal);
  }
  X509* issuer = ca_cert->get();
  const Status extended = add_extensions(leaf, issuer,
                                         {{NID_basic_constraints, "critical,CA:FALSE"},
                                          {NID_key_usage, "critical,digitalSignature"},
                                          {NID_ext_key_usage, "serverAuth"},
                                          {NID_subject_key_identifier, "hash"},
                                          {NID_authority_key_identifier, "keyid:always"}});
  if (!extended) {
    return extended.error();
  }
  if (Status names = add_dns_names(leaf, dns_names, /*critical=*/!has_common_name); !names) {
    return names.error();
  }
  if (Status signature = sign(leaf, ca_key->get()); !signature) {
    return signature.error();
  }
  return pem_pair(leaf, key);
}

Result<CertificateInfo> read_certificate(std::string_view pem) {
  Result<CertPtr> cert = pem::read_first_certificate(pem);
  if (!cert) {
    return cert.error();
  }
  return describe(cert->get());
}

Result<std::vector<CertificateInfo>> read_certificates(std::string_view pem_bundle) {
  Result<std::vector<CertPtr>> certs = pem::read_certificates(pem_bundle);
  if (!certs) {
    return certs.error();
  }
  std::vector<CertificateInfo> infos;
  infos.reserve(certs->size());
  for (const CertPtr& cert : *certs) {
    Result<CertificateInfo> info = describe(cert.get());
    if (!info) {
      return info.error();
    }
    infos.push_back(std::move(*info));
  }
  return infos;
}

Result<bool> key_matches(std::string_view cert_pem, std::string_view key_pem) {
  Result<CertPtr> cert = pem::read_first_certificate(cert_pem);
  if (!cert) {
    return cert.error();
  }
  Result<KeyPtr> key = pem::read_private_key(key_pem);
  if (!key) {
    return key.error();
  }
  const bool matches = X509_check_private_key(cert->get(), key->get()) == 1;
  ERR_clear_error();  // a mismatch is an answer, not a failure
  return matches;
}

Status verify_serving_certificate(std::string_view cert_pem, std::string_view ca_bundle_pem,
                                  std::string_view dns_name, Time at) {
  // An empty host would switch the name check off.
  if (dns_name.empty()) {
    return invalid("no DNS name to verify the certificate for");
  }
  Result<std::vector<CertPtr>> chain = pem::read_certificates(cert_pem);
  if (!chain) {
    return Error{chain.error().code, "certificate: " + chain.error().message, {}};
  }
  Result<std::vector<CertPtr>> cas = pem::read_certificates(ca_bundle_pem);
  if (!cas) {
    return Error{cas.error().code, "CA bundle: " + cas.error().message, {}};
  }
  const Owned<X509_STORE, X509_STORE_free> store(X509_STORE_new());
  const CertStackPtr untrusted(sk_X509_new_null());
  const Owned<X509_STORE_CTX, X509_STORE_CTX_free> context(X509_STORE_CTX_new());
  if (!store || !untrusted || !context) {
    return openssl_error("cannot allocate the verification context", ErrorCode::kInternal);
  }
  for (const CertPtr& ca : *cas) {
    if (X509_STORE_add_cert(store.get(), ca.get()) != 1) {
      return openssl_error("cannot add a CA to the trust store", ErrorCode::kInternal);
    }
  }
  for (std::size_t i = 1; i < chain->size(); ++i) {
    if (sk_X509_push(untrusted.get(), (*chain)[i].get()) <= 0) {
      return openssl_error("cannot collect the intermediates", ErrorCode::kInternal);
    }
  }
  X509* leaf = chain->front().get();
  if (X509_STORE_CTX_init(context.get(), store.get(), leaf, untrusted.get()) != 1) {
    return openssl_error("cannot start the verification", ErrorCode::kInternal);
  }
  X509_VERIFY_PARAM* param = X509_STORE_CTX_get0_param(context.get());
  // set_time also sets X509_V_FLAG_USE_CHECK_TIME, so the host's clock is never read.
  X509_VERIFY_PARAM_set_time(param, static_cast<time_t>(to_seconds(at)));
  X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
  if (X509_VERIFY_PARAM_set_purpose(param, X509_PURPOSE_SSL_SERVER) != 1 ||
      X509_VERIFY_PARAM_set1_host(param, dns_name.data(), dns_name.size()) != 1) {
    return openssl_error("cannot verify for the name \"" + std::string(dns_name) + "\"");
  }
  if (X509_verify_cert(context.get()) == 1) {
    ERR_clear_error();
    return Ok{};
  }
  const int code = X509_STORE_CTX_get_error(context.get());
  std::string message = "the certificate does not verify for " + std::string(dns_name) + " at " +
                        format_time(to_seconds(at)) + ": " + X509_verify_cert_error_string(code);
  if (X509* failed = X509_STORE_CTX_get_current_cert(context.get()); failed != nullptr) {
    Result<std::string> subject = subject_of(failed);
    message += " (at \"" + (subject ? *subject : std::string("?")) + "\", depth " +
               std::to_string(X509_STORE_CTX_get_error_depth(context.get())) + ")";
  }
  ERR_clear_error();
  return invalid(std::move(message));
}

Result<std::string> make_bundle(const std::vector<std::string>& pems) {
  std::string bundle;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < pems.size(); ++i) {
    // An empty part (say, no bundle yet) adds nothing.
    if (pems[i].find_first_not_of(" \t\r\n") == std::string::npos) {
      continue;
    }
    Result<std::vector<CertPtr>> certs = pem::read_certificates(pems[i]);
    if (!certs) {
      return Error{
          certs.error().code, "PEM " + std::to_string(i + 1) + ": " + certs.error().message, {}};
    }
    for (const CertPtr& cert : *certs) {
      Result<std::string> digest = fingerprint_bytes(cert.get());
      if (!digest) {
        return digest.error();
      }
      if (!seen.insert(std::move(*digest)).second) {
        continue;
      }
      Result<std::string> pem = certificate_pem(cert.get());
      if (!pem) {
        return pem.error();
      }
      bundle += *pem;
    }
  }
  return bundle;
}

}  // namespace topoguard::pki
