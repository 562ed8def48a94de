// JUnit XML for CI test reports: a test suite per input file, a test case per resource and rule
// it was checked against (classname "<Kind> <namespace>/<name>", name "<policy>/<rule>"), a
// <failure> per finding carrying its message, <skipped> naming the exception when exceptions
// waive every finding of the case, and an <error> test case per input error. Valid
// against the JUnit schema of Jenkins' xUnit plugin (tests/reports/junit-10.xsd).
#include <map>

#include "report_formats.h"
#include "topoguard/common/json_writer.h"
#include "topoguard/common/xml_text.h"

namespace topoguard::audit {

namespace {

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
    detail +=
        "\nfix (JSONPatch): " + to_json_text(SortedJson(engine::patch_to_json(finding.fix)));
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
  suite.cases += junit_error_case(error);
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
