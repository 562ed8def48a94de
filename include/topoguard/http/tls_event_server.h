// An HTTP/1.1 server of several ports: a few event-loop threads (epoll, non-blocking OpenSSL or
// plain sockets), each owning its connections, serving every endpoint (an HTTPS port and a plain
// one for metrics, say) with the same limits and timeouts, so a slow client of one port cannot
// starve another. Per request it costs one read and one write system call (TLS
// read-ahead, one record per response), and a connection costs a buffer instead of a thread.
// Requests are read by HttpRequestReader (Boost.Beast's parser). Handlers run on the loop
// thread: they must be short; long work goes to other threads and answers through a Responder.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "topoguard/common/result.h"
#include "topoguard/http/byte_budget.h"
#include "topoguard/http/host_port.h"
#include "topoguard/http/http_request_reader.h"
#include "topoguard/http/tls_context.h"

namespace topoguard::http {

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers, e.g. Allow
};

// Answers a request later, from any thread. Only the first answer for a request counts (the
// deferred answer's fallback may have gone out first).
using Responder = std::function<void(HttpResponse response)>;

// A handler's promise to answer through the Responder; if it has not by `answer_by`, the loop
// calls `fallback()` (on the loop thread) and sends what it returns; nullopt means the answer
// has just been given to the Responder and is on its way.
struct DeferredAnswer {
  std::chrono::steady_clock::time_point answer_by;
  std::function<std::optional<HttpResponse>()> fallback;
};
using HandlerResult = std::variant<HttpResponse, DeferredAnswer>;

// Answers one complete request, now or deferred; may take the request's body. Must not throw
// (exceptions are caught and answered with 500, but only as a last resort).
using HttpHandler =
    std::function<HandlerResult(HttpRequest& request, Responder responder)>;
// Builds the response for a request the server rejects itself (400, 408, 413, 431, 505, ...);
// `path` is empty when the request line was not understood.
using HttpErrorResponder =
    std::function<HttpResponse(int status, const std::string& message, const std::string& path)>;

// One listening port: its address, TLS context (none: plain HTTP), routes and connection caps.
// A new connection at max_connections closes the port's longest-idle connection (no byte of a
// request received: new, or between requests) to make room, and is closed itself only when no
// connection is idle. One beyond max_connections_per_address from the same client address is
// closed as soon as it is accepted.
struct EventEndpoint {
  std::string name;  // for logs, e.g. "webhook"
  HostPort listen;
  std::unique_ptr<TlsContext> context;  // nullptr: plain HTTP
  HttpHandler handler;
  HttpErrorResponder on_error;
  std::size_t max_connections = 4096;
  std::size_t max_connections_per_address = std::numeric_limits<std::size_t>::max();
};

// CPUs this process may run on: its affinity mask (a cpuset, `taskset`), or every online CPU
// when the mask cannot be read.
[[nodiscard]] std::size_t usable_cpus();

// What `threads = 0` means: two event loops per usable CPU. Admission decisions of up to 16 KiB
// run on the loops, so a loop is often computing rather than waiting; with two per CPU the kernel
// interleaves them, and a loop preempted by another process on its CPU holds up half as many
// connections (with one loop per CPU, a client sharing the cores preempted a loop every second
// request).
[[nodiscard]] std::size_t default_event_loops();

// What goes wrong outside any request (accepting, watching a connection, the event loop itself),
// for the owner's log; `os_error` is the errno value, 0 when there is none.
enum class EventSeverity { kWarn, kError };
using EventLog =
    std::function<void(EventSeverity severity, std::string_view message, int os_error)>;

struct EventServerOptions {
  std::size_t threads = 0;  // 0: default_event_loops()
  int listen_backlog = 1024;
  // The TLS handshake, and all of one request's bytes (header and body): past it the client
  // gets 408 and the connection closes.
  std::chrono::milliseconds read_timeout{10'000};
  std::chrono::milliseconds write_timeout{10'000};       // one response's bytes
  std::chrono::milliseconds keep_alive_timeout{20'000};  // idle between requests
  std::size_t keep_alive_max_requests = 1'000'000;
  HttpParseLimits limits;
  // Request bytes buffered across all connections (each may hold up to a whole body): above
  // this, a connection that sends more gets 503 and is closed, instead of the process being
  // killed for memory (ByteBudget keeps a share for small requests).
  std::size_t max_buffered_bytes = 128 * 1024 * 1024;
  // Shared with what else holds request bytes (decisions in flight); nullptr: a budget of
  // max_buffered_bytes for the connections alone.
  std::shared_ptr<ByteBudget> budget;
  EventLog log;  // nullptr: not reported
};

class TlsEventServer {
 public:
  TlsEventServer(EventServerOptions options, std::vector<EventEndpoint> endpoints);
  ~TlsEventServer();  // closes every connection still open
  TlsEventServer(const TlsEventServer&) = delete;
  TlsEventServer& operator=(const TlsEventServer&) = delete;

  // Creates the listening sockets; port() is known afterwards.
  [[nodiscard]] Status bind();
  // Starts the event-loop threads.
  [[nodiscard]] Status start();
  // The bound port of the endpoint at that index of the constructor's list.
  [[nodiscard]] int port(std::size_t endpoint = 0) const;
  // Event-loop threads started (options.threads, or default_event_loops() for 0).
  [[nodiscard]] std::size_t event_loops() const;
  // Connections open on that endpoint now.
  [[nodiscard]] std::size_t open_connections(std::size_t endpoint = 0) const;

  // Stops accepting (connections already queued by the kernel are still taken) and answers
  // every further request with "Connection: close", closing its connection after the response.
  // Idle keep-alive connections are not cut (a request the client sends at that moment would
  // fail; the API server does not retry a POST): they end with their next request or their
  // keep-alive timeout. True when every connection was gone before `deadline`.
  bool drain(std::chrono::steady_clock::time_point deadline);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace topoguard::http
