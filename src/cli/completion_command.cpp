// `topoguard completion bash|zsh|fish`: a completion script written from the command tree as
// CLI11 holds it (subcommands, their options, the values an option takes: its choices, files or
// folders), so the scripts cannot fall behind the commands.
#include <algorithm>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "commands.h"
#include "conventions.h"

namespace topoguard::cli {

namespace {

enum class ValueKind { kNone, kChoice, kFile, kDirectory, kOther };

struct OptionSpec {
  std::vector<std::string> short_names;  // "o"
  std::vector<std::string> long_names;   // "output"
  std::string help;
  ValueKind value = ValueKind::kNone;
  std::vector<std::string> choices;
};

struct CommandSpec {
  std::string path;  // "" for topoguard itself, "/policy/test"
  std::vector<std::pair<std::string, std::string>> subcommands;  // name, help
  std::vector<OptionSpec> options;
  bool positional = false;                  // takes operands (files unless choices)
  std::vector<std::string> positional_choices;
};

// "{a,b}" in a type name ("TEXT:{a,b}"): the choices of an IsMember check or of ours.
std::vector<std::string> choices_of(const std::string& type_name) {
  std::vector<std::string> choices;
  const std::size_t open = type_name.find('{');
  const std::size_t close = type_name.find('}', open);
  if (open == std::string::npos || close == std::string::npos) {
    return choices;
  }
  std::istringstream list(type_name.substr(open + 1, close - open - 1));
  for (std::string choice; std::getline(list, choice, ',');) {
    choices.push_back(choice);
  }
  return choices;
}

ValueKind value_kind(const CLI::Option& option, const std::vector<std::string>& choices) {
  if (option.get_items_expected_max() == 0) {
    return ValueKind::kNone;  // a flag
  }
  if (!choices.empty()) {
    return ValueKind::kChoice;
  }
  const std::string type = option.get_type_name();
  if (type.rfind("DIR", 0) == 0) {
    return ValueKind::kDirectory;
  }
  return type.rfind("FILE", 0) == 0 || type.rfind("PATH", 0) == 0 ? ValueKind::kFile
                                                                   : ValueKind::kOther;
}

// The help's first clause, at most 80 characters, without the characters the shells' quoting
// and zsh's [...] and name:description pairs would have to escape.
std::string short_help(const std::string& help) {
  std::string text = help.substr(0, std::min(help.find("; "), help.find(". ")));
  if (text.size() > 80) {
    text = text.substr(0, text.rfind(' ', 80));
  }
  std::string clean;
  for (const char c : text) {
    if (c != '\'' && c != '"' && c != '\\' && c != '[' && c != ']' && c != '`' && c != '$' &&
        c != ':') {
      clean += c;
    }
  }
  while (!clean.empty() && (clean.back() == ' ' || clean.back() == ',')) {
    clean.pop_back();
  }
  return clean;
}

void collect(const CLI::App& command, const std::string& path, std::vector<CommandSpec>& specs) {
  CommandSpec spec{path, {}, {}, false, {}};
  const std::vector<const CLI::App*> subcommands =
      command.get_subcommands([](const CLI::App*) { return true; });
  for (const CLI::App* subcommand : subcommands) {
    spec.subcommands.emplace_back(subcommand->get_name(), short_help(subcommand->get_description()));
  }
  for (const CLI::Option* option : command.get_options()) {
    if (option->get_group().empty()) {
      continue;  // deprecated spellings are not offered
    }
    const std::vector<std::string> choices = choices_of(option->get_type_name());
    if (option->get_positional()) {
      spec.positional = true;
      spec.positional_choices = choices;
      continue;
    }
    spec.options.push_back(OptionSpec{option->get_snames(), option->get_lnames(),
                                      short_help(option->get_description()),
                                      value_kind(*option, choices), choices});
  }
  specs.push_back(spec);
  for (const CLI::App* subcommand : subcommands) {
    collect(*subcommand, path + "/" + subcommand->get_name(), specs);
  }
}

std::vector<std::string> flag_names(const OptionSpec& option) {
  std::vector<std::string> names;
  for (const std::string& name : option.short_names) {
    names.push_back("-" + name);
  }
  for (const std::string& name : option.long_names) {
    names.push_back("--" + name);
  }
  return names;
}

std::string paths_pattern(const std::vector<CommandSpec>& specs, const char* separator) {
  std::vector<std::string> paths;
  for (const CommandSpec& spec : specs) {
    if (!spec.path.empty()) {
      paths.push_back(spec.path);
    }
  }
  return joined(paths, separator);
}

void write_bash(const std::vector<CommandSpec>& specs, std::ostream& out) {
  out << "# bash completion for topoguard, written by `topoguard completion bash`.\n"
         "# Load it with: source <(topoguard completion bash)\n"
         "_topoguard() {\n"
         "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
         "  local path='' i words='' operands=files\n"
         "  COMPREPLY=()\n"
         "  # The subcommands typed so far; other words are options, their values and operands.\n"
         "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
         "    case \"$path/${COMP_WORDS[i]}\" in\n"
         "      "
      << paths_pattern(specs, "|")
      << ") path=\"$path/${COMP_WORDS[i]}\" ;;\n"
         "    esac\n"
         "  done\n"
         "  case \"$path\" in\n";
  for (const CommandSpec& spec : specs) {
    out << "    '" << spec.path << "')\n";
    std::vector<std::string> words;
    for (const auto& [name, help] : spec.subcommands) {
      words.push_back(name);
    }
    for (const OptionSpec& option : spec.options) {
      for (const std::string& name : flag_names(option)) {
        words.push_back(name);
      }
    }
    out << "      words='" << joined(words, " ") << "'\n";
    if (!spec.subcommands.empty() || !spec.positional) {
      out << "      operands=''\n";
    } else if (!spec.positional_choices.empty()) {
      out << "      operands='" << joined(spec.positional_choices, " ") << "'\n";
    }
    out << "      case \"$prev\" in\n";
    for (const OptionSpec& option : spec.options) {
      if (option.value == ValueKind::kNone) {
        continue;
      }
      out << "        " << joined(flag_names(option), "|") << ")\n";
      switch (option.value) {
        case ValueKind::kChoice:
          out << "          mapfile -t COMPREPLY < <(compgen -W '" << joined(option.choices, " ")
              << "' -- \"$cur\")\n";
          break;
        case ValueKind::kFile:
          out << "          compopt -o filenames 2>/dev/null\n"
                 "          mapfile -t COMPREPLY < <(compgen -f -- \"$cur\")\n";
          break;
        case ValueKind::kDirectory:
          out << "          compopt -o filenames 2>/dev/null\n"
                 "          mapfile -t COMPREPLY < <(compgen -d -- \"$cur\")\n";
          break;
        case ValueKind::kNone:
        case ValueKind::kOther:
          break;  // a name or a number: nothing to offer
      }
      out << "          return ;;\n";
    }
    out << "      esac ;;\n";
  }
  out << "  esac\n"
         "  if [[ $cur == -* || $operands == '' ]]; then\n"
         "    mapfile -t COMPREPLY < <(compgen -W \"$words\" -- \"$cur\")\n"
         "  elif [[ $operands == files ]]; then\n"
         "    compopt -o filenames 2>/dev/null\n"
         "    mapfile -t COMPREPLY < <(compgen -f -- \"$cur\")\n"
         "  else\n"
         "    mapfile -t COMPREPLY < <(compgen -W \"$operands\" -- \"$cur\")\n"
         "  fi\n"
         "}\n"
         "complete -F _topoguard topoguard\n";
}

// One _arguments spec per option name ("*--output=[help]:value:(text json)"): every option may
// be repeated, which is true of the repeatable ones and harmless for the rest.
std::string zsh_specs(const OptionSpec& option) {
  std::string action;
  switch (option.value) {
    case ValueKind::kNone:
      break;
    case ValueKind::kChoice:
      action = ":value:(" + joined(option.choices, " ") + ")";
      break;
    case ValueKind::kFile:
      action = ":file:_files";
      break;
    case ValueKind::kDirectory:
      action = ":directory:_files -/";
      break;
    case ValueKind::kOther:
      action = ":value: ";
      break;
  }
  const bool takes_value = option.value != ValueKind::kNone;
  std::string specs;
  for (const std::string& name : option.short_names) {
    specs += " \\\n        '*-" + name + (takes_value ? "+" : "") + "[" + option.help + "]" +
             action + "'";
  }
  for (const std::string& name : option.long_names) {
    specs += " \\\n        '*--" + name + (takes_value ? "=" : "") + "[" + option.help + "]" +
             action + "'";
  }
  return specs;
}

void write_zsh(const std::vector<CommandSpec>& specs, std::ostream& out) {
  out << "#compdef topoguard\n"
         "# zsh completion for topoguard, written by `topoguard completion zsh`.\n"
         "# Load it with: source <(topoguard completion zsh)  (after compinit), or save it as\n"
         "# _topoguard in a folder of $fpath.\n"
         "_topoguard() {\n"
         "  local command_path='' i start=1\n"
         "  # The subcommands typed so far; the last one's options are completed from there on.\n"
         "  for ((i = 2; i < CURRENT; i++)); do\n"
         "    case \"$command_path/${words[i]}\" in\n"
         "      ("
      << paths_pattern(specs, "|")
      << ") command_path=\"$command_path/${words[i]}\"; start=$i ;;\n"
         "    esac\n"
         "  done\n"
         "  words=(\"${(@)words[start,-1]}\")\n"
         "  (( CURRENT -= start - 1 ))\n"
         "  case \"$command_path\" in\n";
  for (const CommandSpec& spec : specs) {
    out << "    ('" << spec.path << "')\n";
    std::string options;
    for (const OptionSpec& option : spec.options) {
      options += zsh_specs(option);
    }
    if (!spec.subcommands.empty()) {
      out << "      local -a subcommands=(";
      for (const auto& [name, help] : spec.subcommands) {
        out << "\n        '" << name << ":" << help << "'";
      }
      out << ")\n"
             "      if [[ ${words[CURRENT]} == -* ]]; then\n"
             "        _arguments -s"
          << options
          << "\n      else\n"
             "        _describe -t commands 'topoguard command' subcommands\n"
             "      fi ;;\n";
      continue;
    }
    std::string operands;
    if (spec.positional) {
      operands = spec.positional_choices.empty()
                     ? " \\\n        '*:file:_files'"
                     : " \\\n        '*:value:(" + joined(spec.positional_choices, " ") + ")'";
    }
    out << "      _arguments -s -S" << options << operands << " ;;\n";
  }
  out << "  esac\n"
         "}\n"
         "if [[ ${funcstack[1]} == _topoguard ]]; then\n"
         "  _topoguard \"$@\"\n"
         "else\n"
         "  compdef _topoguard topoguard\n"
         "fi\n";
}

void write_fish(const std::vector<CommandSpec>& specs, std::ostream& out) {
  out << "# fish completion for topoguard, written by `topoguard completion fish`.\n"
         "# Load it with: topoguard completion fish | source  (or save it as\n"
         "# ~/.config/fish/completions/topoguard.fish)\n"
         "function __topoguard_at --description 'Whether the subcommands typed so far are $argv'\n"
         "    set -l command_path ''\n"
         "    for word in (commandline -opc)[2..-1]\n"
         "        if contains -- \"$command_path/$word\" "
      << paths_pattern(specs, " ")
      << "\n"
         "            set command_path \"$command_path/$word\"\n"
         "        end\n"
         "    end\n"
         "    test \"topoguard$command_path\" = \"$argv[1]\"\n"
         "end\n"
         "complete -c topoguard -e\n"
         "complete -c topoguard -f\n";
  for (const CommandSpec& spec : specs) {
    const std::string at = "complete -c topoguard -n '__topoguard_at topoguard" + spec.path + "'";
    for (const auto& [name, help] : spec.subcommands) {
      out << at << " -a " << name << " -d '" << help << "'\n";
    }
    for (const OptionSpec& option : spec.options) {
      out << at;
      for (const std::string& name : option.short_names) {
        out << " -s " << name;
      }
      for (const std::string& name : option.long_names) {
        out << " -l " << name;
      }
      switch (option.value) {
        case ValueKind::kNone:
          break;
        case ValueKind::kChoice:
          out << " -x -a '" << joined(option.choices, " ") << "'";
          break;
        case ValueKind::kFile:
          out << " -r -F";
          break;
        case ValueKind::kDirectory:
          out << " -x -a '(__fish_complete_directories)'";
          break;
        case ValueKind::kOther:
          out << " -x";
          break;
      }
      out << " -d '" << option.help << "'\n";
    }
    if (spec.positional && spec.subcommands.empty()) {
      out << at
          << (spec.positional_choices.empty() ? " -F"
                                              : " -a '" + joined(spec.positional_choices, " ") + "'")
          << '\n';
    }
  }
}

}  // namespace

void add_completion_command(CLI::App& app, int& exit_code) {
  auto shell = std::make_shared<std::string>();
  CLI::App* command = app.add_subcommand(
      "completion",
      "Print a shell completion script: source <(topoguard completion bash), likewise zsh, or "
      "topoguard completion fish | source");
  command->add_option("shell", *shell, "bash, zsh or fish")
      ->required()
      ->check(CLI::IsMember({"bash", "zsh", "fish"}))
      ->type_name("SHELL");
  command->callback([&app, shell, &exit_code] {
    std::vector<CommandSpec> specs;
    collect(app, "", specs);
    if (*shell == "bash") {
      write_bash(specs, std::cout);
    } else if (*shell == "zsh") {
      write_zsh(specs, std::cout);
    } else {
      write_fish(specs, std::cout);
    }
    std::cout << std::flush;
    exit_code = kExitOk;
  });
}

}  // namespace topoguard::cli
