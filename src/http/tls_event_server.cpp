#include "topoguard/http/tls_event_server.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <exception>
#include <mutex>
#include <limits>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>

#include "tls_native.h"
#include "topoguard/common/free_memory.h"

namespace topoguard::http {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t kReadChunk = 16 * 1024;  // one full TLS record
constexpr int kMaxEvents = 128;
constexpr int kAcceptsPerWakeup = 64;  // then serve the connections already open
constexpr auto kTick = std::chrono::milliseconds(250);  // timeout sweep and accept-pause check
constexpr auto kLingerTime = std::chrono::seconds(2);
constexpr auto kAcceptPause = std::chrono::milliseconds(100);
// Per idle connection: what a typical review needs. More, kept on thousands of idle
// connections, would be memory no budget counts.
constexpr std::size_t kKeptBufferCapacity = 16 * 1024;
// Requests a connection has answered at once in one turn before it yields the loop to the other
// connections (a pipelining or fast client cannot keep a loop to itself; answers computed on the
// loop, such as small admission decisions, are bounded per turn).
constexpr std::size_t kAnswersPerTurn = 4;
// After this many connections have closed, freed memory is handed back to the system (the
// allocator keeps freed heap otherwise: a flood of 20,000 TLS connections would stay in RSS).
constexpr std::size_t kClosesBetweenTrims = 256;
// Evictions asked of other loops and not yet done, per port, beyond which a connection over the
// cap is refused: the cap is exceeded by at most this many while they are carried out.
constexpr std::size_t kMaxPendingEvictions = 64;

using TimeRep = Clock::rep;
constexpr TimeRep kNoIdle = std::numeric_limits<TimeRep>::max();

const char* reason_phrase(int status) {
  switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 413: return "Content Too Large";
    case 417: return "Expectation Failed";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Unknown";
  }
}

// Into `out`, whose capacity is reused from the connection's previous response.
void render_response(const HttpResponse& response, bool head_only, bool keep_alive,
                     int minor_version, std::string& out) {
  out.clear();
  out.reserve(160 + response.body.size());
  out += "HTTP/1.1 ";
  out += std::to_string(response.status);
  out += ' ';
  out += reason_phrase(response.status);
  out += "\r\nContent-Type: ";
  out += response.content_type;
  out += "\r\nContent-Length: ";
  out += std::to_string(response.body.size());
  out += "\r\n";
  for (const auto& [name, value] : response.headers) {
    out += name;
    out += ": ";
    out += value;
    out += "\r\n";
  }
  if (!keep_alive) {
    out += "Connection: close\r\n";
  } else if (minor_version == 0) {
    out += "Connection: keep-alive\r\n";
  }
  out += "\r\n";
  if (!head_only) {
    out += response.body;
  }
}

void report(const EventLog& log, EventSeverity severity, std::string_view message, int os_error) {
  if (log) {
    log(severity, message, os_error);
  }
}

enum class Phase { kHandshake, kReading, kDeciding, kWriting, kLingering };

// A bound port and what serves it.
struct Listener {
  EventEndpoint endpoint;
  std::size_t index = 0;  // in the server's list
  int fd = -1;
  int port = 0;
  std::atomic<std::size_t> open{0};  // connections of this endpoint
  std::atomic<std::size_t> evictions_pending{0};  // asked of other loops, not yet done

  // Counts a connection from `address`; false, counting nothing, when that address already
  // has max_connections_per_address.
  bool admit(const std::string& address) {
    std::lock_guard lock(address_mutex);
    std::size_t& count = by_address[address];
    if (count >= endpoint.max_connections_per_address) {
      if (count == 0) {
        by_address.erase(address);
      }
      return false;
    }
    ++count;
    return true;
  }
  void release(const std::string& address) {
    std::lock_guard lock(address_mutex);
    const auto found = by_address.find(address);
    if (found != by_address.end() && --found->second == 0) {
      by_address.erase(found);
    }
  }

  std::mutex address_mutex;
  std::unordered_map<std::string, std::size_t> by_address;  // guarded by address_mutex
};

// The client's address as a map key: the 16 bytes of an IPv6 address, IPv4 as IPv4-mapped,
// so that one client counts once whichever family it connected with.
std::string address_key(const sockaddr_storage& peer) {
  in6_addr address{};
  if (peer.ss_family == AF_INET6) {
    address = reinterpret_cast<const sockaddr_in6*>(&peer)->sin6_addr;
  } else if (peer.ss_family == AF_INET) {
    address.s6_addr[10] = 0xff;
    address.s6_addr[11] = 0xff;
    std::memcpy(&address.s6_addr[12], &reinterpret_cast<const sockaddr_in*>(&peer)->sin_addr, 4);
  }
  return std::string(reinterpret_cast<const char*>(address.s6_addr), sizeof(address.s6_addr));
}

// An accepted socket on its way to a loop, counted against its address; closed and uncounted
// unless a Connection takes it over.
struct Accepted {
  Accepted(int socket, Listener& port, std::string peer)
      : fd(socket), listener(&port), address(std::move(peer)) {}
  Accepted(Accepted&& other) noexcept
      : fd(std::exchange(other.fd, -1)), listener(other.listener),
        address(std::move(other.address)) {}
  Accepted& operator=(Accepted&&) = delete;
  Accepted(const Accepted&) = delete;
  Accepted& operator=(const Accepted&) = delete;
  ~Accepted() {
    if (fd >= 0) {
      ::close(fd);
      listener->release(address);
    }
  }

