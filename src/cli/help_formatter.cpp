// How --help shows an option's value. CLI11 shows its C++ type and its checks
// ("TEXT:{text,json}=text", "UINT:INT in [1 - 300]=10"); a reader wants what to write: the
// option's name for the value (FILE, DIR, N, ...), or the choices when there are some.
#include <sstream>

#include "commands.h"

namespace topoguard::cli {

namespace {

// CLI11's type names for options left without one of ours.
std::string value_name(const std::string& type) {
  if (type == "TEXT") {
    return "VALUE";
  }
  if (type == "INT" || type == "UINT" || type == "FLOAT") {
    return "N";
  }
  return type;
}

class HelpFormatter final : public CLI::Formatter {
 public:
  // CLI::Formatter
  std::string make_option_opts(const CLI::Option* option) const override {
    if (option->get_type_size() == 0 || !option->get_option_text().empty()) {
      return Formatter::make_option_opts(option);
    }
    // "<type>[:<check>]...": our type names have no ':'; IsMember's check is the set "{a,b}".
    const std::string full = option->get_type_name();
    const std::size_t choices = full.find(":{");
    const std::size_t checks = full.find(':');
    std::ostringstream out;
    out << ' '
        << (choices != std::string::npos
                ? full.substr(choices + 1, full.find('}', choices) - choices)
                : value_name(full.substr(0, checks)));
    if (!option->get_default_str().empty()) {
      out << '=' << option->get_default_str();
    }
    if (option->get_expected_max() > 1) {
      out << " ...";
    }
    if (option->get_required()) {
      out << " REQUIRED";
    }
    return out.str();
  }
};

}  // namespace

std::shared_ptr<CLI::Formatter> make_help_formatter() { return std::make_shared<HelpFormatter>(); }

}  // namespace topoguard::cli
