// What `topoguard policy test` prints (text, JUnit) and writes back with --update.
#include <algorithm>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "topoguard/common/json_writer.h"
#include "topoguard/common/location_text.h"
#include "topoguard/common/printable_text.h"
#include "topoguard/common/terminal_style.h"
#include "topoguard/common/xml_text.h"
#include "topoguard/common/yaml_document.h"
#include "topoguard/policytest/policy_test.h"

namespace topoguard::policytest {

namespace {

std::string counted(std::size_t count, const char* one, const char* many) {
  return std::to_string(count) + " " + (count == 1 ? one : many);
}

// "ResourceClaimTemplate ml/gpu-nic missing-pcie-alignment deny", "... patched".
std::string case_title(const CaseResult& entry) {
  if (entry.expected == nullptr) {
    return "unexpected finding: " + printable(entry.resource.to_string()) + " " +
           std::string(policy::rule_name(*entry.rule)) + " " +
           std::string(outcome_name(entry.observed_outcome.value_or(Outcome::kPass)));
  }
  const ExpectedResult& expected = *entry.expected;
  std::string title = printable(expected.resource.to_string());
  if (expected.rule) {
    title += " " + std::string(policy::rule_name(*expected.rule)) + " " +
             std::string(outcome_name(*expected.outcome));
  }
  if (!expected.patched.empty()) {
    title += " patched";
  }
  return title;
}

std::string why_line(const CaseResult& entry) {
  return entry.why.empty() ? "" : "why: " + printable(entry.why) + "\n";
}

// The lines under a failed case: where, what was expected, what happened, why, the diff.
std::string failure_detail(const TestResult& result, const CaseResult& entry) {
  std::string detail;
  if (entry.expected == nullptr) {
    detail =
        "at " + printable(location_text(result.test->file, result.test->results_line)) +
        " (no result lists this finding; list it, or set strict: false)\ngot: " +
        printable(entry.observed) + "\n" + why_line(entry);
    return detail;
  }
  const ExpectedResult& expected = *entry.expected;
  detail = "at " + printable(location_text(expected.location.file, expected.location.line)) + "\n";
  if (expected.rule && entry.observed_outcome != expected.outcome) {
    detail += "expected: " + std::string(outcome_name(*expected.outcome)) + "\n";
  }
  if (!expected.patched.empty()) {
    detail += "expected patched: " + printable(expected.patched) + "\n";
  }
  detail += "got: " + printable(entry.observed) + "\n" + why_line(entry) +
            printable_lines(entry.diff);
  return detail;
}

std::string indented(const std::string& text, std::size_t spaces) {
  std::string out;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    const std::size_t stop = end == std::string::npos ? text.size() : end;
    out += std::string(spaces, ' ') + text.substr(start, stop - start) + "\n";
    start = stop + 1;
  }
  return out;
}

}  // namespace

void write_text(const std::vector<Error>& file_errors, const std::vector<TestResult>& results,
                std::ostream& out, bool color) {
  const std::string error_word = styled("ERROR", TerminalStyle::kAlarm, color) + " ";
  for (const Error& error : file_errors) {
    out << error_word << error.to_string() << '\n';
  }
  std::size_t failed = 0;
  for (const TestResult& result : results) {
    const std::string name = printable(result.test->name);
    for (const Error& error : result.errors) {
      out << error_word << name << ": " << error.to_string() << '\n';
    }
    for (const CaseResult& entry : result.cases) {
      out << (entry.passed ? styled("PASS", TerminalStyle::kSuccess, color)
                           : styled("FAIL", TerminalStyle::kAlarm, color))
          << ' ' << name << ": " << case_title(entry) << '\n';
      if (!entry.passed) {
        out << indented(failure_detail(result, entry), 4);
      }
    }
    failed += result.passed() ? 0 : 1;
  }
  out << counted(results.size(), "test", "tests") << ", " << failed << " failed";
  if (!file_errors.empty()) {
    out << ", " << counted(file_errors.size(), "test file error", "test file errors");
  }
  out << '\n';
}