  int fd;
  Listener* listener;
  std::string address;
};

struct Connection {
  Connection(Accepted&& accepted, SSL* tls, const HttpParseLimits& limits)
      : fd(std::exchange(accepted.fd, -1)), ssl(tls), listener(*accepted.listener),
        address(std::move(accepted.address)), parser(limits) {
    ++listener.open;
  }
  ~Connection() {
    SSL_free(ssl);
    ::close(fd);
    --listener.open;
    listener.release(address);
  }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  int fd;
  SSL* ssl;  // nullptr on a plain-HTTP endpoint
  Listener& listener;
  std::string address;  // address_key() of the client
  // While idle (no byte of a request received: new, or between requests): its place in the
  // loop's list of idle connections of its port, oldest first (the one closed when the port is
  // full and a new client comes).
  Connection* idle_prev = nullptr;
  Connection* idle_next = nullptr;
  bool idle = false;
  Clock::time_point idle_since;
  Phase phase = Phase::kHandshake;
  std::string in;    // received request bytes; those before in_start are consumed
  std::size_t in_start = 0;
  std::string out;   // the response being written
  std::size_t out_sent = 0;
  HttpRequestReader parser;
  bool readable = false;  // the socket may have bytes OpenSSL has not read yet
  bool yielded = false;   // its turn ended at kAnswersPerTurn; resumed later in the pass
  bool continue_sent = false;
  bool request_started = false;  // bytes of the next request have arrived: its deadline runs
  bool close_after_write = false;
  std::size_t served = 0;
  // While a decision is pending (Phase::kDeciding): its number, when the fallback answers, and
  // how the answer is to be sent.
  std::uint64_t decision = 0;
  std::function<std::optional<HttpResponse>()> fallback;
  bool answer_head_only = false;
  bool answer_keep_alive = false;
  int answer_minor_version = 1;
  std::size_t buffered = 0;  // unconsumed and parser-held bytes counted in the server's total
  Clock::time_point deadline;
  std::uint32_t interest = EPOLLIN;
  bool closed = false;
};

}  // namespace

struct TlsEventServer::Impl {
  class Worker;

  EventServerOptions options;
  std::vector<std::unique_ptr<Listener>> listeners;
  std::vector<std::unique_ptr<Worker>> workers;
  std::vector<std::thread> threads;
  std::atomic<std::size_t> next_worker{0};
  std::shared_ptr<ByteBudget> budget;  // request bytes held by connections and decisions
  std::atomic<std::size_t> closes_since_trim{0};

  // Held while accepting, so drain() can take the listener away between two accepts.
  std::mutex accept_mutex;
  std::atomic<bool> draining{false};
  std::atomic<bool> accepting_closed{false};
  std::atomic<bool> stop_now{false};

  std::mutex finished_mutex;
  std::condition_variable finished_signal;
  std::size_t running = 0;  // guarded by finished_mutex

  // Hands an accepted socket to the next worker, round robin (accepting is rare; requests are
  // not, so spreading connections evenly spreads the work).
  void dispatch(Accepted&& accepted, Worker& acceptor);
  // At the port's cap: closes the port's longest-idle connection, on whichever loop holds it
  // (at once on `acceptor`, else by a message to that loop). False when no connection of the
  // port is idle, or too many evictions are already under way.
  bool evict_idle(Listener& listener, Worker& acceptor);
  [[nodiscard]] Listener* listener_of(const void* tag) const {
    for (const auto& listener : listeners) {
      if (tag == listener.get()) {
        return listener.get();
      }
    }
    return nullptr;
  }
  void worker_finished();
  void stop_workers();
};

