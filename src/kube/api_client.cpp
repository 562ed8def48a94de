#include "topoguard/kube/api_client.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <array>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <charconv>
#include <limits>
#include <mutex>
#include <utility>

namespace topoguard::kube {

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using ErrorCodeT = boost::system::error_code;

constexpr std::size_t kMaxErrorBodyBytes = 1024 * 1024;
constexpr std::size_t kHeaderLimit = 64 * 1024;
constexpr std::size_t kReadChunk = 64 * 1024;

// The TLS client context of one client identity (the certificate the requests present).
struct TlsIdentity {
  std::string certificate_pem;  // empty: no client certificate
  std::shared_ptr<ssl::context> context;
};

// One kept-alive connection and the io_context its operations run on (driven by the thread
// using the connection, one at a time).
struct Connection {
  explicit Connection(ssl::context& tls) : stream(io, tls) {}

  asio::io_context io;
  beast::ssl_stream<beast::tcp_stream> stream;
  beast::flat_buffer buffer;
  std::shared_ptr<ssl::context> context;  // keeps the identity's context alive
};

using ConnectionPtr = std::unique_ptr<Connection>;

// Starts an asynchronous operation with a handler that records its outcome, and runs the
// connection's io_context until it is done.
template <typename Start>
ErrorCodeT run_operation(Connection& connection, std::size_t* transferred, Start&& start) {
  ErrorCodeT result = asio::error::would_block;
  std::forward<Start>(start)([&result, transferred](ErrorCodeT ec, auto&&... rest) {
    result = ec;
    if constexpr (sizeof...(rest) == 1) {
      if (transferred != nullptr) {
        ((*transferred = static_cast<std::size_t>(rest)), ...);
      }
    }
  });
  connection.io.restart();
  connection.io.run();
  return result;
}

std::string openssl_reason() {
  const unsigned long code = ERR_get_error();  // NOLINT(google-runtime-int): OpenSSL's type
  ERR_clear_error();
  if (code == 0) {
    return "";
  }
  std::array<char, 256> text{};
  ERR_error_string_n(code, text.data(), text.size());
  return text.data();
}

std::string percent_encode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '.' || c == '_' || c == '~') {
      out.push_back(c);
    } else {
      out.push_back('%');
      out.push_back(kHex[byte >> 4]);
      out.push_back(kHex[byte & 0x0f]);
    }
  }
  return out;
}

const char* reason_of_status(int status) {
  switch (status) {
    case 400:
      return "BadRequest";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "NotFound";
    case 405:
      return "MethodNotAllowed";
    case 406:
      return "NotAcceptable";
    case 409:
      return "Conflict";
    case 410:
      return "Gone";
    case 413:
      return "RequestEntityTooLarge";
    case 415:
      return "UnsupportedMediaType";
    case 422:
      return "Invalid";
    case 429:
      return "TooManyRequests";
    case 500:
      return "InternalError";
    case 503:
      return "ServiceUnavailable";
    case 504:
      return "Timeout";
    default:
      return "Unknown";
  }
}

Error transport_error(const ClientConfig& config, std::string what) {
  return Error{ErrorCode::kIo, config.server + ": " + std::move(what), {}};
}

Error cancelled() { return Error{ErrorCode::kIo, "cancelled", {}}; }

http::verb verb_of(Method method) {
  switch (method) {
    case Method::kGet:
      return http::verb::get;
    case Method::kPost:
      return http::verb::post;
    case Method::kPut:
      return http::verb::put;
    case Method::kPatch:
      return http::verb::patch;
    case Method::kDelete:
      return http::verb::delete_;
  }
  return http::verb::get;
}

}  // namespace

const char* method_name(Method method) {
  switch (method) {
    case Method::kGet:
      return "GET";
    case Method::kPost:
      return "POST";
    case Method::kPut:
      return "PUT";
    case Method::kPatch:
      return "PATCH";
    case Method::kDelete:
      return "DELETE";
  }
  return "GET";
}

std::string ApiStatus::to_string() const {
  std::string text = std::to_string(code);
  if (!reason.empty()) {
    text += " " + reason;
  }
  if (!message.empty()) {
    text += ": " + message;
  }
  return text;
}

