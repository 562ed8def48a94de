// libFuzzer target for the audit's input path: arbitrary bytes as a manifest file, read as a
// multi-document YAML stream (JSON included, `kind: List` expanded) and audited with the built-in
// policy. Besides crashes, hangs and sanitizer reports it aborts when a contract breaks: every
// error names the file, every finding is in that file and refers to an audited resource, and no
// more resources are audited than manifests were read.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "topoguard/audit/audit_runner.h"
#include "topoguard/audit/manifest_reader.h"
#include "topoguard/policy/policy_loader.h"

namespace {

namespace audit = topoguard::audit;
namespace policy = topoguard::policy;

constexpr const char* kFileName = "fuzz.yaml";

[[noreturn]] void contract_broken(const char* what) {
  std::fprintf(stderr, "yaml_manifest_fuzz: contract broken: %s\n", what);
  std::abort();
}

const policy::PolicySet& builtin() {
  static const policy::PolicySet policies = [] {
    auto loaded = policy::load_builtin_policies();
    if (!loaded) {
      contract_broken("the built-in policy does not load");
    }
    return std::move(*loaded);
  }();
  return policies;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::pair<std::string, std::string>> texts;
  texts.emplace_back(kFileName, std::string(reinterpret_cast<const char*>(data), size));
  const audit::ManifestSet manifests = audit::parse_manifests(std::move(texts));
  for (const topoguard::Error& error : manifests.errors) {
    if (error.location.file != kFileName) {  // reading errors always name their file
      contract_broken("a reading error does not name the file");
    }
  }
  const audit::AuditRun run = audit::run_audit(manifests, builtin());
  const audit::AuditReport& report = run.report;
  if (report.resources.size() > manifests.manifests.size() ||
      run.evaluations.size() != report.resources.size()) {
    contract_broken("audited resources do not match the manifests read");
  }
  for (const audit::ReportedFinding& finding : report.findings) {
    if (finding.file != kFileName || finding.line < 0 || finding.resource >= report.resources.size()) {
      contract_broken("a finding is not located in an audited resource of the file");
    }
  }
  for (const topoguard::Error& error : report.errors) {
    if (!error.location.file.empty() && error.location.file != kFileName) {
      contract_broken("an audit error names another file");
    }
  }
  return 0;
}
