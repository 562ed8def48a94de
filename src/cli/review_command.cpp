// `topoguard review`: one AdmissionReview request from a file or stdin -> the response the
// server would send, through the same endpoint the server wraps (admission::ReviewEndpoint).
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "commands.h"
#include "input_options.h"
#include "namespace_labels_options.h"
#include "topoguard/admission/review_endpoint.h"
#include "topoguard/audit/audit_report.h"
#include "topoguard/common/printable_text.h"
#include "topoguard/common/text_file.h"
#include "topoguard/engine/inventory.h"
#include "topoguard/policy/policy_loader.h"

namespace topoguard::cli {
namespace {

struct ReviewFlags {
  std::vector<std::string> policies;
  std::string mode;
  std::string failure_mode = "closed";
  std::size_t body_limit = 4 * 1024 * 1024;
  std::string namespace_labels;
  std::string input;
};

// The Namespaces of --namespace-labels and the inventory that points into them: what the
// decision knows besides the object, as the server's cluster cache would tell it.
struct NamespaceInventory {
  std::vector<Json> namespaces;
  engine::Inventory inventory;
};

// The request, read up to the body limit the server would apply.
Result<std::string> read_input(const ReviewFlags& flags) {
  if (flags.input == "-") {
    return read_text_stream(std::cin, "-", flags.body_limit);
  }
  return read_text_file(flags.input, flags.body_limit);
}

int run_review(const ReviewFlags& flags) {
  if (!stdin_read_once("review", flags.policies, {audit::ManifestPath{flags.input, false}})) {
    return kExitUsage;
  }
  std::optional<policy::PolicySet> loaded = load_command_policies("review", flags.policies);
  if (!loaded) {
    return kExitUsage;
  }
  Result<std::string> body = read_input(flags);
  if (!body) {
    std::cerr << "topoguard review: " << body.error().to_string() << std::endl;
    return kExitUsage;
  }
  admission::InventorySource inventory_source;
  if (!flags.namespace_labels.empty()) {
    auto held = std::make_shared<NamespaceInventory>();
    if (!load_namespace_labels("review", flags.namespace_labels, held->namespaces)) {
      return kExitUsage;
    }
    for (const Json& namespace_object : held->namespaces) {
      held->inventory.add(namespace_object);
    }
    inventory_source = [inventory = std::shared_ptr<const engine::Inventory>(
                            held, &held->inventory)] { return inventory; };
  }
  auto policies = std::make_shared<const policy::PolicySet>(std::move(*loaded));
  admission::HandlerOptions options;
  options.mode = flags.mode == "mutate" ? admission::Mode::kMutate : admission::Mode::kValidate;
  options.failure_mode = flags.failure_mode == "open" ? admission::FailureMode::kOpen
                                                      : admission::FailureMode::kClosed;
  const admission::ReviewEndpoint endpoint = admission::with_body_limit(
      flags.body_limit,
      admission::make_review_endpoint([policies] { return policies; }, options,
                                      std::move(inventory_source)));

  admission::ReviewCall call;
  call.body = std::move(*body);
  const admission::ReviewReply reply = endpoint(call);
  if (reply.http_status != 200) {
    std::cerr << "topoguard review: " << printable(flags.input) << ": HTTP " << reply.http_status
              << ": " << printable(reply.http_error) << std::endl;
    return kExitUsage;
  }
  std::cout << reply.body << std::endl;
  if (!reply.outcome.unknown_namespace.empty()) {
    std::cerr << "topoguard review: " << printable(reply.request.kind) << " "
              << printable(reply.request.name) << " was judged without the labels of namespace \""
              << printable(reply.outcome.unknown_namespace) << "\", "
              << audit::kUnknownLabelsMeaning << " (auditAnnotations.unknown says which)\n"
              << "  give the labels with " << namespace_labels_how("") << '\n';
  }
  return kExitOk;
}

}  // namespace

void add_review_command(CLI::App& app, int& exit_code) {
  CLI::App* review = app.add_subcommand(
      "review", "Print the AdmissionReview response the webhook would send for a request");
  auto flags = std::make_shared<ReviewFlags>();
  add_policies_option(*review, flags->policies);
  review->add_option("--mode", flags->mode, "validate or mutate (the /validate or /mutate path)")
      ->required()
      ->check(CLI::IsMember({"validate", "mutate"}));
  review->add_option("--failure-mode", flags->failure_mode, "closed or open")
      ->check(CLI::IsMember({"closed", "open"}))
      ->capture_default_str();
  review->add_option("--body-limit", flags->body_limit, "Largest request in bytes")
      ->capture_default_str()
      ->type_name("BYTES");
  add_namespace_labels_option(*review, flags->namespace_labels);
  review->add_option("input", flags->input, "AdmissionReview JSON file, or - for stdin")
      ->required()
      ->type_name("FILE");
  review->callback([flags, &exit_code] { exit_code = run_review(*flags); });
}

}  // namespace topoguard::cli
