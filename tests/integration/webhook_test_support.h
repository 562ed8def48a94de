// Shared pieces of the webhook integration tests: AdmissionReview bodies and a TLS connection
// driven by hand (half-sent requests, pipelining, raw HTTP).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <string>
#include <utility>

#include <httplib.h>

#include "topoguard/common/base64.h"
#include "topoguard/common/json.h"

namespace topoguard::testing {

// An AdmissionReview v1 request around `object`.
inline std::string review_body(const Json& object, const std::string& uid,
                               const std::string& operation = "CREATE",
                               const std::string& namespace_name = "ml") {
  Json review = {{"apiVersion", "admission.k8s.io/v1"}, {"kind", "AdmissionReview"}};
  Json request = Json::object();
  request["uid"] = uid;
  request["kind"] = {{"group", ""}, {"version", "v1"}, {"kind", object.value("kind", "")}};
  request["operation"] = operation;
  request["namespace"] = namespace_name;
  request["name"] = object["metadata"].value("name", "");
  request["object"] = object;
  review["request"] = std::move(request);
  return review.dump();
}

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout
};

// Runs a shell command (curl, openssl s_client) and collects its stdout and exit code.
inline CommandResult run_command(const std::string& command) {
  CommandResult result;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) {
    return result;
  }
  char buffer[4096];
  while (const std::size_t n = std::fread(buffer, 1, sizeof(buffer), pipe)) {
    result.output.append(buffer, n);
  }
  const int status = ::pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

// The patch field of an AdmissionResponse, decoded ("" when it is not base64).
inline std::string base64_decode(const std::string& text) {
  return topoguard::base64_decode(text).value_or("");
}

// A TCP connection to 127.0.0.1:port; from `source` (another loopback address, e.g. 127.0.0.2)
// when given, so a test can act as several client addresses.
inline int connect_loopback(int port, const char* source = nullptr) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (source != nullptr) {
    sockaddr_in local{};
    local.sin_family = AF_INET;
    ::inet_pton(AF_INET, source, &local.sin_addr);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof(local)) != 0) {
      ::close(fd);
      return -1;
    }
  }
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// One TLS connection driven by hand, so a request can be left half sent.
class RawTlsConnection {
 public:
  RawTlsConnection(SSL_CTX* ctx, int port, const char* source = nullptr)
      : fd_(connect_loopback(port, source)) {
    if (fd_ < 0) {
      return;
    }
    ssl_ = SSL_new(ctx);
    SSL_set_fd(ssl_, fd_);
    // SSL_set_tlsext_host_name is a macro with a C cast; call what it expands to.
    static char kServiceName[] = "topoguard.topoguard.svc";
    SSL_ctrl(ssl_, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name, kServiceName);
    SSL_set1_host(ssl_, "topoguard.topoguard.svc");
    connected_ = SSL_connect(ssl_) == 1;
  }
  ~RawTlsConnection() {
    if (ssl_ != nullptr) {
      SSL_free(ssl_);
    }
    if (fd_ >= 0) {
      ::close(fd_);
    }
  }
  RawTlsConnection(const RawTlsConnection&) = delete;
  RawTlsConnection& operator=(const RawTlsConnection&) = delete;

  [[nodiscard]] bool connected() const { return connected_; }
  bool send(const std::string& bytes) {
    return SSL_write(ssl_, bytes.data(), static_cast<int>(bytes.size())) ==
           static_cast<int>(bytes.size());
  }
  // Reads one HTTP response (headers + Content-Length body); bytes of a following pipelined
  // response stay buffered for the next call. What was read so far when the peer closes.
  std::string read_response() {
    char buffer[8192];
    while (true) {
      const std::size_t header_end = pending_.find("\r\n\r\n");
      if (header_end != std::string::npos) {
        const std::size_t at = pending_.find("Content-Length: ");
        const std::size_t length =
            at != std::string::npos && at < header_end ? std::stoul(pending_.substr(at + 16)) : 0;
        if (pending_.size() >= header_end + 4 + length) {
          std::string response = pending_.substr(0, header_end + 4 + length);
          pending_.erase(0, response.size());
          return response;
        }
      }
      const int n = SSL_read(ssl_, buffer, sizeof(buffer));
      if (n <= 0) {
        return std::exchange(pending_, std::string());
      }
      pending_.append(buffer, static_cast<std::size_t>(n));
    }
  }
  // True when the server closes the connection within `seconds` (nothing more is read).
  bool closed_within(int seconds) {
    timeval limit{seconds, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit));
    char buffer[512];
    while (true) {
      const int n = SSL_read(ssl_, buffer, sizeof(buffer));
      if (n > 0) {
        continue;
      }
      const int error = SSL_get_error(ssl_, n);
      return !(error == SSL_ERROR_WANT_READ ||
               (error == SSL_ERROR_SYSCALL && (errno == EAGAIN || errno == EWOULDBLOCK)));
    }
  }

 private:
  int fd_;
  SSL* ssl_ = nullptr;
  bool connected_ = false;
  std::string pending_;
};

}  // namespace topoguard::testing