void write_junit(const std::vector<Error>& file_errors, const std::vector<TestResult>& results,
                 std::ostream& out) {
  struct Suite {
    std::string name;
    std::string file;
    std::string cases;
    std::size_t tests = 0;
    std::size_t failures = 0;
    std::size_t errors = 0;
  };
  const auto add_error = [](Suite& suite, const Error& error) {
    ++suite.tests;
    ++suite.errors;
    suite.cases += junit_error_case(error);
  };
  std::vector<Suite> suites;
  std::map<std::string, std::size_t> file_suites;
  for (const Error& error : file_errors) {
    const auto [it, inserted] = file_suites.try_emplace(error.location.file, suites.size());
    if (inserted) {
      suites.push_back(Suite{error.location.file, error.location.file, "", 0, 0, 0});
    }
    add_error(suites[it->second], error);
  }
  for (const TestResult& result : results) {
    Suite suite{result.test->name, result.test->file, "", 0, 0, 0};
    for (const Error& error : result.errors) {
      add_error(suite, error);
    }
    for (const CaseResult& entry : result.cases) {
      ++suite.tests;
      suite.cases += "    <testcase classname=\"" + xml_escape(result.test->name) + "\" name=\"" +
                     xml_escape(case_title(entry)) + "\"";
      if (entry.passed) {
        suite.cases += "/>\n";
        continue;
      }
      ++suite.failures;
      const char* type = entry.expected == nullptr ? "unexpected-finding"
                         : !entry.diff.empty()     ? "patch-differs"
                         : !entry.resource_found   ? "resource-missing"
                                                   : "wrong-result";
      suite.cases += ">\n      <failure type=\"" + std::string(type) + "\" message=\"" +
                     xml_escape(entry.observed) + "\">" +
                     xml_escape(failure_detail(result, entry), false) +
                     "</failure>\n    </testcase>\n";
    }
    suites.push_back(std::move(suite));
  }
  std::size_t tests = 0;
  std::size_t failures = 0;
  std::size_t errors = 0;
  for (const Suite& suite : suites) {
    tests += suite.tests;
    failures += suite.failures;
    errors += suite.errors;
  }
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<testsuites name=\"topoguard policy test\" tests=\"" << tests << "\" failures=\""
      << failures << "\" errors=\"" << errors << "\">\n";
  for (const Suite& suite : suites) {
    out << "  <testsuite name=\"" << xml_escape(suite.name) << "\" file=\""
        << xml_escape(suite.file) << "\" tests=\"" << suite.tests << "\" failures=\""
        << suite.failures << "\" errors=\"" << suite.errors << "\" skipped=\"0\">\n"
        << suite.cases << "  </testsuite>\n";
  }
  out << "</testsuites>\n";
}

namespace {

struct TextEdit {
  std::size_t begin = 0;
  std::size_t end = 0;
  std::string text;
};

// Byte offsets of the starts of the lines of `text` (line 1 at index 0).
std::vector<std::size_t> line_starts(const std::string& text) {
  std::vector<std::size_t> starts{0};
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n') {
      starts.push_back(i + 1);
    }
  }
  return starts;
}

// Byte offset of the start of 1-based `line` (text.size() past the last line).
std::size_t line_offset(const std::vector<std::size_t>& starts, const std::string& text, int line) {
  const auto index = static_cast<std::size_t>(std::max(line, 1) - 1);
  return index < starts.size() ? starts[index] : text.size();
}

// The greatest line any node under `pointer` is recorded at.
int last_line(const LineIndex& lines, const Json& value, const std::string& pointer) {
  int line = lines.line_of(pointer);
  if (value.is_object()) {
    for (const auto& [key, member] : value.items()) {
      line = std::max(line, last_line(lines, member, pointer + "/" + key));
    }
  } else if (value.is_array()) {
    for (std::size_t i = 0; i < value.size(); ++i) {
      line = std::max(line, last_line(lines, value[i], pointer + "/" + std::to_string(i)));
    }
  }
  return line;
}

// A scalar as YAML flow text: plain when it reads back as the same string, else JSON-quoted.
std::string flow_scalar(const std::string& text) {
  const auto word_char = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
  };
  const bool plain = !text.empty() &&
                     ((text[0] >= 'a' && text[0] <= 'z') || (text[0] >= 'A' && text[0] <= 'Z')) &&
                     std::all_of(text.begin(), text.end(), word_char);
  const bool keyword = text == "true" || text == "false" || text == "null" || text == "True" ||
                       text == "False" || text == "Null" || text == "TRUE" || text == "FALSE" ||
                       text == "NULL";
  return plain && !keyword ? text : to_json_text(Json(text));
}

// Where the value of the first `action:` key on `line` is: its offset and length in the line.
std::optional<std::pair<std::size_t, std::size_t>> action_value(std::string_view line) {
  for (std::size_t at = line.find("action"); at != std::string_view::npos;
       at = line.find("action", at + 1)) {
    if (at > 0 && line[at - 1] != ' ' && line[at - 1] != '{' && line[at - 1] != ',' &&
        line[at - 1] != '-' && line[at - 1] != '\t') {
      continue;
    }
    std::size_t i = at + 6;
    while (i < line.size() && line[i] == ' ') {
      ++i;
    }
    if (i >= line.size() || line[i] != ':') {
      continue;
    }
    ++i;
    while (i < line.size() && line[i] == ' ') {
      ++i;
    }
    const bool quoted = i < line.size() && (line[i] == '"' || line[i] == '\'');
    const std::size_t begin = quoted ? i + 1 : i;
    std::size_t end = begin;
    while (end < line.size() && line[end] >= 'a' && line[end] <= 'z') {
      ++end;
    }
    return std::make_pair(begin, end - begin);
  }
  return std::nullopt;
}