ApiStatus parse_api_status(int http_status, std::string_view body) {
  ApiStatus status;
  status.code = http_status;
  const Json value = Json::parse(body, nullptr, false);
  if (!value.is_discarded() && value.is_object() && string_member(value, "kind") == "Status") {
    status.from_body = true;
    if (const Json* code = member(value, "code"); code != nullptr && code->is_number_integer()) {
      status.code = code->get<int>();
    }
    status.reason = string_member(value, "reason");
    status.message = string_member(value, "message");
    if (const Json* details = member(value, "details"); details != nullptr) {
      status.details = *details;
    }
  }
  if (status.reason.empty()) {
    status.reason = reason_of_status(status.code);
  }
  if (status.message.empty() && !status.from_body) {
    status.message = std::string(body.substr(0, 256));
  }
  return status;
}

// What is sent: the method, the target (base path, path and query) and the body.
struct Outgoing {
  Method method = Method::kGet;
  std::string target;
  std::string_view content_type;
  std::string_view body;
};

struct ApiClient::Impl {
  Impl(ClientConfig client_config, ApiClientOptions client_options, ClockPtr client_clock)
      : config(std::make_shared<const ClientConfig>(std::move(client_config))),
        options(std::move(client_options)),
        clock(std::move(client_clock)),
        limiter(options.rate_limit, clock),
        credentials(config, clock, options.credentials) {
    host_header =
        config->host.find(':') != std::string::npos ? "[" + config->host + "]" : config->host;
    host_header += ":" + std::to_string(config->port);
    verify_name = config->tls_server_name.empty() ? config->host : config->tls_server_name;
  }

  Result<std::shared_ptr<ssl::context>> make_context(const Credentials& identity) const;
  Result<std::shared_ptr<ssl::context>> context_for(const Credentials& identity);
  Result<ConnectionPtr> connect(const std::shared_ptr<ssl::context>& context, std::stop_token stop);
  ConnectionPtr checkout(const std::shared_ptr<ssl::context>& context);
  void give_back(ConnectionPtr connection);
  Result<ApiResponse> attempt(const Outgoing& outgoing, const Credentials& credentials,
                              const BodySink* sink, std::chrono::milliseconds idle_timeout,
                              std::stop_token stop);
  Result<ApiResponse> exchange(Connection& connection, const Outgoing& outgoing,
                               const Credentials& credentials, const BodySink* sink,
                               std::chrono::milliseconds idle_timeout, std::stop_token stop,
                               bool& reusable, bool& sent);
  Result<ApiResponse> request(Outgoing outgoing, std::string_view path, const Query& query,
                              const BodySink* sink, std::chrono::milliseconds idle_timeout,
                              std::stop_token stop);

  const std::shared_ptr<const ClientConfig> config;
  const ApiClientOptions options;
  const ClockPtr clock;
  TokenBucket limiter;
  CredentialSource credentials;
  std::string host_header;
  std::string verify_name;

  std::mutex mutex;  // guards identity and idle
  TlsIdentity identity;
  std::vector<ConnectionPtr> idle;
};

Result<std::shared_ptr<ssl::context>> ApiClient::Impl::make_context(
    const Credentials& creds) const {
  auto context = std::make_shared<ssl::context>(ssl::context::tls_client);
  SSL_CTX* native = context->native_handle();
  SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION);
  SSL_CTX_set_options(native, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION);
  static constexpr unsigned char kAlpn[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
  SSL_CTX_set_alpn_protos(native, kAlpn, sizeof(kAlpn));
  ErrorCodeT ec;
  if (config->insecure_skip_tls_verify) {
    context->set_verify_mode(ssl::verify_none, ec);
  } else {
    context->set_verify_mode(ssl::verify_peer, ec);
    if (!ec) {
      if (!config->ca_pem.empty()) {
        context->add_certificate_authority(asio::buffer(config->ca_pem), ec);
        if (ec) {
          return Error{
              ErrorCode::kInvalidValue,
              "the certificate authority cannot be used: " + ec.message() + " " + openssl_reason(),
              {}};
        }
      } else {
        context->set_default_verify_paths(ec);
      }
    }
  }
  if (ec) {
    return Error{ErrorCode::kInvalidValue, "TLS setup: " + ec.message(), {}};
  }
  if (!creds.client_certificate_pem.empty()) {
    context->use_certificate_chain(asio::buffer(creds.client_certificate_pem), ec);
    if (!ec) {
      context->use_private_key(asio::buffer(creds.client_key_pem), ssl::context::pem, ec);
    }
    if (ec || SSL_CTX_check_private_key(native) != 1) {
      const std::string why = ec ? ec.message() : "the key does not match the certificate";
      return Error{ErrorCode::kInvalidValue,
                   "the client certificate cannot be used: " + why + " " + openssl_reason(),
                   {}};
    }
  }
  return context;
}

