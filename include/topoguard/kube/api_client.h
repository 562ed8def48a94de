// HTTPS requests to a Kubernetes API server: reads with whole responses (lists, discovery),
// streamed ones (watches) and writes (create, update, patch, apply, delete), on Boost.Beast over
// OpenSSL. Beast, not cpp-httplib: it lets the client set
// the TLS server name apart from the host (tls-server-name), take client certificates from
// memory (kubeconfig data, exec plugins), read a chunked body piece by piece as it arrives with
// the message's framing checked (a clean end of a watch is told from a cut one), bound headers
// and bodies, and cancel a request from another thread through its io_context.
//
// Every request passes the client-side rate limit (token bucket), carries the current
// credentials (bearer token, basic, client certificate), is retried once with fresh credentials
// after a 401 (token file re-read, exec plugin re-run), and is retried after the wait a 429 or
// 5xx's Retry-After asks (up to max_retries). Other answers come back as they are: a non-2xx
// response holds its Status (the typed error) and is not a Result error; Result errors are for
// transport failures (connect, TLS, a cut stream), credentials that cannot be had, and
// cancellation. Writes are retried the same way: each one the API server receives twice is
// harmless (a create answers 409 AlreadyExists, an update with a resourceVersion 409 Conflict,
// an apply is idempotent), and a write is only sent again on a fresh connection when a kept-alive
// one failed before any answer.
//
// Thread-safe: one ApiClient per cluster is shared by all threads. Each request runs on the
// calling thread, on its own connection (kept alive and reused between requests); a request
// stops early, its connection closed, when its stop token is requested.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "topoguard/common/json.h"
#include "topoguard/common/result.h"
#include "topoguard/kube/client_config.h"
#include "topoguard/kube/clock.h"
#include "topoguard/kube/credentials.h"
#include "topoguard/kube/rate_limiter.h"

namespace topoguard::kube {

// Query parameters, in order, not yet percent-encoded.
using Query = std::vector<std::pair<std::string, std::string>>;

// The error of a non-2xx answer: the Status object of its body (kind: Status), or one made
// from the HTTP status when the body is something else.
struct ApiStatus {
  int code = 0;        // the Status's code, else the HTTP status
  std::string reason;  // "Expired", "NotFound", "TooManyRequests", "Unauthorized", ...
  std::string message;
  Json details;            // the Status's details (retryAfterSeconds, causes), or null
  bool from_body = false;  // read from a Status body

  // 410: the version or continue token is too old (reason Expired or Gone): list again.
  [[nodiscard]] bool expired() const { return code == 410; }
  // "410 Expired: too old resource version: 5 (12)".
  [[nodiscard]] std::string to_string() const;
};

[[nodiscard]] ApiStatus parse_api_status(int http_status, std::string_view body);

struct ApiResponse {
  int status = 0;
  std::string body;                // get(): the payload or the error body; stream(): error body
  std::optional<ApiStatus> error;  // set for every non-2xx answer
  std::optional<std::chrono::seconds> retry_after;  // the Retry-After header, in seconds
  bool stopped = false;  // stream(): the sink ended the stream before its end

  [[nodiscard]] bool ok() const { return status >= 200 && status < 300; }
};

enum class Method { kGet, kPost, kPut, kPatch, kDelete };

// "GET", "POST", ...
[[nodiscard]] const char* method_name(Method method);

// The content types of writes.
inline constexpr std::string_view kJsonContent = "application/json";
inline constexpr std::string_view kJsonPatchContent = "application/json-patch+json";
inline constexpr std::string_view kMergePatchContent = "application/merge-patch+json";
// Server-side apply; a JSON body is valid YAML.
inline constexpr std::string_view kApplyPatchContent = "application/apply-patch+yaml";

struct ApiClientOptions {
  RateLimit rate_limit;
  std::chrono::milliseconds connect_timeout{10'000};  // TCP connect and TLS handshake
  std::chrono::milliseconds request_timeout{60'000};  // get(): the whole exchange
  int max_retries = 10;                               // 429/5xx with Retry-After (client-go)
  std::chrono::seconds max_retry_after{300};          // longer Retry-After values are cut to this
  std::size_t max_body_bytes = 512u * 1024 * 1024;    // a get() payload
  std::size_t max_idle_connections = 8;
  std::string user_agent = "topoguard";
  CredentialOptions credentials;
};

// Body bytes of a streamed 2xx response as they arrive; false stops the stream. It is first
// called with no bytes as soon as the 2xx header has arrived: the stream is open.
using BodySink = std::function<bool(std::string_view bytes)>;

class ApiClient {
 public:
  // Fails when the TLS configuration cannot be built (bad CA or client certificate).
  [[nodiscard]] static Result<std::shared_ptr<ApiClient>> create(ClientConfig config,
                                                                 ApiClientOptions options = {},
                                                                 ClockPtr clock = real_clock());
  ~ApiClient();
  ApiClient(const ApiClient&) = delete;
  ApiClient& operator=(const ApiClient&) = delete;

  // GET `path` (from the server's base path on, e.g. "/api/v1/namespaces") with `query`; the
  // whole body is read.
  [[nodiscard]] Result<ApiResponse> get(std::string_view path, const Query& query,
                                        std::stop_token stop = {});
  // GET whose 2xx body goes to `sink` as it arrives, until the response ends (a clean end is an
  // ApiResponse, a cut one an error) or the sink says stop. No read may wait longer than
  // `idle_timeout`.
  [[nodiscard]] Result<ApiResponse> stream(std::string_view path, const Query& query,
                                           const BodySink& sink,
                                           std::chrono::milliseconds idle_timeout,
                                           std::stop_token stop = {});

  // Any method with a body (empty: none is sent) of `content_type`; the whole answer is read.
  [[nodiscard]] Result<ApiResponse> send(Method method, std::string_view path, const Query& query,
                                         std::string_view content_type, std::string_view body,
                                         std::stop_token stop = {});

  [[nodiscard]] const ClientConfig& config() const;
  [[nodiscard]] CredentialSource& credentials();
  [[nodiscard]] const ClockPtr& clock() const;

 private:
  struct Impl;
  explicit ApiClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

using ApiClientPtr = std::shared_ptr<ApiClient>;

}  // namespace topoguard::kube
