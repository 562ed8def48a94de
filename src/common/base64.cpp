#include "topoguard/common/base64.h"

#include <array>
#include <cstdint>

namespace topoguard {

namespace {

constexpr std::string_view kAlphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// Sextet of each byte, -1 for bytes outside the alphabet.
constexpr std::array<std::int8_t, 256> kSextets = [] {
  std::array<std::int8_t, 256> table{};
  table.fill(-1);
  for (std::size_t i = 0; i < kAlphabet.size(); ++i) {
    table[static_cast<unsigned char>(kAlphabet[i])] = static_cast<std::int8_t>(i);
  }
  return table;
}();

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

}  // namespace

std::string base64_encode(std::string_view bytes) {
  const auto byte = [bytes](std::size_t i) {
    return static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i]));
  };
  // Sized once and written by index: appending a character at a time measured as half the
  // cost of serialising a patched review.
  std::string out((bytes.size() + 2) / 3 * 4, '=');
  char* next = out.data();
  std::size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const std::uint32_t n = (byte(i) << 16U) | (byte(i + 1) << 8U) | byte(i + 2);
    *next++ = kAlphabet[(n >> 18U) & 63U];
    *next++ = kAlphabet[(n >> 12U) & 63U];
    *next++ = kAlphabet[(n >> 6U) & 63U];
    *next++ = kAlphabet[n & 63U];
  }
  const std::size_t rest = bytes.size() - i;
  if (rest > 0) {  // the trailing '=' padding is already in place
    const std::uint32_t n = (byte(i) << 16U) | (rest == 2 ? byte(i + 1) << 8U : 0U);
    *next++ = kAlphabet[(n >> 18U) & 63U];
    *next++ = kAlphabet[(n >> 12U) & 63U];
    if (rest == 2) {
      *next = kAlphabet[(n >> 6U) & 63U];
    }
  }
  return out;
}

std::optional<std::string> base64_decode(std::string_view text) {
  std::string compact;
  compact.reserve(text.size());
  for (const char c : text) {
    if (!is_space(c)) {
      compact.push_back(c);
    }
  }
  if (compact.size() % 4 != 0) {
    return std::nullopt;
  }
  std::size_t padding = 0;
  while (padding < 2 && padding < compact.size() && compact[compact.size() - 1 - padding] == '=') {
    ++padding;
  }
  std::string out;
  out.reserve(compact.size() / 4 * 3);
  for (std::size_t i = 0; i < compact.size(); i += 4) {
    const bool last = i + 4 == compact.size();
    std::uint32_t n = 0;
    for (std::size_t j = 0; j < 4; ++j) {
      const char c = compact[i + j];
      if (last && c == '=' && j >= 4 - padding) {
        n <<= 6U;
        continue;
      }
      const std::int8_t sextet = kSextets[static_cast<unsigned char>(c)];
      if (sextet < 0) {
        return std::nullopt;
      }
      n = (n << 6U) | static_cast<std::uint32_t>(sextet);
    }
    const std::size_t produced = last ? 3 - padding : 3;
    for (std::size_t k = 0; k < produced; ++k) {
      out.push_back(static_cast<char>((n >> (16U - 8U * k)) & 0xFFU));
    }
  }
  return out;
}

}  // namespace topoguard