Result<std::shared_ptr<ssl::context>> ApiClient::Impl::context_for(const Credentials& creds) {
  std::lock_guard lock(mutex);
  if (identity.context && identity.certificate_pem == creds.client_certificate_pem) {
    return identity.context;
  }
  Result<std::shared_ptr<ssl::context>> context = make_context(creds);
  if (!context) {
    return context;
  }
  identity = TlsIdentity{creds.client_certificate_pem, *context};
  idle.clear();  // connections of the old identity present the old certificate
  return context;
}

ConnectionPtr ApiClient::Impl::checkout(const std::shared_ptr<ssl::context>& context) {
  std::lock_guard lock(mutex);
  while (!idle.empty()) {
    ConnectionPtr connection = std::move(idle.back());
    idle.pop_back();
    if (connection->context == context) {
      return connection;
    }
  }
  return nullptr;
}

void ApiClient::Impl::give_back(ConnectionPtr connection) {
  std::lock_guard lock(mutex);
  if (connection->context == identity.context && idle.size() < options.max_idle_connections) {
    idle.push_back(std::move(connection));
  }
}

Result<ConnectionPtr> ApiClient::Impl::connect(const std::shared_ptr<ssl::context>& context,
                                               std::stop_token stop) {
  auto connection = std::make_unique<Connection>(*context);
  connection->context = context;
  SSL* native = connection->stream.native_handle();
  ErrorCodeT ec;
  static_cast<void>(asio::ip::make_address(verify_name, ec));
  const bool is_address = !ec;
  if (!is_address) {
    // SSL_set_tlsext_host_name without its C cast.
    SSL_ctrl(native, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
             const_cast<char*>(verify_name.c_str()));
  }
  if (!config->insecure_skip_tls_verify) {
    X509_VERIFY_PARAM* param = SSL_get0_param(native);
    X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    const int set = is_address ? X509_VERIFY_PARAM_set1_ip_asc(param, verify_name.c_str())
                               : X509_VERIFY_PARAM_set1_host(param, verify_name.c_str(), 0);
    if (set != 1) {
      return transport_error(*config, "cannot check the server name \"" + verify_name + "\"");
    }
  }

  tcp::resolver resolver(connection->io);
  const auto endpoints = resolver.resolve(config->host, std::to_string(config->port), ec);
  if (ec) {
    return transport_error(*config, "cannot resolve " + config->host + ": " + ec.message());
  }
  std::stop_callback cancel(stop, [&connection = *connection] {
    asio::post(connection.io,
               [&connection] { beast::get_lowest_layer(connection.stream).cancel(); });
  });
  auto& lowest = beast::get_lowest_layer(connection->stream);
  lowest.expires_after(options.connect_timeout);
  ec = run_operation(*connection, nullptr, [&](auto handler) {
    lowest.async_connect(
        endpoints, [handler = std::move(handler)](ErrorCodeT error, const tcp::endpoint&) mutable {
          handler(error);
        });
  });
  if (stop.stop_requested()) {
    return cancelled();
  }
  if (ec) {
    return transport_error(*config, "cannot connect: " + ec.message());
  }
  lowest.socket().set_option(tcp::no_delay(true), ec);
  lowest.expires_after(options.connect_timeout);
  ec = run_operation(*connection, nullptr, [&](auto handler) {
    connection->stream.async_handshake(ssl::stream_base::client, std::move(handler));
  });
  if (stop.stop_requested()) {
    return cancelled();
  }
  if (ec) {
    std::string why = "TLS handshake failed: " + ec.message();
    const long verify = SSL_get_verify_result(native);  // NOLINT(google-runtime-int)
    if (verify != X509_V_OK) {
      why += " (" + std::string(X509_verify_cert_error_string(verify)) + "; checked name \"" +
             verify_name + "\")";
    }
    ERR_clear_error();
    return transport_error(*config, std::move(why));
  }
  return connection;
}

