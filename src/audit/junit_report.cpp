// JUnit XML for CI test reports: a test suite per input file, a test case per resource and rule
// it was checked against (classname "<Kind> <namespace>/<name>", name "<policy>/<rule>"), a
// <failure> per finding carrying its message, <skipped> naming the exception when exceptions
// waive every finding of the case, and an <error> test case per input error. Valid
// against the JUnit schema of Jenkins' xUnit plugin (tests/reports/junit-10.xsd).
#include <map>

#include "report_formats.h"

namespace topoguard::audit {

namespace {

// Length of the valid UTF-8 sequence starting at text[i] (RFC 3629), or 0 if it is invalid.
std::size_t utf8_sequence_length(std::string_view text, std::size_t i) {
  const auto lead = static_cast<unsigned char>(text[i]);
  std::size_t length = 0;
  unsigned char low = 0x80;
  unsigned char high = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    low = lead == 0xE0 ? 0xA0 : 0x80;
    high = lead == 0xED ? 0x9F : 0xBF;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    low = lead == 0xF0 ? 0x90 : 0x80;
    high = lead == 0xF4 ? 0x8F : 0xBF;
  } else {
    return 0;
  }
  if (i + length > text.size()) {
    return 0;
  }
  for (std::size_t k = 1; k < length; ++k) {
    const auto byte = static_cast<unsigned char>(text[i + k]);
    if (byte < (k == 1 ? low : 0x80) || byte > (k == 1 ? high : 0xBF)) {
      return 0;
    }
  }
  return length;
}

// Text escaped for XML 1.0 element content or (`attribute`) a quoted attribute value: markup
// characters as entities, in attributes also line breaks and tabs as character references (a
// parser would normalise them to spaces), characters XML cannot carry (other controls, invalid
// UTF-8) as U+FFFD.
std::string xml_escape(std::string_view text, bool attribute = true) {
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
        out += byte < 0x20 || byte == 0x7F ? std::string_view("\xEF\xBF\xBD") : std::string_view(&c, 1);
    }
    ++i;
  }
  return out;
}

struct Suite {
  std::string cases;  // the <testcase> elements
  std::size_t tests = 0;
  std::size_t failures = 0;
  std::size_t errors = 0;
  std::size_t skipped = 0;
};

// The lines of a finding's failure or skip text: where, what, the help link and the fix.
std::string finding_detail(const ReportedFinding& reported, const std::string& help) {
  const engine::Finding& finding = reported.finding;
  std::string detail = location_text(reported.file, reported.line) + ": " + finding.pointer +
                       "\n" + finding.message + "\nhelp: " + help;
  if (!finding.fix.empty()) {
    detail += "\nfix (JSONPatch): " + nlohmann::json(engine::patch_to_json(finding.fix)).dump(
                                          -1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  return detail;
}

void add_check(const RuleCheck& check, const std::string& help_uri_base, Suite& suite) {
  const k8s::ObjectRef& ref = check.resource->ref;
  const std::string help = rule_help_reference(check.rule, help_uri_base);
  const std::string namespace_name = display_namespace(ref);
  suite.cases += "    <testcase classname=\"" +
                 xml_escape(ref.kind + " " + namespace_name + "/" + ref.name) + "\" name=\"" +
                 xml_escape(std::string(check.policy) + "/" +
                            std::string(policy::rule_name(check.rule))) +
                 "\"";
  ++suite.tests;
  if (check.passed()) {
    suite.cases += "/>\n";
    return;
  }
  suite.cases += ">\n";
  for (const ReportedFinding* reported : check.findings) {
    const engine::Finding& finding = reported->finding;
    suite.cases += "      <failure type=\"" + std::string(policy::action_name(finding.action)) +
                   "\" message=\"" + xml_escape(finding.message) + "\">" +
                   xml_escape(finding_detail(*reported, help), false) + "</failure>\n";
  }
  // A case is failed or skipped: waived findings next to unwaived ones add nothing to a failure.
  if (check.findings.empty()) {
    std::string detail;
    for (const ReportedFinding* reported : check.exempted) {
      const engine::Finding& finding = reported->finding;
      detail += (detail.empty() ? "" : "\n") + finding_detail(*reported, help) +
                "\nexception " + finding.exception + ": " + finding.exception_reason;
    }
    const engine::Finding& first = check.exempted.front()->finding;
    suite.cases += "      <skipped type=\"exempted\" message=\"" +
                   xml_escape("exempted by exception " + first.exception + ": " +
                              first.exception_reason) +
                   "\">" + xml_escape(detail, false) + "</skipped>\n";
  }
  ++(check.findings.empty() ? suite.skipped : suite.failures);
  suite.cases += "    </testcase>\n";
}

void add_error(const Error& error, Suite& suite) {
  ++suite.tests;
  ++suite.errors;
  suite.cases += "    <testcase classname=\"" + xml_escape(error.location.file) +
                 "\" name=\"input\">\n      <error type=\"" + error_code_name(error.code) +
                 "\" message=\"" + xml_escape(error.message) + "\">" +
                 xml_escape(error.to_string(), false) + "</error>\n    </testcase>\n";
}

}  // namespace

void write_junit(const AuditReport& report, const std::string& help_uri_base, std::ostream& out) {
  // One suite per file, in input order of first appearance.
  std::vector<std::string> files;
  std::map<std::string, Suite> suites;
  auto suite_of = [&](const std::string& file) -> Suite& {
    auto [it, inserted] = suites.try_emplace(file);
    if (inserted) {
      files.push_back(file);
    }
    return it->second;
  };
  for (const Error& error : report.errors) {
    add_error(error, suite_of(error.location.file));
  }
  for (const RuleCheck& check : rule_checks(report)) {
    add_check(check, help_uri_base, suite_of(check.resource->file));
  }
  Suite total;
  for (const auto& [file, suite] : suites) {
    total.tests += suite.tests;
    total.failures += suite.failures;
    total.errors += suite.errors;
  }
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"topoguard audit\" tests=\""
      << total.tests << "\" failures=\"" << total.failures << "\" errors=\"" << total.errors
      << "\">\n";
  for (const std::string& file : files) {
    const Suite& suite = suites.at(file);
    out << "  <testsuite name=\"" << xml_escape(file) << "\" tests=\"" << suite.tests
        << "\" failures=\"" << suite.failures << "\" errors=\"" << suite.errors
        << "\" skipped=\"" << suite.skipped << "\">\n"
        << suite.cases << "  </testsuite>\n";
  }
  out << "</testsuites>\n";
}

}  // namespace topoguard::audit
