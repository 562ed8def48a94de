// Policy test suites (`topoguard policy test`): AlignmentPolicyTest files that say what policies
// must decide for given manifests, and the runner that checks them through the audit's own
// entry (audit::run_audit: the engine the webhook decides with), so a change to a shared policy
// file that changes a verdict fails CI with a readable message. Reading the files is the only
// I/O; running a test is pure once its inputs are read.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "topoguard/audit/manifest_reader.h"
#include "topoguard/common/json.h"
#include "topoguard/common/result.h"
#include "topoguard/common/source_location.h"
#include "topoguard/policy/policy.h"
#include "topoguard/policy/policy_set.h"
#include "topoguard/policytest/path_root.h"

namespace topoguard::policytest {

// Test files and `patched` files larger than this are input errors.
inline constexpr std::size_t kMaxTestFileBytes = std::size_t{16} << 20;

// What must happen to a resource under a rule: a finding with that action, a finding an
// exception waives, or no finding of the rule (the rule checked it and found nothing). Actions
// come from the strongest.
enum class Outcome { kDeny, kWarn, kAudit, kExempted, kPass };
[[nodiscard]] std::string_view outcome_name(Outcome outcome);
[[nodiscard]] std::optional<Outcome> parse_outcome_name(std::string_view name);

// A resource as a result names it; an empty namespace matches the resource's effective one
// ("default" for a namespaced object without one, "" for cluster-scoped objects).
struct ResourceName {
  std::string kind;
  std::string namespace_name;
  std::string name;
  [[nodiscard]] std::string to_string() const;  // "Kind ns/name", "Kind name"
};

struct ExpectedResult {
  ResourceName resource;
  std::optional<policy::RuleId> rule;  // with `outcome`
  std::optional<Outcome> outcome;
  std::string patched;      // a file (resolved against the test file's folder), or ""
  SourceLocation location;  // of the entry in the test file
};

struct PolicyTest {
  std::string name;
  std::string file;                        // the test file
  int line = 0;                            // of its document
  int results_line = 0;                    // of its `results`
  std::vector<std::string> policies;       // resolved paths; empty: the built-in policy
  std::vector<std::string> resources;      // resolved paths
  std::vector<std::string> cluster_state;  // resolved paths
  // `namespaces:` the labels of namespaces the resources hold no Namespace object for: files
  // (audit::read_namespace_labels, resolved paths) or, written in the test, Namespace objects.
  std::vector<std::string> namespace_files;
  std::vector<Json> namespaces;
  bool strict = true;  // findings on listed resources that no result lists fail the test
  std::vector<ExpectedResult> results;
};

// Every AlignmentPolicyTest document of a YAML stream; other kinds are skipped. Paths in the
// tests are resolved against `directory` (the test file's) and must stay inside `root`. Errors
// name file, line and field.
struct ParsedTests {
  std::vector<PolicyTest> tests;
  std::vector<Error> errors;
};
[[nodiscard]] ParsedTests parse_policy_tests(const std::string& file, const std::string& text,
                                             const std::string& directory, const PathRoot& root);

// The tests under `paths`: files, each a test file, or folders walked in sorted order for *.yaml
// and *.yml files that mention the kind (hidden entries skipped). No test at all is an error.
[[nodiscard]] ParsedTests read_policy_tests(const std::vector<std::string>& paths,
                                            const PathRoot& root);

// What one expected result found, or (expected == null) a finding of a strict test that no
// result lists.
struct CaseResult {
  const ExpectedResult* expected = nullptr;
  bool passed = false;
  bool resource_found = false;  // the resource is among the evaluated ones
  // What happened to the resource under the rule, as a result would say it: the most severe
  // action of its findings, `exempted`, or `pass`; nullopt when the resource is not there.
  std::optional<Outcome> observed_outcome;
  std::string observed;  // in words: "deny: <message>", "no finding", ...
  // For an unexpected finding: its resource and rule.
  ResourceName resource;
  std::optional<policy::RuleId> rule;
  // For `patched`: the object after the patch when it differs from the file, and a unified diff
  // of the two (the file first).
  std::optional<Json> patched_object;
  std::string diff;
  // For a failed result on a resource judged without the labels of its namespace, unless it got
  // more than expected: that, and how to give them (the likely reason the action differs).
  std::string why;
};

struct TestResult {
  const PolicyTest* test = nullptr;
  std::vector<CaseResult> cases;  // in the order of the test's results, then unexpected ones
  std::vector<Error> errors;      // inputs that could not be read: the test counts as failed
  [[nodiscard]] bool passed() const;
};

// The inputs of a test, read (policies loaded, manifests parsed, patched files read).
struct TestInputs {
  policy::PolicySet policies;
  audit::ManifestSet manifests;  // cluster-state paths first, then resources
  std::map<std::string, Result<Json>> patched;  // `patched` file -> its object, or why not
  // `given` (--namespace-labels), then the test's `namespaces` (which win over `given`); the
  // resources' own Namespace objects win over both.
  std::vector<Json> namespaces;
};
[[nodiscard]] Result<TestInputs> read_test_inputs(const PolicyTest& test,
                                                  const std::vector<Json>& given = {});

// Checks a test against its inputs through audit::run_audit (the engine the webhook decides
// with; `patched` applies the same patch /mutate returns). Pure.
[[nodiscard]] TestResult run_policy_test(const PolicyTest& test, const TestInputs& inputs);

// A test that could not be run (its policies or inputs unreadable) is a TestResult with errors.
[[nodiscard]] TestResult run_or_fail(const PolicyTest& test,
                                     const std::vector<Json>& namespaces = {});

// One line per case (PASS/FAIL), what was expected and what happened under a failure, one
// ERROR line per input error, and a closing count; with `color`, PASS green, FAIL and ERROR red.
void write_text(const std::vector<Error>& file_errors, const std::vector<TestResult>& results,
                std::ostream& out, bool color = false);

// JUnit XML (tests/reports/junit-10.xsd): a test suite per test, a test case per case, a
// <failure> per failed case, an <error> test case per input error.
void write_junit(const std::vector<Error>& file_errors, const std::vector<TestResult>& results,
                 std::ostream& out);

// The test file `file` (its text) with what `results` observed written into it, for a reviewed
// change: each failed result's action replaced in place, the unexpected findings appended to
// its `results` list, everything else (comments, order, layout) kept. `notes` gets a line per
// change and per result it cannot update (a resource that is gone).
struct FileUpdate {
  std::string text;
  std::vector<std::pair<std::string, Json>> patched_files;  // `patched` files to rewrite
  std::vector<std::string> notes;
  bool changed = false;
};
[[nodiscard]] Result<FileUpdate> update_test_file(const std::string& file, const std::string& text,
                                                  const std::vector<TestResult>& results);

}  // namespace topoguard::policytest