Result<ApiResponse> ApiClient::Impl::exchange(Connection& connection, const Outgoing& outgoing,
                                              const Credentials& creds, const BodySink* sink,
                                              std::chrono::milliseconds idle_timeout,
                                              std::stop_token stop, bool& reusable, bool& sent) {
  reusable = false;
  sent = false;
  auto& lowest = beast::get_lowest_layer(connection.stream);
  const auto deadline = std::chrono::steady_clock::now() + options.request_timeout;
  const auto until_deadline = [&] {
    return std::max(std::chrono::steady_clock::duration(std::chrono::milliseconds(1)),
                    deadline - std::chrono::steady_clock::now());
  };
  std::stop_callback cancel(stop, [&connection] {
    asio::post(connection.io,
               [&connection] { beast::get_lowest_layer(connection.stream).cancel(); });
  });

  const std::string& target = outgoing.target;
  http::request<http::string_body> request{verb_of(outgoing.method), target, 11};
  request.set(http::field::host, host_header);
  request.set(http::field::user_agent, options.user_agent);
  request.set(http::field::accept, "application/json");
  if (!creds.authorization.empty()) {
    request.set(http::field::authorization, creds.authorization);
  }
  if (!outgoing.body.empty()) {
    request.set(http::field::content_type, outgoing.content_type);
    request.body().assign(outgoing.body);
  }
  if (outgoing.method != Method::kGet) {
    request.prepare_payload();
  }
  request.keep_alive(true);
  lowest.expires_after(until_deadline());
  ErrorCodeT ec = run_operation(connection, nullptr, [&](auto handler) {
    http::async_write(connection.stream, request, std::move(handler));
  });
  if (stop.stop_requested()) {
    return cancelled();
  }
  if (ec) {
    return transport_error(*config, "sending the request failed: " + ec.message());
  }

  http::response_parser<http::buffer_body> parser;
  parser.header_limit(kHeaderLimit);
  parser.body_limit(std::numeric_limits<std::uint64_t>::max());
  lowest.expires_after(until_deadline());
  ec = run_operation(connection, nullptr, [&](auto handler) {
    http::async_read_header(connection.stream, connection.buffer, parser, std::move(handler));
  });
  if (stop.stop_requested()) {
    return cancelled();
  }
  if (ec) {
    return transport_error(*config, "reading the response failed: " + ec.message());
  }
  sent = true;

  ApiResponse response;
  const auto& header = parser.get();
  response.status = static_cast<int>(header.result_int());
  if (const auto found = header.find(http::field::retry_after); found != header.end()) {
    const std::string_view text(found->value().data(), found->value().size());
    long long seconds = 0;
    const auto [end, parse_ec] = std::from_chars(text.data(), text.data() + text.size(), seconds);
    if (parse_ec == std::errc() && end == text.data() + text.size() && seconds >= 0) {
      response.retry_after = std::min(std::chrono::seconds(seconds), options.max_retry_after);
    }
  }
  const bool streaming = sink != nullptr && response.ok();
  if (streaming && !(*sink)(std::string_view())) {
    response.stopped = true;
    return response;
  }
  const std::size_t limit = response.ok() ? options.max_body_bytes : kMaxErrorBodyBytes;
  std::array<char, kReadChunk> chunk{};
  while (!parser.is_done()) {
    parser.get().body().data = chunk.data();
    parser.get().body().size = chunk.size();
    if (streaming) {
      lowest.expires_after(idle_timeout);
    } else {
      lowest.expires_after(until_deadline());
    }
    ec = run_operation(connection, nullptr, [&](auto handler) {
      http::async_read_some(connection.stream, connection.buffer, parser, std::move(handler));
    });
    if (ec == http::error::need_buffer) {
      ec = {};
    }
    if (stop.stop_requested()) {
      return cancelled();
    }
    if (ec) {
      return transport_error(
          *config, (streaming ? "the stream broke: " : "reading the body failed: ") + ec.message());
    }
    const std::size_t got = chunk.size() - parser.get().body().size;
    if (got == 0) {
      continue;
    }
    if (streaming) {
      if (!(*sink)(std::string_view(chunk.data(), got))) {
        response.stopped = true;
        return response;
      }
    } else {
      if (response.body.size() + got > limit) {
        return Error{ErrorCode::kTooLarge,
                     config->server + target + ": the response is larger than " +
                         std::to_string(limit) + " bytes",
                     {}};
      }
      response.body.append(chunk.data(), got);
    }
  }
  reusable = parser.get().keep_alive();
  if (!response.ok()) {
    response.error = parse_api_status(response.status, response.body);
  }
  return response;
}

