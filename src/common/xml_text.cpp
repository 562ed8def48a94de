#include "topoguard/common/xml_text.h"

#include "utf8.h"

namespace topoguard {

std::string xml_escape(std::string_view text, bool attribute) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x80) {
      const std::size_t length = utf8_sequence_length(text, i);
      out += length == 0 ? std::string_view("\xEF\xBF\xBD") : text.substr(i, length);
      i += length == 0 ? 1 : length;
      continue;
    }
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\n':
        out += attribute ? "&#10;" : "\n";
        break;
      case '\r':
        out += "&#13;";
        break;
      case '\t':
        out += attribute ? "&#9;" : "\t";
        break;
      default:
        out += byte < 0x20 || byte == 0x7F ? std::string_view("\xEF\xBF\xBD")
                                           : std::string_view(&c, 1);
    }
    ++i;
  }
  return out;
}

std::string junit_error_case(const Error& error) {
  return "    <testcase classname=\"" + xml_escape(error.location.file) +
         "\" name=\"input\">\n      <error type=\"" + error_code_name(error.code) +
         "\" message=\"" + xml_escape(error.message) + "\">" + xml_escape(error.to_string(), false) +
         "</error>\n    </testcase>\n";
}

}  // namespace topoguard
