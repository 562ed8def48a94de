// The address a port listens on, as given on the command line.
#pragma once

#include <string>
#include <string_view>

#include "topoguard/common/result.h"

namespace topoguard::http {

struct HostPort {
  std::string host;  // "0.0.0.0", "127.0.0.1", "::1" (without brackets)
  int port = 0;      // 0: any free port
};

// "ADDR:PORT", "[IPV6]:PORT" or ":PORT" (all interfaces).
[[nodiscard]] Result<HostPort> parse_host_port(std::string_view text);

}  // namespace topoguard::http
