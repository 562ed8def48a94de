// LeaseLock against the fake API server: one holder at a time among replicas racing for the
// Lease, take-over only after the lease duration as each replica observes it, renewal, loss of
// the Lease when renewals fail past the deadline, and release at shutdown.
#include "topoguard/kube/lease_lock.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "fake_apiserver.h"
#include "test_clock.h"
#include "topoguard/kube/objects.h"

namespace topoguard::kube {
namespace {

using namespace std::chrono_literals;

const ResourceRef kTopoguardLeases{"coordination.k8s.io", "v1", "leases", "topoguard"};

class LeaseLockTest : public ::testing::Test {
 protected:
  ApiClientPtr client(const std::shared_ptr<testing::TestClock>& clock) {
    Result<ApiClientPtr> made = ApiClient::create(fake_.config(), {}, clock);
    EXPECT_TRUE(made.has_value()) << made.error().to_string();
    return made ? *made : nullptr;
  }
  LeaseOptions options(const std::string& identity) {
    return {"topoguard", "topoguard-tls", identity, 15s, 10s, 2s};
  }
  Json lease() { return get_object(*client(clock_), kTopoguardLeases, "topoguard-tls")->object; }

  testing::FakeApiServer fake_;
  std::shared_ptr<testing::TestClock> clock_ = std::make_shared<testing::TestClock>(true);
};

// The first replica creates the Lease; the second sees it held and stays a follower while the
// holder renews; once the holder stops renewing, the follower takes over only after observing
// the same record for the whole lease duration.
TEST_F(LeaseLockTest, OneHolderAndTakeOverAfterTheLeaseDuration) {
  auto clock_b = std::make_shared<testing::TestClock>(true);
  LeaseLock a(client(clock_), options("a"), clock_);
  LeaseLock b(client(clock_b), options("b"), clock_b);
  EXPECT_TRUE(a.try_acquire_or_renew());
  EXPECT_TRUE(a.held());
  EXPECT_FALSE(b.try_acquire_or_renew());
  EXPECT_EQ(b.holder(), "a");
  EXPECT_EQ(lease()["spec"]["holderIdentity"], "a");
  EXPECT_EQ(lease()["spec"]["leaseDurationSeconds"], 15);

  for (int i = 0; i < 5; ++i) {  // a renews; b keeps seeing a fresh record
    clock_->advance(2s);
    clock_b->advance(10s);
    EXPECT_TRUE(a.try_acquire_or_renew());
    EXPECT_FALSE(b.try_acquire_or_renew());
  }
  // a stops renewing: b observes the same record for 14 s, then for 15 s.
  clock_b->advance(14s);
  EXPECT_FALSE(b.try_acquire_or_renew());
  clock_b->advance(1s);
  EXPECT_TRUE(b.try_acquire_or_renew());
  EXPECT_EQ(lease()["spec"]["holderIdentity"], "b");
  EXPECT_EQ(lease()["spec"]["leaseTransitions"], 1);
  // a, back, sees b's fresh record and has lost the Lease.
  EXPECT_FALSE(a.try_acquire_or_renew());
  EXPECT_FALSE(a.held());
}

// A holder that cannot renew (the API refuses) stops holding at the renew deadline, before the
// lease duration lets anyone else take over.
TEST_F(LeaseLockTest, HolderStepsDownWhenRenewalsFail) {
  LeaseLock a(client(clock_), options("a"), clock_);
  ASSERT_TRUE(a.try_acquire_or_renew());
  fake_.control("throttle",
                {{"count", 1000}, {"status", 500}, {"retryAfter", 0}, {"match", "leases"}});
  clock_->advance(5s);
  EXPECT_TRUE(a.try_acquire_or_renew());  // within the deadline it still holds
  clock_->advance(5s);
  EXPECT_FALSE(a.try_acquire_or_renew());
  EXPECT_FALSE(a.held());
  EXPECT_FALSE(a.last_error().empty());
}

// Several replicas racing for an expired Lease from threads: exactly one wins.
TEST_F(LeaseLockTest, RacingReplicasElectExactlyOne) {
  constexpr int kReplicas = 6;
  std::vector<std::unique_ptr<LeaseLock>> locks;
  for (int i = 0; i < kReplicas; ++i) {
    locks.push_back(
        std::make_unique<LeaseLock>(client(clock_), options("r" + std::to_string(i)), clock_));
  }
  std::atomic<int> winners{0};
  std::vector<std::thread> threads;
  for (auto& lock : locks) {
    threads.emplace_back([&winners, &lock] { winners += lock->try_acquire_or_renew() ? 1 : 0; });
  }
  for (std::thread& thread : threads) {
    thread.join();
  }
  EXPECT_EQ(winners.load(), 1);
  int holders = 0;
  for (auto& lock : locks) {
    holders += lock->held() ? 1 : 0;
  }
  EXPECT_EQ(holders, 1);
}

// release() clears the holder so a successor takes over at once.
TEST_F(LeaseLockTest, ReleaseLetsASuccessorTakeOver) {
  auto clock_b = std::make_shared<testing::TestClock>(true);
  LeaseLock a(client(clock_), options("a"), clock_);
  LeaseLock b(client(clock_b), options("b"), clock_b);
  ASSERT_TRUE(a.try_acquire_or_renew());
  EXPECT_FALSE(b.try_acquire_or_renew());
  a.release();
  EXPECT_FALSE(a.held());
  EXPECT_EQ(lease()["spec"]["holderIdentity"], "");
  EXPECT_TRUE(b.try_acquire_or_renew());
}

TEST(LeaseIdentityTest, UniquePerProcessStart) {
  const std::string first = lease_identity("topoguard-7d9f-abc");
  EXPECT_EQ(first.rfind("topoguard-7d9f-abc_", 0), 0u);
  EXPECT_NE(first, lease_identity("topoguard-7d9f-abc"));
}

}  // namespace
}  // namespace topoguard::kube