class TlsEventServer::Impl::Worker {
 public:
  explicit Worker(Impl& server)
      : server_(server), idle_(server.listeners.size()),
        oldest_idle_(std::make_unique<std::atomic<TimeRep>[]>(server.listeners.size())) {
    for (std::size_t i = 0; i < server.listeners.size(); ++i) {
      oldest_idle_[i] = kNoIdle;
    }
  }
  ~Worker() {
    if (wake_fd_ >= 0) {
      ::close(wake_fd_);
    }
    if (epoll_fd_ >= 0) {
      ::close(epoll_fd_);
    }
  }
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  Status init() {
    epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
    wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (epoll_fd_ < 0 || wake_fd_ < 0) {
      return io_error("cannot create the event loop");
    }
    epoll_event wake{};
    wake.events = EPOLLIN;
    wake.data.ptr = &wake_fd_;
    if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &wake) != 0 || !listen()) {
      return io_error("cannot register with the event loop");
    }
    return Ok{};
  }

  // From any thread: adopt this accepted socket.
  void post(Accepted&& accepted) {
    bool was_empty = false;
    {
      std::lock_guard lock(inbox_mutex_);
      was_empty = inbox_.empty() && answers_.empty() && evictions_.empty();
      inbox_.push_back(std::move(accepted));
    }
    // One wake-up per batch: a non-empty inbox has one pending, and on_wake() takes everything.
    if (was_empty) {
      wake();
    }
  }

  // From any thread: close the longest-idle connection of that port, if one is still idle.
  void post_eviction(Listener& listener) {
    bool was_empty = false;
    {
      std::lock_guard lock(inbox_mutex_);
      was_empty = inbox_.empty() && answers_.empty() && evictions_.empty();
      evictions_.push_back(&listener);
    }
    if (was_empty) {
      wake();
    }
  }

  // From any thread: since when this loop's longest-idle connection of that port has been
  // idle (kNoIdle: none is).
  [[nodiscard]] TimeRep oldest_idle(const Listener& listener) const {
    return oldest_idle_[listener.index].load(std::memory_order_relaxed);
  }

  // On this loop's thread: closes the port's longest-idle connection; false when none is idle.
  bool evict_oldest(const Listener& listener) {
    Connection* oldest = idle_[listener.index].head;
    if (oldest == nullptr) {
      return false;
    }
    close(*oldest);
    return true;
  }

  // From any thread: the answer to decision `decision` (dropped if its connection is gone or
  // has already been answered by the fallback).
  void post_answer(std::uint64_t decision, HttpResponse response) {
    bool was_empty = false;
    {
      std::lock_guard lock(inbox_mutex_);
      was_empty = inbox_.empty() && answers_.empty() && evictions_.empty();
      answers_.emplace_back(decision, std::move(response));
    }
    if (was_empty) {
      wake();
    }
  }

  void wake() {
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t written = ::write(wake_fd_, &one, sizeof(one));
  }

  // Called by drain() under the accept mutex.
  void forget_listener() {
    if (listening_) {
      for (const auto& listener : server_.listeners) {
        ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, listener->fd, nullptr);
      }
      listening_ = false;
    }
  }

  void adopt(Accepted&& accepted) {
    const int fd = accepted.fd;
    const Listener& listener = *accepted.listener;
    const int yes = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof(yes));
    SSL* ssl = nullptr;
    if (listener.endpoint.context) {
      ssl = SSL_new(listener.endpoint.context->native().context);
      if (ssl == nullptr || SSL_set_fd(ssl, fd) != 1) {
        SSL_free(ssl);
        ERR_clear_error();
        report(server_.options.log, EventSeverity::kError,
               "cannot create a TLS session for a new connection", 0);
        return;  // the Accepted destructor closes it
      }
      SSL_set_accept_state(ssl);
    }
    auto connection =
        std::make_unique<Connection>(std::move(accepted), ssl, server_.options.limits);
    connection->deadline = Clock::now() + server_.options.read_timeout;
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.ptr = connection.get();
    if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &event) != 0) {
      report(server_.options.log, EventSeverity::kError, "cannot watch a new connection", errno);
      return;  // the Connection destructor closes it
    }
    Connection* key = connection.get();
    connections_.emplace(key, std::move(connection));
    if (ssl == nullptr) {
      key->phase = Phase::kReading;
    }
    // Idle until a request's first byte: a connection that never sends one (not even its TLS
    // handshake) is the first to make room at the cap.
    mark_idle(*key);
  }

  void run() {
    epoll_event events[kMaxEvents];
    auto next_tick = Clock::now() + kTick;
    while (!server_.stop_now) {
      // A connection that yielded may hold requests already read: look for events, don't wait.
      const int ready = ::epoll_wait(epoll_fd_, events, kMaxEvents,
                                     yielded_.empty() ? static_cast<int>(kTick.count()) : 0);
      if (ready < 0 && errno != EINTR) {
        report(server_.options.log, EventSeverity::kError, "event loop failed", errno);
        break;
      }
      for (int i = 0; i < ready; ++i) {
        void* tag = events[i].data.ptr;
        if (tag == &wake_fd_) {
          on_wake();
        } else if (Listener* listener = server_.listener_of(tag)) {
          accept_ready(*listener);
        } else {
          auto* connection = static_cast<Connection*>(tag);
          if (connection->phase == Phase::kDeciding) {
            if ((events[i].events & (EPOLLHUP | EPOLLERR)) != 0) {
              close(*connection);  // nobody left to answer
            } else {
              // Bytes sent before the answer (pipelining): they wait in the socket until the
              // answer is sent; until then only a hang-up is reported.
              connection->readable = true;
              watch(*connection, 0);
            }
          } else if (!connection->closed) {
            // A hang-up or error is "readable" too: the failing read closes the connection.
            connection->readable = connection->readable ||
                                   (events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) != 0;
            take_turn(*connection);
          }
        }
      }
      resume_yielded();
      const auto now = Clock::now();
      if (now >= next_tick) {
        on_tick(now);
        next_tick = now + kTick;
      }
      release_closed();
      if (server_.draining && server_.accepting_closed && connections_.empty() && inbox_empty()) {
        break;
      }
    }
    for (auto& [key, connection] : connections_) {
      ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, connection->fd, nullptr);
    }
    for (std::size_t i = 0; i < idle_.size(); ++i) {
      idle_[i] = IdleList{};
      publish_oldest(i);
    }
    connections_.clear();
    server_.worker_finished();
  }

 private:
  static Error io_error(const std::string& message) {
    Error error;
    error.code = ErrorCode::kIo;
    error.message = message + ": " + std::strerror(errno);
    return error;
  }

  bool listen() {
    bool all = true;
    for (const auto& listener : server_.listeners) {
      epoll_event event{};
      // EPOLLEXCLUSIVE: one waiting worker is woken per new connection, not all of them.
      event.events = EPOLLIN | EPOLLEXCLUSIVE;
      event.data.ptr = listener.get();
      all = ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, listener->fd, &event) == 0 && all;
    }
    listening_ = all;
    return all;
  }

  bool inbox_empty() {
    std::lock_guard lock(inbox_mutex_);
    return inbox_.empty();
  }

  // An idle connection (no byte of a request received yet: new, or between requests) goes to the
  // back of its port's list; mark_busy() takes it out.
  void mark_idle(Connection& connection) {
    if (connection.idle) {
      return;
    }
    IdleList& list = idle_[connection.listener.index];
    connection.idle = true;
    connection.idle_since = Clock::now();
    connection.idle_prev = list.tail;
    connection.idle_next = nullptr;
    if (list.tail != nullptr) {
      list.tail->idle_next = &connection;
    } else {
      list.head = &connection;
      publish_oldest(connection.listener.index);
    }
    list.tail = &connection;
  }

  void mark_busy(Connection& connection) {
    if (!connection.idle) {
      return;
    }
    IdleList& list = idle_[connection.listener.index];
    connection.idle = false;
    (connection.idle_prev != nullptr ? connection.idle_prev->idle_next : list.head) =
        connection.idle_next;
    (connection.idle_next != nullptr ? connection.idle_next->idle_prev : list.tail) =
        connection.idle_prev;
    if (connection.idle_prev == nullptr) {
      publish_oldest(connection.listener.index);
    }
    connection.idle_prev = nullptr;
    connection.idle_next = nullptr;
  }

  void publish_oldest(std::size_t listener) {
    const Connection* head = idle_[listener].head;
    oldest_idle_[listener].store(
        head != nullptr ? head->idle_since.time_since_epoch().count() : kNoIdle,
        std::memory_order_relaxed);
  }

  void on_wake() {
    std::uint64_t count = 0;
    [[maybe_unused]] const ssize_t got = ::read(wake_fd_, &count, sizeof(count));
    std::vector<Accepted> accepted;
    std::vector<std::pair<std::uint64_t, HttpResponse>> answers;
    std::vector<Listener*> evictions;
    {
      std::lock_guard lock(inbox_mutex_);
      accepted.swap(inbox_);
      answers.swap(answers_);
      evictions.swap(evictions_);
    }
    for (Listener* listener : evictions) {
      evict_oldest(*listener);
      --listener->evictions_pending;
    }
    for (Accepted& socket : accepted) {
      adopt(std::move(socket));
    }
    for (auto& [decision, response] : answers) {
      const auto waiting = deciding_.find(decision);
      if (waiting != deciding_.end()) {
        Connection& connection = *waiting->second;
        deliver(connection, response);
        take_turn(connection);
      }
    }
  }

  void accept_ready(Listener& listener) {
    std::lock_guard lock(server_.accept_mutex);
    if (!listening_) {
      return;  // drain() took the listener away after this event was queued
    }
    for (int i = 0; i < kAcceptsPerWakeup; ++i) {
      sockaddr_storage peer{};
      socklen_t peer_size = sizeof(peer);
      const int fd = ::accept4(listener.fd, reinterpret_cast<sockaddr*>(&peer), &peer_size,
                               SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd >= 0) {
        std::string address = address_key(peer);
        if (!listener.admit(address)) {
          ::close(fd);  // this client has its share of the port: closing costs least
          continue;
        }
        Accepted accepted(fd, listener, std::move(address));
        // At the cap a client that keeps connections idle must not lock out a new one: the
        // longest-idle connection makes room (a client reconnects as after a keep-alive timeout).
        if (listener.open.load() >= listener.endpoint.max_connections &&
            !server_.evict_idle(listener, *this)) {
          continue;  // nothing idle to close: refused (the Accepted destructor closes it)
        }
        server_.dispatch(std::move(accepted), *this);
        continue;
      }
      if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO) {
        continue;
      }
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        // Out of descriptors or memory: stop listening for a moment instead of spinning on a
        // level-triggered listener; open connections keep being served.
        report(server_.options.log, EventSeverity::kWarn,
               "cannot accept connections; pausing accept", errno);
        forget_listener();
        accept_paused_until_ = Clock::now() + kAcceptPause;
      } else if (errno != EAGAIN && errno != EWOULDBLOCK) {
        report(server_.options.log, EventSeverity::kError, "accept failed", errno);
      }
      return;
    }
  }

  void on_tick(Clock::time_point now) {
    if (!listening_ && accept_paused_until_ && now >= *accept_paused_until_) {
      std::lock_guard lock(server_.accept_mutex);
      accept_paused_until_.reset();
      if (!server_.draining) {
        listen();
      }
    }
    for (auto& [key, connection] : connections_) {
      if (connection->closed || now < connection->deadline) {
        continue;
      }
      if (connection->phase == Phase::kDeciding) {
        std::optional<HttpResponse> fallback =
            connection->fallback ? connection->fallback() : std::nullopt;
        if (fallback) {
          deliver(*connection, *fallback);
          take_turn(*connection);
        } else if (connection->fallback) {
          // The decision won the race: its answer is already on its way to on_wake().
          connection->fallback = nullptr;
          connection->deadline = now + server_.options.write_timeout;
        } else {
          close(*connection);  // the decided answer never came
        }
      } else if (connection->phase == Phase::kReading && connection->request_started) {
        time_out(*connection);
        take_turn(*connection);
      } else {
        close(*connection);  // handshake, response, linger or idle period ran out
      }
    }
    // Freed memory goes back to the system after many closes, and when a burst of large
    // requests is over (the allocator would keep what they freed as the process's own).
    if ((server_.closes_since_trim.load() >= kClosesBetweenTrims &&
         server_.closes_since_trim.exchange(0) >= kClosesBetweenTrims) ||
        server_.budget->burst_ended()) {
      release_free_memory();
    }
  }

  void release_closed() {
    std::erase_if(yielded_, [](const Connection* connection) { return connection->closed; });
    for (Connection* connection : closed_) {
      connections_.erase(connection);
    }
    closed_.clear();
  }

  void close(Connection& connection) {
    if (connection.closed) {
      return;
    }
    connection.closed = true;
    mark_busy(connection);
    if (connection.phase == Phase::kDeciding) {
      deciding_.erase(connection.decision);
    }
    drop_input(connection);
    ++server_.closes_since_trim;
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, connection.fd, nullptr);
    closed_.push_back(&connection);
    ERR_clear_error();  // leave no error of this connection to the next one on this thread
  }

  void watch(Connection& connection, std::uint32_t events) {
    if (connection.interest == events) {
      return;
    }
    epoll_event event{};
    event.events = events;
    event.data.ptr = &connection;
    if (::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, connection.fd, &event) != 0) {
      close(connection);
      return;
    }
    connection.interest = events;
  }

  // After a plain read or write that did not complete: wait for the socket, or give up on it.
  bool await_socket(Connection& connection, std::uint32_t events) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
      if (events == EPOLLIN) {
        connection.readable = false;
      }
      watch(connection, events);
      return false;
    }
    close(connection);
    return false;
  }

  // After an OpenSSL call that did not complete: wait for the socket, or give up on it.
  bool await_tls(Connection& connection, int result) {
    switch (SSL_get_error(connection.ssl, result)) {
      case SSL_ERROR_WANT_READ:
        connection.readable = false;
        watch(connection, EPOLLIN);
        return false;
      case SSL_ERROR_WANT_WRITE:
        watch(connection, EPOLLOUT);
        return false;
      default:  // peer closed, reset, or a TLS failure (e.g. a refused client certificate)
        close(connection);
        return false;
    }
  }

  // One turn of a connection on this loop: what it has ready is served, up to kAnswersPerTurn
  // answers; then it yields and resumes after the pass's other connections (resume_yielded()).
  void take_turn(Connection& connection) {
    answered_in_turn_ = 0;
    advance(connection);
  }

  void yield_turn(Connection& connection) {
    if (!connection.yielded) {
      connection.yielded = true;
      yielded_.push_back(&connection);
    }
  }

  void resume_yielded() {
    std::vector<Connection*> resumed;
    resumed.swap(yielded_);
    for (Connection* connection : resumed) {
      connection->yielded = false;
      if (!connection->closed) {
        take_turn(*connection);
      }
    }
  }

  // Runs the connection's state machine until it has to wait for the socket or yields.
  void advance(Connection& connection) {
    bool progressed = true;
    while (progressed && !connection.closed) {
      switch (connection.phase) {
        case Phase::kHandshake:
          progressed = step_handshake(connection);
          break;
        case Phase::kReading:
          progressed = step_read(connection);
          break;
        case Phase::kDeciding:
          progressed = false;  // the answer comes from on_wake() or the fallback
          break;
        case Phase::kWriting:
          progressed = step_write(connection);
          break;
        case Phase::kLingering:
          progressed = step_linger(connection);
          break;
      }
    }
  }

  bool step_handshake(Connection& connection) {
    ERR_clear_error();
    const int result = SSL_do_handshake(connection.ssl);
    if (result != 1) {
      return await_tls(connection, result);
    }
    connection.phase = Phase::kReading;
    connection.readable = true;  // the first request may have come with the handshake
    connection.deadline = Clock::now() + server_.options.keep_alive_timeout;
    return true;
  }

  bool step_read(Connection& connection) {
    if (answered_in_turn_ >= kAnswersPerTurn) {
      yield_turn(connection);
      return false;
    }
    if (connection.in.size() > connection.in_start) {
      const HttpParseState state =
          connection.parser.parse(std::string_view(connection.in).substr(connection.in_start));
      connection.in_start += connection.parser.consumed();
      count_buffered(connection);
      switch (state) {
        case HttpParseState::kComplete:
          respond(connection);
          return true;
        case HttpParseState::kError:
          reject(connection);
          return true;
        case HttpParseState::kIncomplete:
          if (connection.parser.awaits_continue() && !connection.continue_sent) {
            connection.continue_sent = true;
            connection.out = "HTTP/1.1 100 Continue\r\n\r\n";
            start_writing(connection, true);
            return true;
          }
          break;
      }
    }
    // Without this check every response would cost a read(2) that finds nothing.
    if (!connection.readable && (connection.ssl == nullptr || SSL_has_pending(connection.ssl) == 0)) {
      watch(connection, EPOLLIN);
      return false;
    }
    int received = 0;
    if (connection.ssl != nullptr) {
      ERR_clear_error();
      received = SSL_read(connection.ssl, scratch_, static_cast<int>(sizeof(scratch_)));
      if (received <= 0) {
        return await_tls(connection, received);
      }
    } else {
      const ssize_t got = ::recv(connection.fd, scratch_, sizeof(scratch_), 0);
      if (got == 0) {
        close(connection);
        return false;
      }
      if (got < 0) {
        return await_socket(connection, EPOLLIN);
      }
      received = static_cast<int>(got);
    }
    if (!connection.request_started) {
      // The whole request, however it trickles in, must arrive within the read timeout.
      mark_busy(connection);
      connection.request_started = true;
      connection.deadline = Clock::now() + server_.options.read_timeout;
    }
    connection.in.erase(0, connection.in_start);  // once per read: linear in the bytes read
    connection.in_start = 0;
    connection.in.append(scratch_, static_cast<std::size_t>(received));
    if (!count_buffered(connection)) {
      refuse_overload(connection);
    }
    return true;
  }

  // Brings the byte budget up to date with this connection's request bytes; false when the
  // budget is then exceeded for a holder of its size.
  bool count_buffered(Connection& connection) {
    return server_.budget->update(connection.buffered, connection.in.size() -
                                                           connection.in_start +
                                                           connection.parser.held_bytes());
  }

  void refuse_overload(Connection& connection) {
    HttpResponse response = connection.listener.endpoint.on_error(
        503, "the server holds too many request bytes right now; retry", connection.parser.path());
    render_response(response, false, false, 1, connection.out);
    drop_input(connection);
    start_writing(connection, false);
  }

  // Forgets the request bytes of a connection that is going to close.
  void drop_input(Connection& connection) {
    connection.in.clear();
    connection.in_start = 0;
    connection.parser.reset();
    count_buffered(connection);
  }

  void respond(Connection& connection) {
    HttpRequest& request = connection.parser.request();
    connection.answer_keep_alive = request.keep_alive && !server_.draining &&
                                   connection.served + 1 < server_.options.keep_alive_max_requests;
    connection.answer_head_only = request.method == "HEAD";
    connection.answer_minor_version = request.minor_version;
    const std::uint64_t decision = ++decisions_;
    Responder responder = [this, decision](HttpResponse response) {
      post_answer(decision, std::move(response));
    };
    HandlerResult result;
    const HttpErrorResponder& on_error = connection.listener.endpoint.on_error;
    try {
      result = connection.listener.endpoint.handler(request, std::move(responder));
    } catch (const std::exception& error) {
      result = on_error(500, std::string("internal error: ") + error.what(), request.path);
    } catch (...) {
      result = on_error(500, "internal error", request.path);
    }
    if (connection.in_start == connection.in.size()) {
      connection.in.clear();
      connection.in_start = 0;
      if (connection.in.capacity() > kKeptBufferCapacity) {
        connection.in.shrink_to_fit();
      }
    }
    connection.parser.reset();
    count_buffered(connection);
    connection.continue_sent = false;
    connection.request_started = connection.in.size() > connection.in_start;
    ++connection.served;
    if (auto* deferred = std::get_if<DeferredAnswer>(&result)) {
      connection.phase = Phase::kDeciding;
      connection.decision = decision;
      connection.fallback = std::move(deferred->fallback);
      connection.deadline = deferred->answer_by;
      deciding_.emplace(decision, &connection);
      // Reading stays armed: API server clients send nothing while they wait, and disarming
      // would cost two epoll_ctl calls per request; run() disarms it if bytes do arrive, so
      // until then nothing is left to read.
      connection.readable = false;
      return;
    }
    ++answered_in_turn_;
    deliver(connection, std::get<HttpResponse>(result));
  }

  // Sends the answer to the request the connection has been waiting on.
  void deliver(Connection& connection, const HttpResponse& response) {
    if (connection.phase == Phase::kDeciding) {
      deciding_.erase(connection.decision);
      connection.fallback = nullptr;
    } else {
      connection.readable = true;  // more bytes, if any, came while the request was answered
    }
    render_response(response, connection.answer_head_only, connection.answer_keep_alive,
                    connection.answer_minor_version, connection.out);
    start_writing(connection, connection.answer_keep_alive);
  }

  // A request that has not fully arrived within the read timeout: 408, then close.
  void time_out(Connection& connection) {
    HttpResponse response = connection.listener.endpoint.on_error(
        408, "the request did not arrive within the read timeout", connection.parser.path());
    render_response(response, false, false, 1, connection.out);
    drop_input(connection);
    start_writing(connection, false);
  }

  // A request the parser refused: answer it, then close (what follows it cannot be trusted).
  void reject(Connection& connection) {
    HttpResponse response = connection.listener.endpoint.on_error(connection.parser.error_status(),
                                             connection.parser.error_message(),
                                             connection.parser.path());
    render_response(response, false, false, 1, connection.out);
    drop_input(connection);
    start_writing(connection, false);
  }

  void start_writing(Connection& connection, bool keep_alive) {
    connection.out_sent = 0;
    connection.close_after_write = !keep_alive;
    connection.phase = Phase::kWriting;
    connection.deadline = Clock::now() + server_.options.write_timeout;
  }

  bool step_write(Connection& connection) {
    const char* data = connection.out.data() + connection.out_sent;
    const std::size_t size = connection.out.size() - connection.out_sent;
    int written = 0;
    if (connection.ssl != nullptr) {
      ERR_clear_error();
      written = SSL_write(connection.ssl, data, static_cast<int>(size));
      if (written <= 0) {
        return await_tls(connection, written);
      }
    } else {
      const ssize_t sent = ::send(connection.fd, data, size, MSG_NOSIGNAL);
      if (sent < 0) {
        return await_socket(connection, EPOLLOUT);
      }
      written = static_cast<int>(sent);
    }
    connection.out_sent += static_cast<std::size_t>(written);
    if (connection.out_sent < connection.out.size()) {
      return true;
    }
    connection.out.clear();
    if (connection.out.capacity() > kKeptBufferCapacity) {
      connection.out.shrink_to_fit();
    }
    if (connection.close_after_write) {
      start_lingering(connection);
      return true;
    }
    connection.phase = Phase::kReading;
    connection.deadline = Clock::now() + (connection.request_started
                                              ? server_.options.read_timeout
                                              : server_.options.keep_alive_timeout);
    if (!connection.request_started) {
      mark_idle(connection);
    }
    return true;
  }

  // Close the TLS session and our sending side, then read and discard until the client
  // closes: closing with unread bytes would reset the connection and could destroy the
  // response before the client has read it.
  void start_lingering(Connection& connection) {
    if (connection.ssl != nullptr) {
      ERR_clear_error();
      SSL_shutdown(connection.ssl);
      // An idle session needs no buffers (SSL_MODE_RELEASE_BUFFERS frees them between records).
    }
    ::shutdown(connection.fd, SHUT_WR);
    connection.phase = Phase::kLingering;
    connection.deadline = Clock::now() + kLingerTime;
    watch(connection, EPOLLIN);
  }

  bool step_linger(Connection& connection) {
    const ssize_t got = ::recv(connection.fd, scratch_, sizeof(scratch_), 0);
    if (got > 0) {
      return true;
    }
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
      return false;
    }
    close(connection);
    return false;
  }

  Impl& server_;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;
  std::size_t answered_in_turn_ = 0;  // in the current turn; reset by take_turn(), counted by respond()
  std::vector<Connection*> yielded_;  // turns to resume in this pass (Connection::yielded)
  // Read by on_tick() and accept_ready(), written by forget_listener() from drain()'s thread.
  std::atomic<bool> listening_{false};
  std::uint64_t decisions_ = 0;
  std::unordered_map<std::uint64_t, Connection*> deciding_;  // decision -> connection awaiting it
  struct IdleList {
    Connection* head = nullptr;  // idle longest
    Connection* tail = nullptr;
  };
  std::vector<IdleList> idle_;  // per listener index
  // Per listener index: idle_since of the list's head, for evict_idle() on other threads.
  std::unique_ptr<std::atomic<TimeRep>[]> oldest_idle_;
  std::optional<Clock::time_point> accept_paused_until_;
  std::unordered_map<Connection*, std::unique_ptr<Connection>> connections_;
  std::vector<Connection*> closed_;
  std::mutex inbox_mutex_;
  std::vector<Accepted> inbox_;                                  // guarded by inbox_mutex_
  std::vector<std::pair<std::uint64_t, HttpResponse>> answers_;  // guarded by inbox_mutex_
  std::vector<Listener*> evictions_;                             // guarded by inbox_mutex_
  char scratch_[kReadChunk];
};

