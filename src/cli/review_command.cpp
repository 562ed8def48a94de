// `topoguard review`: one AdmissionReview request from a file or stdin -> the response the
// server would send, through the same endpoint the server wraps (admission::ReviewEndpoint).
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "commands.h"
#include "topoguard/admission/review_endpoint.h"
#include "topoguard/common/printable_text.h"
#include "topoguard/policy/policy_loader.h"

namespace topoguard::cli {
namespace {

struct ReviewFlags {
  std::vector<std::string> policies;
  std::string mode;
  std::string failure_mode = "closed";
  std::size_t body_limit = 4 * 1024 * 1024;
  std::string input;
};

bool read_input(const std::string& path, std::string& out) {
  if (path == "-") {
    out.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    return !std::cin.bad();
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return false;
  }
  std::ostringstream text;
  text << in.rdbuf();
  out = text.str();
  return true;
}

int run_review(const ReviewFlags& flags) {
  std::string body;
  if (!read_input(flags.input, body)) {
    std::cerr << "topoguard review: cannot read " << printable(flags.input) << std::endl;
    return kExitUsage;
  }
  Result<policy::PolicySet> loaded = policy::load_policies(flags.policies);
  if (!loaded) {
    std::cerr << "topoguard review: " << loaded.error().to_string() << std::endl;
    return kExitUsage;
  }
  auto policies = std::make_shared<const policy::PolicySet>(std::move(*loaded));
  admission::HandlerOptions options;
  options.mode = flags.mode == "mutate" ? admission::Mode::kMutate : admission::Mode::kValidate;
  options.failure_mode = flags.failure_mode == "open" ? admission::FailureMode::kOpen
                                                      : admission::FailureMode::kClosed;
  const admission::ReviewEndpoint endpoint = admission::with_body_limit(
      flags.body_limit,
      admission::make_review_endpoint([policies] { return policies; }, options));

  admission::ReviewCall call;
  call.body = body;
  const admission::ReviewReply reply = endpoint(call);
  if (reply.http_status != 200) {
    std::cerr << "topoguard review: " << printable(flags.input) << ": HTTP " << reply.http_status
              << ": " << printable(reply.http_error) << std::endl;
    return kExitUsage;
  }
  std::cout << reply.body << std::endl;
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
  review->add_option("input", flags->input, "AdmissionReview JSON file, or - for stdin")
      ->required()
      ->type_name("FILE");
  review->callback([flags, &exit_code] { exit_code = run_review(*flags); });
}

}  // namespace topoguard::cli
