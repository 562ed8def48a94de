// Growth of `topoguard audit` and `topoguard fix` with the input: one file of N documents (N =
// 2,500 to 20,000, doubling; half unaligned templates that get a fix, half aligned ones), timed
// as the commands run (parse + audit, then the fix on top), each size once. Prints the seconds
// per size and the exponent of N fitted by least squares to log(time) (1.0 = linear, 2.0 =
// quadratic). Usage: topoguard_fix_growth [MAX_DOCUMENTS]
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "topoguard/audit/audit_runner.h"
#include "topoguard/audit/manifest_fixer.h"
#include "topoguard/audit/manifest_reader.h"
#include "topoguard/policy/policy_loader.h"

namespace {

using Clock = std::chrono::steady_clock;

std::string manifests(std::size_t count) {
  std::string text;
  for (std::size_t i = 0; i < count; ++i) {
    const bool aligned = i % 2 == 1;
    text += "---\n# template " + std::to_string(i) + "\n";
    text += "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata:\n  name: t" +
            std::to_string(i) + "\n  namespace: ml\nspec:\n  spec:\n    devices:\n      requests:\n"
            "      - name: gpu\n        exactly: {deviceClassName: gpu.nvidia.com}\n"
            "      - name: nic\n        exactly: {deviceClassName: dranet}\n";
    if (aligned) {
      text += "      constraints:\n      - requests: [gpu, nic]\n"
              "        matchAttribute: resource.kubernetes.io/pcieRoot\n";
    }
  }
  return text;
}

double seconds(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

// Least-squares slope of log(seconds) over log(n).
double exponent(const std::vector<double>& sizes, const std::vector<double>& times) {
  double mean_x = 0;
  double mean_y = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    mean_x += std::log(sizes[i]) / static_cast<double>(sizes.size());
    mean_y += std::log(times[i]) / static_cast<double>(sizes.size());
  }
  double covariance = 0;
  double variance = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    covariance += (std::log(sizes[i]) - mean_x) * (std::log(times[i]) - mean_y);
    variance += (std::log(sizes[i]) - mean_x) * (std::log(sizes[i]) - mean_x);
  }
  return covariance / variance;
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t max_documents = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 20000;
  auto policies = topoguard::policy::load_builtin_policies();
  if (!policies) {
    std::fprintf(stderr, "%s\n", policies.error().to_string().c_str());
    return 2;
  }
  std::vector<double> sizes;
  std::vector<double> audit_times;
  std::vector<double> fix_times;
  std::printf("%10s %12s %12s %10s\n", "documents", "audit s", "fix s", "fixes");
  for (std::size_t n = 2500; n <= max_documents; n *= 2) {
    const std::string text = manifests(n);
    const Clock::time_point start = Clock::now();
    const topoguard::audit::ManifestSet set = topoguard::audit::parse_manifests({{"in.yaml", text}});
    const topoguard::audit::AuditRun run = topoguard::audit::run_audit(set, *policies);
    const Clock::time_point audited = Clock::now();
    const topoguard::audit::FixOutcome outcome = topoguard::audit::apply_fixes(set, run);
    const Clock::time_point fixed = Clock::now();
    const std::size_t fixes = outcome.files.at(0).changes.size();
    if (fixes != n / 2 || !outcome.errors.empty()) {
      std::fprintf(stderr, "expected %zu fixes, got %zu\n", n / 2, fixes);
      return 1;
    }
    sizes.push_back(static_cast<double>(n));
    audit_times.push_back(seconds(start, audited));
    fix_times.push_back(seconds(start, fixed));
    std::printf("%10zu %12.3f %12.3f %10zu\n", n, audit_times.back(), fix_times.back(), fixes);
  }
  if (sizes.size() >= 2) {
    std::printf("fitted exponent: audit %.2f, fix %.2f (1.0 = linear)\n",
                exponent(sizes, audit_times), exponent(sizes, fix_times));
  }
  return 0;
}