void TlsEventServer::Impl::dispatch(Accepted&& accepted, Worker& acceptor) {
  Worker& target = *workers[next_worker.fetch_add(1) % workers.size()];
  if (&target == &acceptor) {
    acceptor.adopt(std::move(accepted));
  } else {
    target.post(std::move(accepted));
  }
}

bool TlsEventServer::Impl::evict_idle(Listener& listener, Worker& acceptor) {
  Worker* holder = nullptr;
  TimeRep oldest = kNoIdle;
  for (const auto& worker : workers) {
    const TimeRep since = worker->oldest_idle(listener);
    if (since < oldest) {
      oldest = since;
      holder = worker.get();
    }
  }
  if (holder == nullptr) {
    return false;
  }
  if (holder == &acceptor) {
    return acceptor.evict_oldest(listener);
  }
  if (listener.evictions_pending.fetch_add(1) >= kMaxPendingEvictions) {
    --listener.evictions_pending;
    return false;
  }
  holder->post_eviction(listener);
  return true;
}

void TlsEventServer::Impl::worker_finished() {
  std::lock_guard lock(finished_mutex);
  --running;
  finished_signal.notify_all();
}

void TlsEventServer::Impl::stop_workers() {
  stop_now = true;
  for (auto& worker : workers) {
    worker->wake();
  }
  for (auto& thread : threads) {
    if (thread.joinable()) {
      thread.join();
    }
  }
  threads.clear();
}

