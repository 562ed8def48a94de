#include "topoguard/http/host_port.h"

#include <charconv>

namespace topoguard::http {

Result<HostPort> parse_host_port(std::string_view text) {
  auto usage = [&text](const std::string& why) {
    Error error;
    error.code = ErrorCode::kUsage;
    error.message = "invalid address \"" + std::string(text) + "\": " + why +
                    " (expected ADDR:PORT, [IPV6]:PORT or :PORT)";
    return error;
  };
  const std::size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) {
    return usage("no port");
  }
  std::string_view host = text.substr(0, colon);
  const std::string_view port_text = text.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  } else if (host.find(':') != std::string_view::npos) {
    return usage("IPv6 addresses need brackets");
  }
  int port = -1;
  const auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || end != port_text.data() + port_text.size() || port < 0 || port > 65535) {
    return usage("port must be 0..65535");
  }
  return HostPort{host.empty() ? std::string("0.0.0.0") : std::string(host), port};
}

}  // namespace topoguard::http
