#include "conventions.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <iostream>

#include "topoguard/common/printable_text.h"

namespace topoguard::cli {

namespace {

constexpr std::array<std::string_view, 8> kKnownFormats{
    "text", "json", "yaml", "sarif", "openreports", "policyreport", "junit", "diff"};

OutputSettings process_output_settings;

// The format a file name's extension suggests ("out.sarif" -> "sarif"), when the command has it.
std::string format_of_extension(const std::string& value, const std::vector<std::string>& formats) {
  const std::size_t dot = value.rfind('.');
  if (dot == std::string::npos) {
    return "";
  }
  std::string extension = value.substr(dot + 1);
  if (extension == "xml") {
    extension = "junit";
  } else if (extension == "yml") {
    extension = "yaml";
  } else if (extension == "txt") {
    extension = "text";
  }
  return std::find(formats.begin(), formats.end(), extension) != formats.end() ? extension : "";
}

// What to say when -o is given something that is no format of the command: most often a file
// name or a folder, as fix's -o once took.
std::string output_hint(const std::string& value, const std::vector<std::string>& formats) {
  std::string text = "\"" + printable(value) + "\" is not an output format (" + joined(formats) +
                     "): -o names the format, as in kubectl";
  const std::string by_extension = format_of_extension(value, formats);
  if (!by_extension.empty()) {
    return text + "; to write the report to a file: -o " + by_extension + " > " + printable(value);
  }
  if (value.find_first_of("./") != std::string::npos) {
    return text + "; to write the report to a file, redirect standard output: -o FORMAT > FILE";
  }
  return text;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) {
    row[j] = j;
  }
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// Whether `candidate` is what `unknown` most likely meant: two edits away or fewer, or one
// spelling the start of the other ("--output-dir" given to audit, whose option is "--output").
bool close_enough(std::string_view unknown, std::string_view candidate) {
  if (edit_distance(unknown, candidate) <= 2) {
    return true;
  }
  const std::size_t shorter = std::min(unknown.size(), candidate.size());
  return shorter >= 5 && unknown.substr(0, shorter) == candidate.substr(0, shorter);
}

void add_to_leaves(CLI::App& command) {
  const std::vector<CLI::App*> subcommands =
      command.get_subcommands([](CLI::App*) { return true; });
  for (CLI::App* subcommand : subcommands) {
    add_to_leaves(*subcommand);
  }
  // A command that logs (serve) sets how much with --log-level, and never colours its log.
  if (subcommands.empty() && command.get_option_no_throw("--log-level") == nullptr) {
    command.add_flag("-q,--quiet", process_output_settings.quiet,
                     "No progress line and no notes on stderr; results and errors still print "
                     "(default: off)");
    command.add_flag("--no-color", process_output_settings.no_color,
                     "Never colour the output (default: colour text output on a terminal "
                     "unless NO_COLOR is set)");
  }
}

}  // namespace

std::string joined(const std::vector<std::string>& items, const char* separator) {
  std::string text;
  for (const std::string& item : items) {
    text += (text.empty() ? "" : separator) + item;
  }
  return text;
}

bool is_known_format(std::string_view value) {
  return std::find(kKnownFormats.begin(), kKnownFormats.end(), value) != kKnownFormats.end();
}

std::string command_path(const CLI::App& command) {
  // The root's name is argv[0] as run ("build/topoguard"); messages say "topoguard".
  return command.get_parent() == nullptr
             ? std::string("topoguard")
             : command_path(*command.get_parent()) + " " + command.get_name();
}

CLI::Option* add_output_option(CLI::App& command, std::string& format,
                               const std::vector<std::string>& formats, const std::string& help) {
  format = formats.front();
  const CLI::Validator known(
      [formats](std::string& value) {
        return std::find(formats.begin(), formats.end(), value) != formats.end()
                   ? std::string()
                   : output_hint(value, formats);
      },
      "{" + joined(formats, ",") + "}");
  command
      .add_option_function<std::string>(
          "--format",
          [&command, &format](const std::string& value) {
            say_deprecated(command, "--format " + value, "-o " + value);
            format = value;
          },
          "Deprecated spelling of -o/--output")
      ->check(known)
      ->group("");
  return command.add_option("-o,--output", format, help)
      ->transform(without_equals_sign())
      ->check(known)
      ->capture_default_str();
}

CLI::Validator without_equals_sign() {
  return CLI::Validator(
      [](std::string& value) {
        if (value.rfind('=', 0) == 0) {
          value.erase(0, 1);
        }
        return std::string();
      },
      "");
}

void say_deprecated(const CLI::App& command, std::string_view old_spelling,
                    std::string_view new_spelling) {
  std::cerr << command_path(command) << ": " << old_spelling
            << " is deprecated and goes in a future release; write " << new_spelling << '\n';
}

const OutputSettings& output_settings() { return process_output_settings; }

void add_output_settings_options(CLI::App& app) { add_to_leaves(app); }

bool color_enabled(int fd) {
  const char* no_color = std::getenv("NO_COLOR");
  const char* term = std::getenv("TERM");
  return !process_output_settings.no_color && (no_color == nullptr || *no_color == '\0') &&
         (term == nullptr || std::string_view(term) != "dumb") && isatty(fd) == 1;
}

bool progress_enabled() { return !process_output_settings.quiet && isatty(STDERR_FILENO) == 1; }

void note(std::string_view command, std::string_view text) {
  if (!process_output_settings.quiet) {
    std::cerr << "topoguard " << command << ": " << text << '\n';
  }
}

bool suggested_option(const CLI::App& command, std::string_view unknown) {
  const std::string_view name = unknown.substr(0, unknown.find('='));
  std::string best;
  std::size_t best_distance = std::string::npos;
  for (const CLI::App* level = &command; level != nullptr; level = level->get_parent()) {
    for (const CLI::Option* option : level->get_options()) {
      for (const std::string& long_name : option->get_lnames()) {
        const std::string candidate = "--" + long_name;
        const std::size_t distance = edit_distance(name, candidate);
        if (close_enough(name, candidate) && distance < best_distance) {
          // A deprecated spelling (hidden: group "") is answered with its replacement.
          best = option->get_group().empty() && candidate == "--format" ? "-o/--output" : candidate;
          best_distance = distance;
        }
      }
    }
  }
  if (best.empty()) {
    return false;
  }
  std::cerr << command_path(command) << ": unknown option \"" << printable(name)
            << "\"; did you mean " << best << "?\nRun with --help for more information.\n";
  return true;
}

}  // namespace topoguard::cli