TlsEventServer::TlsEventServer(EventServerOptions options, std::vector<EventEndpoint> endpoints)
    : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  impl_->budget = impl_->options.budget
                      ? impl_->options.budget
                      : std::make_shared<ByteBudget>(impl_->options.max_buffered_bytes);
  for (EventEndpoint& endpoint : endpoints) {
    if (endpoint.context) {
      // One record per response, and a whole request in one read(2); the state machine resumes
      // a partial write from a moved buffer; an idle connection keeps no record buffers.
      SSL_CTX* context = endpoint.context->native().context;
      SSL_CTX_set_read_ahead(context, 1);
      SSL_CTX_set_mode(context, SSL_MODE_ENABLE_PARTIAL_WRITE |
                                    SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
                                    SSL_MODE_RELEASE_BUFFERS);
    }
    auto listener = std::make_unique<Listener>();
    listener->endpoint = std::move(endpoint);
    listener->index = impl_->listeners.size();
    impl_->listeners.push_back(std::move(listener));
  }
}

TlsEventServer::~TlsEventServer() {
  impl_->stop_workers();
  impl_->workers.clear();
  for (const auto& listener : impl_->listeners) {
    if (listener->fd >= 0) {
      ::close(listener->fd);
    }
  }
}

namespace {

Status bind_listener(Listener& listener, int backlog) {
  const std::string& host = listener.endpoint.listen.host;
  const std::string service = std::to_string(listener.endpoint.listen.port);
  auto failure = [&](const std::string& why) {
    Error error;
    error.code = ErrorCode::kIo;
    error.message = "cannot listen on " + host + ":" + service + " (" + listener.endpoint.name +
                    "): " + why;
    return error;
  };
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  if (const int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0) {
    return failure(::gai_strerror(rc));
  }
  std::string last_error = "no address";
  for (addrinfo* address = found; address != nullptr; address = address->ai_next) {
    const int fd = ::socket(address->ai_family, address->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                            address->ai_protocol);
    if (fd < 0) {
      last_error = std::strerror(errno);
      continue;
    }
    // No SO_REUSEPORT: a second instance must not silently share the port.
    const int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    if (::bind(fd, address->ai_addr, address->ai_addrlen) == 0 && ::listen(fd, backlog) == 0) {
      listener.fd = fd;
      break;
    }
    last_error = std::strerror(errno);
    ::close(fd);
  }
  ::freeaddrinfo(found);
  if (listener.fd < 0) {
    return failure(last_error);
  }
  sockaddr_storage bound{};
  socklen_t length = sizeof(bound);
  if (::getsockname(listener.fd, reinterpret_cast<sockaddr*>(&bound), &length) == 0) {
    if (bound.ss_family == AF_INET) {
      listener.port = ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
    } else if (bound.ss_family == AF_INET6) {
      listener.port = ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port);
    }
  }
  return Ok{};
}

}  // namespace

