// `topoguard policy compile`: flags, files and output only; the work is native::compile_policies()
// and engine::device_class_roles().
#include <iostream>
#include <string>
#include <vector>

#include "commands.h"
#include "input_options.h"
#include "conventions.h"
#include "topoguard/audit/cluster_state_loader.h"
#include "topoguard/audit/manifest_reader.h"
#include "topoguard/common/json_writer.h"
#include "topoguard/common/printable_text.h"
#include "topoguard/common/yaml_document.h"
#include "topoguard/engine/class_roles.h"
#include "topoguard/native/native_policy.h"
#include "topoguard/policy/policy_loader.h"

namespace topoguard::cli {

namespace {

struct CompileCommandOptions {
  std::vector<std::string> policies;
  std::vector<std::string> cluster_state;
  std::string kubernetes_version = "1.36";
  std::string format = "yaml";
  bool strict = false;
  bool show_costs = false;
};

std::string thousands(std::uint64_t value) {
  std::string digits = std::to_string(value);
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) {
    digits.insert(static_cast<std::size_t>(i), ",");
  }
  return digits;
}

const native::ExpressionCost* largest_cost(const native::CompiledPolicies& compiled) {
  const native::ExpressionCost* largest = nullptr;
  for (const native::ExpressionCost& cost : compiled.costs) {
    if (largest == nullptr || cost.cost > largest->cost) {
      largest = &cost;
    }
  }
  return largest;
}

// The header: what the objects are for, the cost bound, and what stays with the webhook.
std::vector<std::string> header(const native::CompiledPolicies& compiled,
                                const native::KubernetesVersion& version) {
  std::vector<std::string> lines{
      "topoguard policy compile: " + std::to_string(compiled.objects.size()) +
      " objects for Kubernetes " + std::to_string(version.major) + "." +
      std::to_string(version.minor) + " (resource.k8s.io/v1 claims and claim templates, CREATE)"};
  if (const native::ExpressionCost* largest = largest_cost(compiled)) {
    lines.push_back(
        "cost bound (cel-go cost units, at 32 requests x 8 subrequests x 32 "
        "constraints): largest expression " +
        thousands(largest->cost) + " (" + largest->object + " " + largest->field +
        "), largest policy " + thousands(compiled.largest_policy_cost) +
        "; the API server allows " + thousands(native::kPerCallLimit) + " per expression and " +
        thousands(native::kRuntimeBudget) + " per policy evaluation");
  }
  if (!compiled.not_compiled.empty()) {
    lines.emplace_back("not compiled (the webhook decides these):");
    for (const std::string& note : compiled.not_compiled) {
      lines.push_back("  - " + note);
    }
  }
  if (!compiled.webhook_only.empty()) {
    lines.emplace_back("for the webhook only (native policies never decide these):");
    for (const std::string& note : compiled.webhook_only) {
      lines.push_back("  - " + note);
    }
  }
  if (!compiled.limits.empty()) {
    lines.emplace_back(
        "limits of the compiled CEL (past them it allows, and the webhook decides):");
    for (const std::string& note : compiled.limits) {
      lines.push_back("  - " + note);
    }
  }
  return lines;
}

int run_compile(const CompileCommandOptions& options) {
  Result<native::KubernetesVersion> version =
      native::parse_kubernetes_version(options.kubernetes_version);
  if (!version) {
    std::cerr << "topoguard policy compile: " << printable(version.error().message) << std::endl;
    return kExitUsage;
  }
  std::vector<audit::ManifestPath> inputs;
  for (const std::string& path : options.cluster_state) {
    inputs.push_back(audit::ManifestPath{path, true});
  }
  if (!stdin_read_once("policy compile", options.policies, inputs)) {
    return kExitUsage;
  }
  const std::optional<policy::PolicySet> policies =
      load_command_policies("policy compile", options.policies);
  if (!policies) {
    return kExitUsage;
  }
  native::CompileOptions compile_options{*version, {}, !options.cluster_state.empty()};
  if (!options.cluster_state.empty()) {
    const audit::ManifestSet manifests = audit::read_manifests(options.cluster_state, std::cin);
    const audit::LoadedClusterState loaded = audit::load_cluster_state(manifests);
    if (!manifests.errors.empty() || !loaded.errors.empty()) {
      for (const Error& error : manifests.errors) {
        std::cerr << "topoguard policy compile: " << error.to_string() << '\n';
      }
      for (const Error& error : loaded.errors) {
        std::cerr << "topoguard policy compile: " << error.to_string() << '\n';
      }
      std::cerr << std::flush;
      return kExitUsage;
    }
    for (const policy::Policy& policy : policies->policies()) {
      auto& classes = compile_options.device_classes[policy.name];
      for (const engine::DeviceClassRole& role : engine::device_class_roles(policy, loaded.state)) {
        classes.push_back({role.name, role.gpu, role.nic});
      }
    }
  }
  Result<native::CompiledPolicies> compiled = native::compile_policies(*policies, compile_options);
  if (!compiled) {
    std::cerr << "topoguard policy compile: " << compiled.error().to_string() << std::endl;
    return kExitUsage;
  }
  if (options.show_costs) {
    for (const native::ExpressionCost& cost : compiled->costs) {
      std::cerr << printable(cost.object) << ' ' << printable(cost.field) << ": "
                << thousands(cost.cost) << '\n';
    }
  }
  const std::vector<std::string> lines = header(*compiled, *version);
  if (options.strict && !compiled->not_compiled.empty()) {
    std::cerr << "topoguard policy compile: --strict: " << compiled->not_compiled.size()
              << (compiled->not_compiled.size() == 1 ? " part" : " parts")
              << " of the policies did not compile (the webhook decides them):\n";
    for (const std::string& note : compiled->not_compiled) {
      std::cerr << "  - " << printable(note) << '\n';
    }
    std::cerr << std::flush;
    return kExitFindings;
  }
  if (options.format == "json") {
    // JSON has no comments: the header goes to standard error.
    for (const std::string& line : lines) {
      std::cerr << "# " << printable(line) << '\n';
    }
    Json list = {{"apiVersion", "v1"}, {"kind", "List"}, {"items", compiled->objects}};
    std::cout << to_json_text(list, 2) << std::endl;
    return kExitOk;
  }
  for (const std::string& line : lines) {
    std::cout << "# " << printable(line) << '\n';
  }
  for (const Json& object : compiled->objects) {
    std::cout << "---\n" << to_yaml(object);
  }
  std::cout << std::flush;
  return kExitOk;
}

}  // namespace

