#include "topoguard/common/base64.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "note_name.h"

namespace topoguard {
namespace {

struct Base64Case {
  std::string_view note;
  std::string_view plain;
  std::string_view encoded;
};

class Base64Test : public ::testing::TestWithParam<Base64Case> {};

// RFC 4648 test vectors: the encoding Go's encoding/json uses for []byte, both ways.
TEST_P(Base64Test, MatchesRfc4648) {
  EXPECT_EQ(base64_encode(GetParam().plain), GetParam().encoded);
  EXPECT_EQ(base64_decode(GetParam().encoded), std::string(GetParam().plain));
}

INSTANTIATE_TEST_SUITE_P(Vectors, Base64Test,
                         ::testing::Values(Base64Case{"Empty", "", ""},
                                           Base64Case{"OneByte", "f", "Zg=="},
                                           Base64Case{"TwoBytes", "fo", "Zm8="},
                                           Base64Case{"ThreeBytes", "foo", "Zm9v"},
                                           Base64Case{"FourBytes", "foob", "Zm9vYg=="},
                                           Base64Case{"SixBytes", "foobar", "Zm9vYmFy"},
                                           Base64Case{"HighBytes", "\xff\xfe", "//4="}),
                         topoguard::testing::NoteName());

// Every byte value survives the round trip.
TEST(Base64Test, RoundTripsEveryByte) {
  std::string bytes;
  for (int i = 0; i < 256; ++i) {
    bytes.push_back(static_cast<char>(i));
  }
  for (std::size_t length = 0; length <= bytes.size(); length += 37) {
    const std::string plain = bytes.substr(0, length);
    EXPECT_EQ(base64_decode(base64_encode(plain)), plain) << length;
  }
}

// Line breaks and spaces, as a YAML block scalar or a PEM-wrapped kubeconfig field holds them.
TEST(Base64Test, DecodingIgnoresWhitespace) {
  EXPECT_EQ(base64_decode("Zm9v\nYmFy\r\n"), "foobar");
  EXPECT_EQ(base64_decode(" Zm9vYg==\t"), "foob");
}

// Not base64: refused whole, never partly decoded.
TEST(Base64Test, DecodingRefusesWhatIsNotPaddedBase64) {
  for (const std::string_view text : {"Zm9", "Zm9vY", "Zm9v!mFy", "Zg=a", "Z===", "====",
                                      "Zg==Zg==", "Zm-v", "Zm_v", "Zg"}) {
    EXPECT_EQ(base64_decode(text), std::nullopt) << text;
  }
}

}  // namespace
}  // namespace topoguard