Status TlsEventServer::bind() {
  for (const auto& listener : impl_->listeners) {
    if (Status status = bind_listener(*listener, impl_->options.listen_backlog); !status) {
      return status;
    }
  }
  return Ok{};
}

std::size_t usable_cpus() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (::sched_getaffinity(0, sizeof(allowed), &allowed) == 0 && CPU_COUNT(&allowed) > 0) {
    return static_cast<std::size_t>(CPU_COUNT(&allowed));
  }
  return std::max<std::size_t>(1, std::thread::hardware_concurrency());
}

std::size_t default_event_loops() { return 2 * usable_cpus(); }

Status TlsEventServer::start() {
  Impl& impl = *impl_;
  const std::size_t count =
      impl.options.threads > 0 ? impl.options.threads : default_event_loops();
  for (std::size_t i = 0; i < count; ++i) {
    auto worker = std::make_unique<Impl::Worker>(impl);
    if (Status status = worker->init(); !status) {
      impl.workers.clear();
      return status;
    }
    impl.workers.push_back(std::move(worker));
  }
  impl.running = count;
  for (auto& worker : impl.workers) {
    impl.threads.emplace_back([&worker] { worker->run(); });
  }
  return Ok{};
}

int TlsEventServer::port(std::size_t endpoint) const {
  return impl_->listeners.at(endpoint)->port;
}

