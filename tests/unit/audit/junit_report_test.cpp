// The JUnit writer: a suite per file, a test case per resource and rule, failures carrying the
// finding, errors for input errors, and XML-safe text whatever the input holds.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "audit_test_support.h"

namespace topoguard::audit {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// 4 rules checked on the template + 5 on the pod; one failure each, with type = action and the
// message; passing cases are empty elements.
TEST(JunitReportTest, TestCasePerResourceAndRule) {
  const std::string xml = testing::render(ReportFormat::kJUnit, testing::sample_report());
  EXPECT_THAT(xml, HasSubstr("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                             "<testsuites name=\"topoguard audit\" tests=\"9\" failures=\"2\" "
                             "errors=\"0\">\n"
                             "  <testsuite name=\"in.yaml\" tests=\"9\" failures=\"2\" "
                             "errors=\"0\" skipped=\"0\">\n"));
  EXPECT_THAT(xml, HasSubstr("    <testcase classname=\"ResourceClaimTemplate ml/gpu-nic\" "
                             "name=\"default/missing-pcie-alignment\">\n"
                             "      <failure type=\"deny\" message=\"GPU request &quot;gpu&quot; "
                             "with NIC request &quot;nic&quot;: not tied"));
  EXPECT_THAT(xml, HasSubstr("\">in.yaml:9: /spec/spec/devices\nGPU request"));
  EXPECT_THAT(xml, HasSubstr("\nhelp: topoguard explain missing-pcie-alignment\nfix (JSONPatch): "
                             "[{&quot;op&quot;:&quot;add&quot;"));
  EXPECT_THAT(xml, HasSubstr("    <testcase classname=\"ResourceClaimTemplate ml/gpu-nic\" "
                             "name=\"default/numa-only-alignment\"/>\n"));
  EXPECT_THAT(xml, HasSubstr("    <testcase classname=\"Pod default/p\" "
                             "name=\"default/device-plugin-pairing\">\n"
                             "      <failure type=\"warn\""));
  EXPECT_THAT(xml, HasSubstr("    <testcase classname=\"Pod default/p\" "
                             "name=\"default/unresolved-claim\"/>\n"));
  EXPECT_THAT(xml, ::testing::EndsWith("  </testsuite>\n</testsuites>\n"));
}

// With a help URI base, a failure's help is the rule's row there.
TEST(JunitReportTest, HelpLinksTheConfiguredBase) {
  const std::string xml =
      testing::render(ReportFormat::kJUnit, testing::sample_report(),
                      ReportOptions{false, "https://git.example.com/README.md"});
  EXPECT_THAT(xml, HasSubstr("\nhelp: https://git.example.com/README.md"
                             "#rule-missing-pcie-alignment\n"));
}

// A check whose findings an exception waives is a skipped test case naming the exception,
// counted in the suite's `skipped`, not a failure.
TEST(JunitReportTest, ExemptedFindingIsSkippedTestCase) {
  const std::string xml = testing::render(ReportFormat::kJUnit, testing::exempted_sample_report());
  EXPECT_THAT(xml, HasSubstr("<testsuites name=\"topoguard audit\" tests=\"9\" failures=\"1\" "
                             "errors=\"0\">\n"
                             "  <testsuite name=\"in.yaml\" tests=\"9\" failures=\"1\" "
                             "errors=\"0\" skipped=\"1\">\n"));
  EXPECT_THAT(xml, HasSubstr("    <testcase classname=\"ResourceClaimTemplate ml/gpu-nic\" "
                             "name=\"default/missing-pcie-alignment\">\n"
                             "      <skipped type=\"exempted\" message=\"exempted by exception "
                             "team-a-legacy: validated by hand (TICKET-42)\">in.yaml:9: "));
  EXPECT_THAT(xml, HasSubstr("\nexception team-a-legacy: validated by hand (TICKET-42)</skipped>\n"
                             "    </testcase>\n"));
  EXPECT_THAT(xml, Not(HasSubstr("<failure type=\"deny\"")));
}

// An input error is a test case with an <error> in its file's suite.
TEST(JunitReportTest, InputErrorIsErrorTestCase) {
  const ManifestSet set = parse_manifests({{"bad.yaml", "kind: [\n"}});
  const std::string xml =
      testing::render(ReportFormat::kJUnit, run_audit(set, testing::builtin_policies()).report);
  EXPECT_THAT(xml, HasSubstr("<testsuite name=\"bad.yaml\" tests=\"1\" failures=\"0\" "
                             "errors=\"1\" skipped=\"0\">\n"
                             "    <testcase classname=\"bad.yaml\" name=\"input\">\n"
                             "      <error type=\"invalid_yaml\" message=\""));
  EXPECT_THAT(xml, HasSubstr(">bad.yaml:2: "));
}

// Markup characters are escaped, line breaks in attributes kept as references, and what XML
// 1.0 cannot carry (control characters, invalid UTF-8) replaced by U+FFFD; valid UTF-8 stays.
TEST(JunitReportTest, EscapesWhatXmlCannotCarry) {
  AuditReport report;
  report.resources.push_back(
      AuditedResource{{"v1", "Pod", "ns", "a<b>&\"c\x01\xff\xc3\xa9\nd"}, "f.yaml", 1, {}, {}});
  engine::Finding finding;
  finding.policy = "default";
  finding.resource = report.resources[0].ref;
  finding.message = "bad \xe2\x82 & <tag>";
  report.findings.push_back(ReportedFinding{finding, "f.yaml", 1, 0, nullptr});
  const std::string xml = testing::render(ReportFormat::kJUnit, report);
  EXPECT_THAT(xml, HasSubstr("classname=\"Pod ns/a&lt;b&gt;&amp;&quot;c\xEF\xBF\xBD\xEF\xBF\xBD"
                             "\xc3\xa9&#10;d\""));
  // Each byte of the broken sequence is replaced.
  EXPECT_THAT(xml, HasSubstr("message=\"bad \xEF\xBF\xBD\xEF\xBF\xBD &amp; &lt;tag&gt;\""));
  EXPECT_THAT(xml, Not(HasSubstr("\x01")));
}

}  // namespace
}  // namespace topoguard::audit
