// The event loop's fairness between connections, on a plain-HTTP endpoint with a handler that
// records the order in which it is called; and the default number of loops.
#include "topoguard/http/tls_event_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "cpu_affinity.h"
#include "eventually.h"
#include "topoguard/http/byte_budget.h"

namespace topoguard::http {
namespace {

using namespace std::chrono_literals;

class Client {
 public:
  // From `source`, another loopback address, when given.
  explicit Client(int port, const char* source = nullptr) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    if (source != nullptr) {
      sockaddr_in local{};
      local.sin_family = AF_INET;
      ::inet_pton(AF_INET, source, &local.sin_addr);
      ::bind(fd_, reinterpret_cast<sockaddr*>(&local), sizeof(local));
    }
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
    const timeval limit{10, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit));
  }
  ~Client() { ::close(fd_); }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  [[nodiscard]] bool connected() const { return connected_; }
  bool send(const std::string& bytes) {
    return ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
           static_cast<ssize_t>(bytes.size());
  }
  // Reads until `responses` status lines have arrived (or the read times out).
  std::string read_responses(std::size_t responses) {
    std::string out;
    char buffer[4096];
    const auto count = [&out] {
      std::size_t found = 0;
      for (std::size_t at = out.find("HTTP/1.1 "); at != std::string::npos;
           at = out.find("HTTP/1.1 ", at + 1)) {
        ++found;
      }
      return found;
    };
    while (count() < responses) {
      const ssize_t n = ::recv(fd_, buffer, sizeof(buffer), 0);
      if (n <= 0) {
        break;
      }
      out.append(buffer, static_cast<std::size_t>(n));
    }
    return out;
  }

 private:
  int fd_;
  bool connected_ = false;
};

std::string get(const std::string& path) {
  return "GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n";
}

// A plain-HTTP server answering 200 to everything, with the given caps.
class CappedServer {
 public:
  CappedServer(std::size_t max_connections, std::size_t per_address, std::size_t threads) {
    EventServerOptions options;
    options.threads = threads;
    options.budget = budget_;
    std::vector<EventEndpoint> endpoints(1);
    endpoints[0].name = "test";
    endpoints[0].listen = {"127.0.0.1", 0};
    endpoints[0].handler = [](HttpRequest&, Responder) -> HandlerResult { return HttpResponse{}; };
    endpoints[0].on_error = [](int status, const std::string& message, const std::string&) {
      HttpResponse response;
      response.status = status;
      response.body = message;
      return response;
    };
    endpoints[0].max_connections = max_connections;
    endpoints[0].max_connections_per_address = per_address;
    server_ = std::make_unique<TlsEventServer>(options, std::move(endpoints));
    EXPECT_TRUE(server_->bind());
    EXPECT_TRUE(server_->start());
  }

  [[nodiscard]] int port() const { return server_->port(); }
  // Waits until the server holds `count` connections.
  bool holds(std::size_t count) const {
    return testing::eventually([&] { return server_->open_connections() == count; });
  }
  // Waits until the server's loops have read `bytes` request bytes, not yet answered.
  bool buffered(std::size_t bytes) const {
    return testing::eventually([&] { return budget_->used() >= bytes; });
  }

 private:
  std::shared_ptr<ByteBudget> budget_ = std::make_shared<ByteBudget>(128 * 1024 * 1024);
  std::unique_ptr<TlsEventServer> server_;
};

bool answered(Client& client) {
  return client.send(get("/")) && client.read_responses(1).rfind("HTTP/1.1 200", 0) == 0;
}

// At the cap a new client is served, and the connection idle longest (on whichever loop) is
// closed to make room; the others stay open.
TEST(ConnectionCapTest, LongestIdleConnectionMakesRoom) {
  CappedServer server(3, 100, 2);
  std::vector<std::unique_ptr<Client>> idle;
  for (std::size_t i = 1; i <= 3; ++i) {
    idle.push_back(std::make_unique<Client>(server.port()));
    ASSERT_TRUE(server.holds(i));
  }
  Client newcomer(server.port());
  EXPECT_TRUE(answered(newcomer));
  EXPECT_EQ(idle[0]->read_responses(1), "") << "the longest-idle connection is still open";
  EXPECT_TRUE(answered(*idle[1]));
  EXPECT_TRUE(answered(*idle[2]));
}

// A connection in the middle of a request is not idle: the idle one goes instead, and with none
// idle the newcomer is refused.
TEST(ConnectionCapTest, ConnectionsWithARequestUnderWayStay) {
  CappedServer server(2, 100, 1);
  Client sending(server.port());
  ASSERT_TRUE(server.holds(1));
  Client idle(server.port());
  ASSERT_TRUE(server.holds(2));
  const std::string request = get("/");
  ASSERT_TRUE(sending.send(request.substr(0, 10)));
  ASSERT_TRUE(server.buffered(10));  // the loop has read the first bytes
  Client first_newcomer(server.port());
  EXPECT_EQ(idle.read_responses(1), "") << "the idle connection is still open";
  ASSERT_TRUE(sending.send(request.substr(10)));
  EXPECT_EQ(sending.read_responses(1).rfind("HTTP/1.1 200", 0), 0U);
  // Now the first newcomer sends half a request: nothing is idle.
  const std::string half = request.substr(0, 10);
  ASSERT_TRUE(first_newcomer.send(half));
  ASSERT_TRUE(sending.send(half));
  ASSERT_TRUE(server.buffered(2 * half.size()));  // both halves read
  Client refused(server.port());
  EXPECT_EQ(refused.read_responses(1), "") << "a connection over the cap was served";
  ASSERT_TRUE(first_newcomer.send(request.substr(10)));
  EXPECT_EQ(first_newcomer.read_responses(1).rfind("HTTP/1.1 200", 0), 0U);
}

