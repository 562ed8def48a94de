#include "topoguard/selftls/tls_material.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "topoguard/common/base64.h"
#include "topoguard/pki/certificates.h"

namespace topoguard::selftls {
namespace {

using std::chrono::hours;
using namespace std::chrono_literals;

const Time kStart = Time(std::chrono::seconds(1'798'761'600));  // 2027-01-01T00:00:00Z

TlsPolicy short_lived() {
  TlsPolicy policy;
  policy.dns_names = {"topoguard.topoguard.svc", "topoguard.topoguard.svc.cluster.local"};
  policy.ca_lifetime = hours(24 * 30);
  policy.cert_lifetime = hours(24 * 3);
  policy.previous_overlap = hours(2);
  return policy;
}

std::string joined(const std::vector<std::string>& bundle) {
  Result<std::string> pem = pki::make_bundle(bundle);
  EXPECT_TRUE(pem.has_value());
  return pem ? *pem : "";
}

// The serving certificate verifies for every name of the Service against `bundle`.
void expect_trusted(const TlsMaterial& material, const std::vector<std::string>& bundle, Time at,
                    const TlsPolicy& policy) {
  for (const std::string& name : policy.dns_names) {
    const Status verified =
        pki::verify_serving_certificate(material.serving.cert_pem, joined(bundle), name, at);
    EXPECT_TRUE(verified.has_value()) << name << ": " << verified.error().message;
  }
}

TlsPlan plan(const std::optional<TlsMaterial>& current, Time now, bool bundles_hold_next = false,
             const TlsPolicy& policy = short_lived()) {
  Result<TlsPlan> planned = plan_tls(current, policy, now, bundles_hold_next);
  EXPECT_TRUE(planned.has_value()) << (planned ? "" : planned.error().message);
  return planned ? *planned : TlsPlan{};
}

// No Secret: one CA and a serving certificate it signed for both Service names, backdated an
// hour; planning again on what was written (a restart, a second replica) changes nothing.
TEST(TlsPlanTest, FirstStartMakesTheSecretAndThenReusesIt) {
  const TlsPolicy policy = short_lived();
  const TlsPlan first = plan(std::nullopt, kStart);
  ASSERT_TRUE(first.write.has_value());
  EXPECT_TRUE(first.renewed_certificate);
  EXPECT_EQ(first.bundle, std::vector<std::string>{first.write->ca.cert_pem});
  expect_trusted(*first.write, first.bundle, kStart, policy);
  const auto ca = pki::read_certificate(first.write->ca.cert_pem);
  ASSERT_TRUE(ca.has_value());
  EXPECT_TRUE(ca->is_ca);
  EXPECT_EQ(ca->not_before, kStart - hours(1));
  const auto serving = pki::read_certificate(first.write->serving.cert_pem);
  ASSERT_TRUE(serving.has_value());
  EXPECT_EQ(serving->dns_names, policy.dns_names);
  EXPECT_EQ(serving->not_before, kStart - hours(1));
  EXPECT_EQ(serving->not_after, kStart + hours(72));

  const TlsPlan again = plan(first.write, kStart + 1h);
  EXPECT_FALSE(again.write.has_value());
  EXPECT_EQ(again.bundle, first.bundle);
  // Due when two thirds of the serving certificate's 73 hours have passed.
  EXPECT_EQ(again.next_check, kStart - hours(1) + std::chrono::minutes(73 * 40));
}

// The shortest lifetimes serve accepts: backdated a tenth of their life, not an hour, so a new
// certificate is not due for renewal the moment it is made (found against the real API server:
// an hour's backdate on a 1-minute certificate renewed it on every pass).
TEST(TlsPlanTest, MinuteLifetimesAreNotDueWhenMade) {
  TlsPolicy policy = short_lived();
  policy.ca_lifetime = 90s;
  policy.cert_lifetime = 60s;
  policy.previous_overlap = 6s;
  const TlsMaterial first = *plan(std::nullopt, kStart, false, policy).write;
  const auto serving = pki::read_certificate(first.serving.cert_pem);
  ASSERT_TRUE(serving.has_value());
  EXPECT_EQ(serving->not_before, kStart - 6s);
  const auto ca = pki::read_certificate(first.ca.cert_pem);
  ASSERT_TRUE(ca.has_value());
  EXPECT_EQ(ca->not_before, kStart - 9s);
  const TlsPlan soon = plan(first, kStart + 30s, false, policy);
  EXPECT_FALSE(soon.write.has_value());
  EXPECT_EQ(soon.next_check, kStart - 6s + 44s);
  const TlsPlan due = plan(first, kStart + 39s, false, policy);
  ASSERT_TRUE(due.write.has_value());
  EXPECT_TRUE(due.renewed_certificate);
}

// The serving certificate is renewed from the same CA at two thirds of its life; the bundle does
// not change, so nothing is distrusted.
TEST(TlsPlanTest, RenewsTheServingCertificateAtTwoThirdsOfItsLife) {
  const TlsPolicy policy = short_lived();
  const TlsMaterial first = *plan(std::nullopt, kStart).write;
  EXPECT_FALSE(plan(first, kStart + hours(47)).write.has_value());
  const Time due = kStart + hours(49);
  const TlsPlan renewed = plan(first, due);
  ASSERT_TRUE(renewed.write.has_value());
  EXPECT_TRUE(renewed.renewed_certificate);
  EXPECT_FALSE(renewed.rotated_ca);
  EXPECT_EQ(renewed.write->ca, first.ca);
  EXPECT_NE(renewed.write->serving.cert_pem, first.serving.cert_pem);
  EXPECT_EQ(renewed.bundle, std::vector<std::string>{first.ca.cert_pem});
  expect_trusted(*renewed.write, renewed.bundle, due, policy);
}

// A whole CA rotation. At every step the certificate served before the step verifies against
// the bundle after it (replicas that have not reloaded yet) and the certificate after the step
// against the bundle before it (API servers that have not read the new bundle yet).
TEST(TlsPlanTest, RotatesTheCaWithoutAWindowOfDistrust) {
  const TlsPolicy policy = short_lived();
  TlsMaterial state = *plan(std::nullopt, kStart).write;
  std::vector<std::string> bundle = {state.ca.cert_pem};
  const pki::PemPair first_ca = state.ca;

  const auto step = [&](Time now, bool bundles_hold_next) {
    const TlsPlan next = plan(state, now, bundles_hold_next);
    if (next.write) {
      expect_trusted(state, next.bundle, now, policy);
      expect_trusted(*next.write, bundle, now, policy);
      state = *next.write;
    }
    bundle = next.bundle;
    return next;
  };

  // Serving renewals along the way keep the first CA.
  Time now = kStart;
  for (int renewal = 0; renewal < 9; ++renewal) {
    now += hours(49);
    const TlsPlan renewed = step(now, false);
    ASSERT_TRUE(renewed.write.has_value()) << renewal;
    EXPECT_EQ(state.ca, first_ca);
    EXPECT_FALSE(state.next_ca.has_value()) << renewal;
  }
  // Two thirds of the CA's 721 hours: a next CA is staged in the bundle, nothing signed by it.
  now = kStart - hours(1) + std::chrono::minutes(721 * 40);
  const TlsPlan staged = step(now, false);
  ASSERT_TRUE(staged.write.has_value());
  ASSERT_TRUE(state.next_ca.has_value());
  EXPECT_FALSE(staged.rotated_ca);
  EXPECT_EQ(state.ca, first_ca);
  EXPECT_EQ(staged.bundle, (std::vector<std::string>{first_ca.cert_pem, state.next_ca->cert_pem}));
  const pki::PemPair second_ca = *state.next_ca;

  // Until every caBundle holds it, the next CA does not sign.
  EXPECT_FALSE(step(now + 1min, false).write.has_value());

  const TlsPlan promoted = step(now + 2min, true);
  ASSERT_TRUE(promoted.write.has_value());
  EXPECT_TRUE(promoted.rotated_ca);
  EXPECT_EQ(state.ca, second_ca);
  EXPECT_EQ(state.previous_ca_pem, first_ca.cert_pem);
  EXPECT_EQ(state.previous_until, now + 2min + hours(2));
  EXPECT_EQ(promoted.bundle, (std::vector<std::string>{second_ca.cert_pem, first_ca.cert_pem}));
  EXPECT_EQ(promoted.next_check, now + 2min + hours(2));

  EXPECT_FALSE(step(now + hours(1), false).write.has_value());
  const TlsPlan retired = step(now + 2min + hours(2), false);
  ASSERT_TRUE(retired.write.has_value());
  EXPECT_TRUE(state.previous_ca_pem.empty());
  EXPECT_EQ(retired.bundle, std::vector<std::string>{second_ca.cert_pem});
}

// A Secret someone broke (the CA key replaced): a new CA signs a new certificate, and the old CA
// certificate stays trusted for the overlap, since replicas may still serve what it signed.
TEST(TlsPlanTest, ReplacesACaThatCannotSign) {
  const TlsPolicy policy = short_lived();
  const TlsMaterial first = *plan(std::nullopt, kStart).write;
  TlsMaterial broken = first;
  broken.ca.key_pem = first.serving.key_pem;
  const TlsPlan repaired = plan(broken, kStart + 1h);
  ASSERT_TRUE(repaired.write.has_value());
  ASSERT_FALSE(repaired.reasons.empty());
  EXPECT_NE(repaired.reasons[0].find("its key is not its certificate's"), std::string::npos)
      << repaired.reasons[0];
  EXPECT_NE(repaired.write->ca.cert_pem, first.ca.cert_pem);
  EXPECT_EQ(repaired.write->previous_ca_pem, first.ca.cert_pem);
  expect_trusted(*repaired.write, repaired.bundle, kStart + 1h, policy);
  expect_trusted(first, repaired.bundle, kStart + 1h, policy);
}

// The Service renamed: the certificate no longer covers its names and is issued again, same CA.
TEST(TlsPlanTest, ReissuesForNewServiceNames) {
  const TlsMaterial first = *plan(std::nullopt, kStart).write;
  TlsPolicy renamed = short_lived();
  renamed.dns_names = {"guard.platform.svc", "guard.platform.svc.cluster.local"};
  const TlsPlan reissued = plan(first, kStart + 1h, false, renamed);
  ASSERT_TRUE(reissued.write.has_value());
  EXPECT_EQ(reissued.write->ca, first.ca);
  expect_trusted(*reissued.write, reissued.bundle, kStart + 1h, renamed);
}

// Secret data is base64 as the API returns it; the retired CA's end is an annotation.
TEST(TlsSecretTest, RoundTripsThroughSecretData) {
  TlsMaterial material = *plan(std::nullopt, kStart).write;
  material.next_ca = pki::PemPair{"next-cert", "next-key"};
  material.previous_ca_pem = "previous";
  material.previous_until = kStart + hours(3);
  const Json secret = {{"metadata", {{"annotations", tls_secret_annotations(material)}}},
                       {"data", tls_secret_data(material)}};
  EXPECT_EQ(secret["data"]["tls.crt"], base64_encode(material.serving.cert_pem));
  EXPECT_EQ(secret["metadata"]["annotations"]["topoguard.dev/ca-previous-until"],
            "2027-01-01T03:00:00Z");
  EXPECT_EQ(read_tls_secret(secret), material);

  // Absent or damaged keys read as empty.
  const TlsMaterial damaged = read_tls_secret(Json{{"data", {{"ca.crt", "%%%"}, {"tls.key", 3}}}});
  EXPECT_TRUE(damaged.ca.cert_pem.empty());
  EXPECT_TRUE(damaged.serving.key_pem.empty());
  EXPECT_FALSE(damaged.next_ca.has_value());
}

}  // namespace
}  // namespace topoguard::selftls
