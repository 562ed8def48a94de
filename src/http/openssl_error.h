// Turns OpenSSL's thread-local error queue into the project's Error, for the TLS code.
#pragma once

#include <string>

#include <openssl/err.h>

#include "topoguard/common/result.h"

namespace topoguard::http {

// `message` plus OpenSSL's reason for the last failure (if any); the queue is cleared.
inline Error openssl_error(std::string message) {
  const unsigned long code = ERR_get_error();  // NOLINT(google-runtime-int): OpenSSL's type
  if (code != 0) {
    char buffer[256];
    ERR_error_string_n(code, buffer, sizeof(buffer));
    message += " (" + std::string(buffer) + ")";
  }
  ERR_clear_error();
  return Error{ErrorCode::kInvalidValue, std::move(message), {}};
}

}  // namespace topoguard::http