// One client address holds at most max_connections_per_address; another address is served.
TEST(ConnectionCapTest, ConnectionsPerAddressAreCapped) {
  CappedServer server(100, 2, 2);
  Client first(server.port(), "127.0.0.1");
  auto second = std::make_unique<Client>(server.port(), "127.0.0.1");
  ASSERT_TRUE(server.holds(2));
  Client third(server.port(), "127.0.0.1");
  EXPECT_EQ(third.read_responses(1), "") << "a third connection from one address was served";
  Client elsewhere(server.port(), "127.0.0.2");
  EXPECT_TRUE(answered(elsewhere));
  EXPECT_TRUE(answered(first));
  // A closed connection gives its address's place back.
  second.reset();
  ASSERT_TRUE(server.holds(2));
  Client again(server.port(), "127.0.0.1");
  EXPECT_TRUE(answered(again));
}

// One connection pipelines twelve requests; the loop is held by the first one until another
// connection's request has been sent. The pipelining connection yields after a few answers, so the
// other request is answered before the pipeline's last one (without the yield it came last).
TEST(TlsEventServerTest, PipeliningConnectionYieldsTheLoop) {
  std::mutex mutex;
  std::vector<std::string> order;
  std::condition_variable changed;
  bool stalling = false;    // guarded by mutex: the loop is inside /stall
  bool other_sent = false;  // guarded by mutex
  EventServerOptions options;
  options.threads = 1;
  std::vector<EventEndpoint> endpoints(1);
  endpoints[0].name = "test";
  endpoints[0].listen = {"127.0.0.1", 0};
  endpoints[0].handler = [&](HttpRequest& request, Responder) -> HandlerResult {
    std::unique_lock lock(mutex);
    if (request.path == "/stall") {
      stalling = true;
      changed.notify_all();
      changed.wait_for(lock, 10s, [&] { return other_sent; });
    }
    order.push_back(request.path);
    return HttpResponse{};
  };
  endpoints[0].on_error = [](int status, const std::string& message, const std::string&) {
    HttpResponse response;
    response.status = status;
    response.body = message;
    return response;
  };
  TlsEventServer server(options, std::move(endpoints));
  ASSERT_TRUE(server.bind());
  ASSERT_TRUE(server.start());

  Client pipelining(server.port());
  Client other(server.port());
  ASSERT_TRUE(pipelining.connected());
  ASSERT_TRUE(other.connected());
  // Both accepted and idle.
  ASSERT_TRUE(testing::eventually([&] { return server.open_connections() == 2; }));
  std::string pipeline = get("/stall");
  constexpr int kPipelined = 11;
  for (int i = 1; i <= kPipelined; ++i) {
    pipeline += get("/a" + std::to_string(i));
  }
  ASSERT_TRUE(pipelining.send(pipeline));
  {
    std::unique_lock lock(mutex);
    ASSERT_TRUE(changed.wait_for(lock, 10s, [&] { return stalling; }));
  }
  // On loopback the bytes are in the server's socket when send() returns.
  const bool sent = other.send(get("/other"));
  {
    std::lock_guard lock(mutex);
    other_sent = true;
  }
  changed.notify_all();
  ASSERT_TRUE(sent);

  const std::string answers = pipelining.read_responses(kPipelined + 1);
  EXPECT_EQ(other.read_responses(1).rfind("HTTP/1.1 200", 0), 0U);
  std::lock_guard lock(mutex);
  ASSERT_EQ(order.size(), static_cast<std::size_t>(kPipelined + 2)) << answers;
  const auto position = [&order](const std::string& path) {
    return std::find(order.begin(), order.end(), path) - order.begin();
  };
  EXPECT_EQ(position("/stall"), 0);
  EXPECT_LT(position("/other"), position("/a" + std::to_string(kPipelined)));
  for (int i = 2; i <= kPipelined; ++i) {
    EXPECT_LT(position("/a" + std::to_string(i - 1)), position("/a" + std::to_string(i)));
  }
}

// The default loop count follows the calling thread's affinity mask, not the machine's CPUs.
TEST(EventLoopDefaultsTest, TwoLoopsPerCpuOfTheAffinityMask) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  ASSERT_EQ(::sched_getaffinity(0, sizeof(allowed), &allowed), 0);
  EXPECT_EQ(usable_cpus(), static_cast<std::size_t>(CPU_COUNT(&allowed)));
  EXPECT_EQ(default_event_loops(), 2 * usable_cpus());

  std::size_t one_cpu_usable = 0;
  std::size_t one_cpu_loops = 0;
  std::thread on_one_cpu([&] {
    ASSERT_TRUE(topoguard::testing::pin_to_first_allowed_cpu());
    one_cpu_usable = usable_cpus();
    one_cpu_loops = default_event_loops();
  });
  on_one_cpu.join();
  EXPECT_EQ(one_cpu_usable, 1U);
  EXPECT_EQ(one_cpu_loops, 2U);
}

}  // namespace
}  // namespace topoguard::http
