// The webhook port's HTTPS/1.1 server: a few event-loop threads (epoll, non-blocking OpenSSL),
// each owning its connections, instead of cpp-httplib's thread per keep-alive connection. Per
// request it costs one read and one write system call (TLS read-ahead, one record per
// response) where httplib 0.11 spends twelve (a poll before every read and write, headers and
// body written separately, getpeername/getsockname), and a connection costs a buffer instead
// of a thread, so 64 or 1,000 API-server connections are served by the same two threads.
// Handlers run on the loop thread: they must be CPU-bound and short (the admission path is).
#pragma once

#include <openssl/ssl.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "topoguard/common/result.h"
#include "topoguard/server/http_request_reader.h"
#include "topoguard/server/server_options.h"

namespace topoguard::server {

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers, e.g. Allow
};

// Answers one complete request; may take the request's body. Must not throw (exceptions are
// caught and answered with 500, but only as a last resort).
using HttpHandler = std::function<HttpResponse(HttpRequest& request)>;
// Builds the response for a request the server rejects itself (400, 408, 413, 431, 505, ...);
// `path` is empty when the request line was not understood.
using HttpErrorResponder =
    std::function<HttpResponse(int status, const std::string& message, const std::string& path)>;

struct EventServerOptions {
  HostPort listen;
  std::size_t threads = 0;  // 0: one per core
  int listen_backlog = 1024;
  std::chrono::milliseconds read_timeout{10'000};        // handshake, or one request's bytes
  std::chrono::milliseconds write_timeout{10'000};       // one response's bytes
  std::chrono::milliseconds keep_alive_timeout{20'000};  // idle between requests
  std::size_t keep_alive_max_requests = 1'000'000;
  HttpParseLimits limits;
  // Request bytes buffered across all connections (each may hold up to a whole body): above
  // this, a connection that sends more gets 503 and is closed, instead of the process being
  // killed for memory.
  std::size_t max_buffered_bytes = 128 * 1024 * 1024;
};

struct SslCtxDeleter {
  void operator()(SSL_CTX* ctx) const { SSL_CTX_free(ctx); }
};
using SslCtxPtr = std::unique_ptr<SSL_CTX, SslCtxDeleter>;

class TlsEventServer {
 public:
  TlsEventServer(EventServerOptions options, SslCtxPtr context, HttpHandler handler,
                 HttpErrorResponder on_error);
  ~TlsEventServer();  // closes every connection still open
  TlsEventServer(const TlsEventServer&) = delete;
  TlsEventServer& operator=(const TlsEventServer&) = delete;

  // Creates the listening socket; port() is known afterwards.
  [[nodiscard]] Status bind();
  // Starts the event-loop threads.
  [[nodiscard]] Status start();
  [[nodiscard]] int port() const;

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

}  // namespace topoguard::server
