// UTF-8 decoding shared by the writers that must not pass invalid UTF-8 on (XML, printable text).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace topoguard {

// Length of the valid UTF-8 sequence starting at text[at] (RFC 3629: no overlong forms, no
// surrogates, nothing past U+10FFFF), or 0 if it is invalid or cut short.
[[nodiscard]] std::size_t utf8_sequence_length(std::string_view text, std::size_t at);

// The code point of the valid sequence of `length` bytes at text[at] (see utf8_sequence_length).
[[nodiscard]] std::uint32_t utf8_code_point(std::string_view text, std::size_t at,
                                            std::size_t length);

}  // namespace topoguard
