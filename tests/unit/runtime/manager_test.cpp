#include "topoguard/runtime/manager.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace topoguard::runtime {
namespace {

using std::chrono::steady_clock;

// A component that writes what is done to it into a shared journal.
class Recorder final : public Component {
 public:
  Recorder(std::string name, std::vector<std::string>& journal)
      : name_(std::move(name)), journal_(journal) {}

  std::string name() const override { return name_; }
  Status start() override {
    journal_.push_back("start " + name_);
    if (!start_error.empty()) {
      return Error{ErrorCode::kInternal, start_error, {}};
    }
    return Ok{};
  }
  bool stop(steady_clock::time_point deadline) override {
    journal_.push_back("stop " + name_);
    stop_deadline = deadline;
    return stops_in_time;
  }
  std::string not_ready_reason() const override { return not_ready; }
  std::string metrics() const override { return name_ + "_up 1\n"; }

  std::string start_error;
  bool stops_in_time = true;
  std::string not_ready;
  steady_clock::time_point stop_deadline{};

 private:
  std::string name_;
  std::vector<std::string>& journal_;
};

class ManagerTest : public ::testing::Test {
 protected:
  std::shared_ptr<Recorder> add(const std::string& name) {
    auto component = std::make_shared<Recorder>(name, journal_);
    manager_.add(component);
    return component;
  }

  std::vector<std::string> journal_;
  Manager manager_;
};

// Components start in the order they were added and stop in the reverse order.
TEST_F(ManagerTest, StartsInOrderAndStopsInReverse) {
  add("cache");
  add("tls");
  add("server");
  ASSERT_TRUE(manager_.start());
  EXPECT_TRUE(manager_.stop());
  EXPECT_EQ(journal_, (std::vector<std::string>{"start cache", "start tls", "start server",
                                                "stop server", "stop tls", "stop cache"}));
}

// A component that cannot start stops the ones started before it, in reverse, and none after
// it is started; the error names it.
TEST_F(ManagerTest, FailedStartStopsTheStartedOnes) {
  add("cache");
  add("tls");
  add("server")->start_error = "port 8443 in use";
  add("reports");
  const Status started = manager_.start();
  ASSERT_FALSE(started);
  EXPECT_EQ(started.error().message, "server: port 8443 in use");
  EXPECT_EQ(journal_, (std::vector<std::string>{"start cache", "start tls", "start server",
                                                "stop tls", "stop cache"}));
  journal_.clear();
  EXPECT_TRUE(manager_.stop());  // nothing is running: nothing is stopped twice
  EXPECT_TRUE(journal_.empty());
}

// Readiness is the first not-ready reason in start order; once stopping, the process is not
// ready whatever the components say.
TEST_F(ManagerTest, ReadinessAggregatesTheComponents) {
  auto cache = add("cache");
  auto tls = add("tls");
  ASSERT_TRUE(manager_.start());
  EXPECT_EQ(manager_.not_ready_reason(), "");
  tls->not_ready = "caBundle does not trust the certificate";
  EXPECT_EQ(manager_.not_ready_reason(), "caBundle does not trust the certificate");
  cache->not_ready = "cluster cache not synced yet";
  EXPECT_EQ(manager_.not_ready_reason(), "cluster cache not synced yet");
  cache->not_ready.clear();
  tls->not_ready.clear();
  EXPECT_EQ(manager_.not_ready_reason(), "");
  manager_.stop();
  EXPECT_EQ(manager_.not_ready_reason(), "shutting down");
}

// Metrics are every component's, in order.
TEST_F(ManagerTest, MetricsConcatenateInOrder) {
  add("cache");
  add("tls");
  EXPECT_EQ(manager_.metrics(), "cache_up 1\ntls_up 1\n");
}

// Every component gets the one deadline; one that misses it makes stop() false, and the ones
// after it are still stopped.
TEST_F(ManagerTest, StopPassesTheDeadlineAndReportsAMiss) {
  auto cache = add("cache");
  auto reports = add("reports");
  auto server = add("server");
  reports->stops_in_time = false;
  ASSERT_TRUE(manager_.start());
  const steady_clock::time_point deadline = steady_clock::now() + std::chrono::seconds(30);
  EXPECT_FALSE(manager_.stop(deadline));
  EXPECT_EQ(server->stop_deadline, deadline);
  EXPECT_EQ(reports->stop_deadline, deadline);
  EXPECT_EQ(cache->stop_deadline, deadline);
  EXPECT_EQ(journal_.back(), "stop cache");
  EXPECT_TRUE(manager_.stop(deadline));  // idempotent: nothing stopped twice
  EXPECT_EQ(journal_.size(), 6U);
}

}  // namespace
}  // namespace topoguard::runtime