void add_policy_compile_command(CLI::App& policy, int& exit_code) {
  auto options = std::make_shared<CompileCommandOptions>();
  CLI::App* compile = policy.add_subcommand(
      "compile",
      "Compile policies into ValidatingAdmissionPolicies and a MutatingAdmissionPolicy (with "
      "bindings) that the API server enforces without the webhook");
  add_policies_option(*compile, options->policies);
  compile
      ->add_option("--cluster-state", options->cluster_state,
                   "DeviceClasses (and ResourceSlices) whose classes get roles by driver, baked "
                   "into the output; repeatable, - for stdin (default: class names only)")
      ->type_name("PATH");
  compile
      ->add_option("--kubernetes-version", options->kubernetes_version,
                   "Target version: 1.36+ gets MutatingAdmissionPolicy v1, 1.34/1.35 v1beta1 "
                   "(feature gate)")
      ->type_name("VERSION")
      ->capture_default_str();
  add_output_option(*compile, options->format, {"yaml", "json"},
                    "Output: yaml (a stream) or json (a List)");
  compile->add_flag("--strict", options->strict,
                    "Fail (exit 1), naming them, when parts of the policies do not compile "
                    "(the header's \"not compiled\"; what native policies never decide, the "
                    "header's \"for the webhook only\", does not fail it; default: off)");
  compile->add_flag("--show-costs", options->show_costs,
                    "Print every expression's cost bound on standard error (default: off)");
  compile->callback([options, &exit_code] { exit_code = run_compile(*options); });
}

}  // namespace topoguard::cli