Result<ApiResponse> ApiClient::Impl::attempt(const Outgoing& outgoing, const Credentials& creds,
                                             const BodySink* sink,
                                             std::chrono::milliseconds idle_timeout,
                                             std::stop_token stop) {
  Result<std::shared_ptr<ssl::context>> context = context_for(creds);
  if (!context) {
    return context.error();
  }
  ConnectionPtr connection = checkout(*context);
  const bool reused = connection != nullptr;
  for (int round = 0; round < 2; ++round) {
    if (!connection) {
      Result<ConnectionPtr> made = connect(*context, stop);
      if (!made) {
        return made.error();
      }
      connection = std::move(made).value();
    }
    bool reusable = false;
    bool sent = false;
    Result<ApiResponse> response =
        exchange(*connection, outgoing, creds, sink, idle_timeout, stop, reusable, sent);
    if (!response && reused && round == 0 && !sent && !stop.stop_requested()) {
      connection.reset();  // the server closed the kept-alive connection: once more, fresh
      continue;
    }
    if (response && reusable && !stop.stop_requested()) {
      give_back(std::move(connection));
    }
    return response;
  }
  return transport_error(*config, "no connection");
}

Result<ApiResponse> ApiClient::Impl::request(Outgoing outgoing, std::string_view path,
                                             const Query& query, const BodySink* sink,
                                             std::chrono::milliseconds idle_timeout,
                                             std::stop_token stop) {
  std::string& target = outgoing.target;
  target = config->base_path + std::string(path);
  char separator = '?';
  for (const auto& [key, value] : query) {
    target += separator;
    target += percent_encode(key);
    target += '=';
    target += percent_encode(value);
    separator = '&';
  }
  bool retried_auth = false;
  int retries = 0;
  while (true) {
    if (stop.stop_requested() || !limiter.acquire(stop)) {
      return cancelled();
    }
    Result<CredentialsPtr> creds = credentials.current();
    if (!creds) {
      return creds.error();
    }
    Result<ApiResponse> response = attempt(outgoing, **creds, sink, idle_timeout, stop);
    if (!response) {
      return response;
    }
    if (response->status == 401 && !retried_auth && credentials.unauthorized(**creds)) {
      retried_auth = true;
      continue;
    }
    if ((response->status == 429 || response->status >= 500) && response->retry_after &&
        retries < options.max_retries) {
      ++retries;
      if (!clock->sleep_for(*response->retry_after, stop)) {
        return cancelled();
      }
      continue;
    }
    return response;
  }
}

ApiClient::ApiClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ApiClient::~ApiClient() = default;

Result<std::shared_ptr<ApiClient>> ApiClient::create(ClientConfig config, ApiClientOptions options,
                                                     ClockPtr clock) {
  auto impl = std::make_unique<Impl>(std::move(config), std::move(options), std::move(clock));
  // Build the TLS context of the configured identity now, so that a bad CA or certificate is
  // reported at start rather than at the first request.
  Credentials configured;
  configured.client_certificate_pem = impl->config->client_certificate_pem;
  configured.client_key_pem = impl->config->client_key_pem;
  if (Result<std::shared_ptr<ssl::context>> context = impl->context_for(configured); !context) {
    return context.error();
  }
  return std::shared_ptr<ApiClient>(new ApiClient(std::move(impl)));
}

Result<ApiResponse> ApiClient::get(std::string_view path, const Query& query,
                                   std::stop_token stop) {
  return impl_->request(Outgoing{}, path, query, nullptr, impl_->options.request_timeout,
                        std::move(stop));
}

Result<ApiResponse> ApiClient::send(Method method, std::string_view path, const Query& query,
                                    std::string_view content_type, std::string_view body,
                                    std::stop_token stop) {
  return impl_->request(Outgoing{method, {}, content_type, body}, path, query, nullptr,
                        impl_->options.request_timeout, std::move(stop));
}

Result<ApiResponse> ApiClient::stream(std::string_view path, const Query& query,
                                      const BodySink& sink, std::chrono::milliseconds idle_timeout,
                                      std::stop_token stop) {
  return impl_->request(Outgoing{}, path, query, &sink, idle_timeout, std::move(stop));
}

const ClientConfig& ApiClient::config() const { return *impl_->config; }
CredentialSource& ApiClient::credentials() { return impl_->credentials; }
const ClockPtr& ApiClient::clock() const { return impl_->clock; }

}  // namespace topoguard::kube
