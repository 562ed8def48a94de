#include "topoguard/http/host_port.h"

#include <gtest/gtest.h>

#include "note_name.h"

namespace topoguard::http {
namespace {

struct Case {
  std::string_view note;
  std::string_view text;
  bool ok;
  std::string host;
  int port;
};

class HostPortTest : public ::testing::TestWithParam<Case> {};

// --listen and --metrics-listen accept ADDR:PORT, [IPV6]:PORT and :PORT.
TEST_P(HostPortTest, Parses) {
  const Case& c = GetParam();
  Result<HostPort> parsed = parse_host_port(c.text);
  ASSERT_EQ(parsed.has_value(), c.ok);
  if (c.ok) {
    EXPECT_EQ(parsed->host, c.host);
    EXPECT_EQ(parsed->port, c.port);
  } else {
    EXPECT_EQ(parsed.error().code, ErrorCode::kUsage);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Addresses, HostPortTest,
    ::testing::Values(Case{"Ipv4", "0.0.0.0:8443", true, "0.0.0.0", 8443},
                      Case{"Loopback", "127.0.0.1:0", true, "127.0.0.1", 0},
                      Case{"Ipv6", "[::1]:9090", true, "::1", 9090},
                      Case{"PortOnly", ":9090", true, "0.0.0.0", 9090},
                      Case{"NoPort", "127.0.0.1", false, "", 0},
                      Case{"PortTooLarge", "127.0.0.1:70000", false, "", 0},
                      Case{"PortNotNumber", "127.0.0.1:http", false, "", 0},
                      Case{"BareIpv6", "::1:9090", false, "", 0}),
    topoguard::testing::NoteName());

}  // namespace
}  // namespace topoguard::http