std::size_t TlsEventServer::event_loops() const { return impl_->workers.size(); }

std::size_t TlsEventServer::open_connections(std::size_t endpoint) const {
  return impl_->listeners.at(endpoint)->open.load();
}

bool TlsEventServer::drain(std::chrono::steady_clock::time_point deadline) {
  Impl& impl = *impl_;
  if (impl.threads.empty()) {
    return true;
  }
  {
    std::lock_guard lock(impl.accept_mutex);
    impl.draining = true;
    for (auto& worker : impl.workers) {
      worker->forget_listener();
    }
    // Clients the kernel has already accepted for us are mid-handshake: serve them too.
    std::size_t turn = 0;
    for (const auto& listener : impl.listeners) {
      while (true) {
        sockaddr_storage peer{};
        socklen_t peer_size = sizeof(peer);
        const int fd = ::accept4(listener->fd, reinterpret_cast<sockaddr*>(&peer), &peer_size,
                                 SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
          if (errno == EINTR || errno == ECONNABORTED) {
            continue;
          }
          break;
        }
        std::string address = address_key(peer);
        if (!listener->admit(address)) {
          ::close(fd);
          continue;
        }
        impl.workers[turn++ % impl.workers.size()]->post(
            Accepted(fd, *listener, std::move(address)));
      }
      // From here new connections are refused; the descriptor stays open until the destructor.
      ::shutdown(listener->fd, SHUT_RDWR);
    }
    impl.accepting_closed = true;
  }
  for (auto& worker : impl.workers) {
    worker->wake();
  }
  std::unique_lock lock(impl.finished_mutex);
  return impl.finished_signal.wait_until(lock, deadline, [&impl] { return impl.running == 0; });
}

}  // namespace topoguard::http
