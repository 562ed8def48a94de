// kubectl's habits, shared by every subcommand: -o/--output names the output format (--format is
// still read, with a deprecation note), --quiet and --no-color (and NO_COLOR), colour only on a
// terminal, and hints for options spelled the old way or mistyped.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

namespace topoguard::cli {

// Every output format some command prints. Where -o once named a directory (fix), a value among
// these is read as a format, anything else as the directory.
[[nodiscard]] bool is_known_format(std::string_view value);

// "a, b, c" (or with another separator).
[[nodiscard]] std::string joined(const std::vector<std::string>& items,
                                 const char* separator = ", ");

// "topoguard policy test": the command as a user types it, for messages.
[[nodiscard]] std::string command_path(const CLI::App& command);

// -o,--output FORMAT, one of `formats` (the first is the default), and --format as a hidden
// alias that says on stderr that it is deprecated. A value that is no format gets a hint: -o
// names the format, as in kubectl, and a report goes to a file by redirecting stdout.
CLI::Option* add_output_option(CLI::App& command, std::string& format,
                               const std::vector<std::string>& formats, const std::string& help);

// kubectl also reads "-o=json"; CLI11 would take "=json" as the value. Drops that "=".
[[nodiscard]] CLI::Validator without_equals_sign();

// One line on stderr: `old_spelling` still works for one release; `new_spelling` replaces it.
void say_deprecated(const CLI::App& command, std::string_view old_spelling,
                    std::string_view new_spelling);

// Set from --quiet and --no-color before any command runs.
struct OutputSettings {
  bool quiet = false;     // no progress line and no notes on stderr; results and errors stay
  bool no_color = false;  // no colour even on a terminal
};
[[nodiscard]] const OutputSettings& output_settings();

// --quiet/-q and --no-color on every command that runs something (the leaves of the tree), so
// each one's --help shows them; not on one that logs (--log-level says how much).
void add_output_settings_options(CLI::App& app);

// Whether text written to `fd` may be coloured: it is a terminal, TERM is not "dumb", neither
// --no-color nor a non-empty NO_COLOR (https://no-color.org) asks otherwise.
[[nodiscard]] bool color_enabled(int fd);

// Whether a progress line may be drawn on stderr: it is a terminal and --quiet is off.
[[nodiscard]] bool progress_enabled();

// A note on stderr ("topoguard audit: skipped ..."), unless --quiet; `command` as "audit".
void note(std::string_view command, std::string_view text);

// For an option `command` does not know: a line on stderr naming the closest option it has
// ("--outptu": did you mean --output?). False, saying nothing, when none is close.
bool suggested_option(const CLI::App& command, std::string_view unknown);

}  // namespace topoguard::cli
