#include "topoguard/common/printable_text.h"

#include <cstdint>
#include <string_view>

#include "utf8.h"

namespace topoguard {

namespace {

constexpr char kHexDigits[] = "0123456789abcdef";
// The controls written by name (\n, \r, \t), and those names.
constexpr std::string_view kNamedControls = "\n\r\t";
constexpr std::string_view kControlNames = "nrt";

void append_hex_byte(std::string& out, unsigned char byte) {
  out += "\\x";
  out += kHexDigits[byte >> 4];
  out += kHexDigits[byte & 0xF];
}

void append_code_point(std::string& out, std::uint32_t code_point) {
  out += "\\u";
  for (int shift = 12; shift >= 0; shift -= 4) {
    out += kHexDigits[(code_point >> shift) & 0xF];
  }
}

// Non-ASCII characters a terminal or log viewer acts on rather than shows: C1 controls (\u009b
// is CSI), line and paragraph separators, and the bidi marks, embeddings, overrides and isolates
// that reorder what follows them on the line.
bool acts_on_display(std::uint32_t code_point) {
  return (code_point >= 0x80 && code_point <= 0x9F) || code_point == 0x061C ||
         code_point == 0x200E || code_point == 0x200F ||
         (code_point >= 0x2028 && code_point <= 0x202E) ||
         (code_point >= 0x2066 && code_point <= 0x2069);
}

}  // namespace

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte >= 0x80) {
      const std::size_t length = utf8_sequence_length(text, i);
      if (length == 0) {
        append_hex_byte(out, byte);
        ++i;
        continue;
      }
      const std::uint32_t code_point = utf8_code_point(text, i, length);
      if (acts_on_display(code_point)) {
        append_code_point(out, code_point);
      } else {
        out += text.substr(i, length);
      }
      i += length;
      continue;
    }
    if (const std::size_t named = kNamedControls.find(static_cast<char>(byte));
        named != std::string_view::npos) {
      out += '\\';
      out += kControlNames[named];
    } else if (byte < 0x20 || byte == 0x7F) {
      append_hex_byte(out, byte);
    } else {
      out += static_cast<char>(byte);
    }
    ++i;
  }
  return out;
}

std::string printable_lines(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) {
      out += printable(text.substr(start));
      break;
    }
    out += printable(text.substr(start, end - start));
    out += '\n';
    start = end + 1;
  }
  return out;
}

}  // namespace topoguard
