// `topoguard version`: what was built, from what and how, for bug reports and supply-chain
// checks; `-o json` for scripts. `--version` prints the first line only.
#include <iostream>
#include <string>

#include "build_info.h"
#include "commands.h"
#include "conventions.h"
#include "topoguard/common/json.h"
#include "topoguard/common/json_writer.h"

namespace topoguard::cli {

namespace {

std::string or_unknown(const char* value) {
  return *value == '\0' ? std::string("unknown") : std::string(value);
}

Json version_json() {
  Json libraries = Json::object();
  for (const auto& [name, version] : build_info::kLibraries) {
    if (*version != '\0') {
      libraries[name] = version;
    }
  }
  return Json{{"version", TOPOGUARD_VERSION},
              {"gitCommit", or_unknown(build_info::kGitCommit)},
              {"compiler", build_info::kCompiler},
              {"buildType", or_unknown(build_info::kBuildType)},
              {"sanitizers", build_info::kSanitizers},
              {"allocator", build_info::kAllocator},
              {"platform", build_info::kPlatform},
              {"libraries", libraries}};
}

int run_version(const std::string& format) {
  const Json info = version_json();
  if (format == "json") {
    std::cout << to_json_text(info, 2) << '\n';
    return kExitOk;
  }
  std::cout << "topoguard " << info["version"].get<std::string>() << '\n';
  for (const char* key : {"gitCommit", "compiler", "buildType", "sanitizers", "allocator",
                          "platform"}) {
    const std::string& value = info[key].get_ref<const std::string&>();
    if (!value.empty()) {
      std::cout << key << ": " << value << '\n';
    }
  }
  std::cout << "libraries:";
  for (const auto& [name, version] : info["libraries"].items()) {
    std::cout << ' ' << name << ' ' << version.get<std::string>();
  }
  std::cout << std::endl;
  return kExitOk;
}

}  // namespace

void add_version_command(CLI::App& app, int& exit_code) {
  auto format = std::make_shared<std::string>();
  CLI::App* command = app.add_subcommand(
      "version", "Print the version, commit, compiler, build type and library versions");
  add_output_option(*command, *format, {"text", "json"}, "Output format: text or json");
  command->callback([format, &exit_code] { exit_code = run_version(*format); });
}

}  // namespace topoguard::cli