std::string result_entry(const CaseResult& entry, std::size_t column) {
  const std::string indent(column, ' ');
  std::string resource = "{kind: " + flow_scalar(entry.resource.kind);
  if (!entry.resource.namespace_name.empty()) {
    resource += ", namespace: " + flow_scalar(entry.resource.namespace_name);
  }
  resource += ", name: " + flow_scalar(entry.resource.name) + "}";
  return indent + "- resource: " + resource + "\n" + indent +
         "  rule: " + std::string(policy::rule_name(*entry.rule)) + "\n" + indent +
         "  action: " + std::string(outcome_name(entry.observed_outcome.value_or(Outcome::kPass))) +
         "\n";
}

}  // namespace

Result<FileUpdate> update_test_file(const std::string& file, const std::string& text,
                                    const std::vector<TestResult>& results) {
  FileUpdate update;
  update.text = text;
  const YamlStream stream = parse_yaml_stream(text, file);
  if (!stream.errors.empty()) {
    return stream.errors.front();
  }
  const std::vector<std::size_t> starts = line_starts(text);
  std::map<int, const YamlDocument*> documents;  // by first line
  for (const YamlDocument& document : stream.documents) {
    documents.emplace(document.first_line, &document);
  }
  std::vector<TextEdit> edits;
  for (const TestResult& result : results) {
    const PolicyTest& test = *result.test;
    if (test.file != file) {
      continue;
    }
    const auto found = documents.find(test.line);
    const YamlDocument* document = found == documents.end() ? nullptr : found->second;
    if (document == nullptr) {
      return Error{ErrorCode::kInvalidValue, "the test " + test.name + " changed since it ran",
                   SourceLocation{file, test.line, ""}};
    }
    std::string appended;
    for (const CaseResult& entry : result.cases) {
      if (entry.passed) {
        continue;
      }
      if (entry.expected == nullptr) {
        const std::optional<NodeMark> mark = document->lines.mark_of("/results");
        if (!mark || mark->flow) {
          update.notes.push_back("cannot append to the flow-style results of " +
                                 printable(test.name) + "; add by hand:\n" +
                                 printable_lines(result_entry(entry, 0)));
          continue;
        }
        appended += result_entry(entry, static_cast<std::size_t>(mark->column));
        update.notes.push_back("listed " + printable(entry.resource.to_string()) + " " +
                               std::string(policy::rule_name(*entry.rule)) + " " +
                               std::string(outcome_name(*entry.observed_outcome)));
        continue;
      }
      const ExpectedResult& expected = *entry.expected;
      if (!entry.resource_found) {
        update.notes.push_back("cannot update " +
                               printable(location_text(file, expected.location.line)) + ": " +
                               printable(entry.observed) + "; fix or remove the result by hand");
        continue;
      }
      if (!entry.diff.empty() && entry.patched_object) {
        update.patched_files.emplace_back(expected.patched, *entry.patched_object);
        update.notes.push_back("rewrote " + printable(expected.patched));
      }
      if (expected.rule && entry.observed_outcome != expected.outcome) {
        const std::size_t index = static_cast<std::size_t>(&expected - test.results.data());
        const int line = document->lines.line_of("/results/" + std::to_string(index) + "/action");
        const std::size_t begin = line_offset(starts, text, line);
        const std::size_t end = std::min(text.find('\n', begin), text.size());
        const std::string line_text = text.substr(begin, end - begin);
        const auto value = action_value(line_text);
        if (!value ||
            line_text.substr(value->first, value->second) != outcome_name(*expected.outcome)) {
          update.notes.push_back("cannot find the action of " +
                                 printable(location_text(file, expected.location.line)) +
                                 "; set it to " +
                                 std::string(outcome_name(*entry.observed_outcome)) + " by hand");
          continue;
        }
        const std::size_t at = begin + value->first;
        edits.push_back(
            TextEdit{at, at + value->second, std::string(outcome_name(*entry.observed_outcome))});
        update.notes.push_back("set " + printable(location_text(file, line)) +
                               " to action: " + std::string(outcome_name(*entry.observed_outcome)));
      }
    }
    if (!appended.empty()) {
      const Json& entries = document->value.at("results");
      const std::string last = "/results/" + std::to_string(entries.size() - 1);
      const int line = last_line(document->lines, entries.back(), last);
      std::size_t at = line_offset(starts, text, line + 1);
      if (at == text.size() && !text.empty() && text.back() != '\n') {
        appended.insert(0, "\n");
      }
      edits.push_back(TextEdit{at, at, std::move(appended)});
    }
  }
  std::sort(edits.begin(), edits.end(),
            [](const TextEdit& a, const TextEdit& b) { return a.begin > b.begin; });
  for (const TextEdit& edit : edits) {
    update.text.replace(edit.begin, edit.end - edit.begin, edit.text);
  }
  update.changed = !edits.empty() || !update.patched_files.empty();
  return update;
}

}  // namespace topoguard::policytest
