// libFuzzer target for the webhook's trust boundary: arbitrary bytes as an AdmissionReview body,
// through the validating review endpoint the HTTPS server and `topoguard review` share, and
// parse_admission_review + handle_admission in mutate mode (built-in policy, failure mode closed
// and open).
// Besides crashes and sanitizer reports it checks the contract the API server relies on, and
// aborts when it breaks: uid echoed, no patch on validate, on a denial or outside CREATE, every
// patch applies to the object, and every answer is JSON.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "topoguard/admission/admission_handler.h"
#include "topoguard/admission/admission_review.h"
#include "topoguard/admission/review_endpoint.h"
#include "topoguard/common/json.h"
#include "topoguard/engine/json_patch.h"
#include "topoguard/policy/policy_loader.h"
#include "topoguard/policy/policy_set.h"

namespace {

using topoguard::Json;
namespace admission = topoguard::admission;
namespace policy = topoguard::policy;

[[noreturn]] void contract_broken(const char* what, std::string_view detail) {
  std::fprintf(stderr, "admission_review_fuzz: contract broken: %s: %.*s\n", what,
               static_cast<int>(detail.size()), detail.data());
  std::abort();
}

const policy::PolicySetPtr& builtin_policies() {
  static const policy::PolicySetPtr policies = [] {
    auto loaded = policy::load_builtin_policies();
    if (!loaded) {
      contract_broken("built-in policy does not load", loaded.error().to_string());
    }
    return std::make_shared<const policy::PolicySet>(std::move(loaded).value());
  }();
  return policies;
}

void check_mutate_response(const admission::AdmissionRequest& request,
                           const admission::HandledReview& handled) {
  const admission::AdmissionResponse& response = handled.response;
  if (response.uid != request.uid) {
    contract_broken("uid not echoed", response.uid);
  }
  if (!response.patch.empty()) {
    if (request.operation != "CREATE") {
      contract_broken("patch outside CREATE", request.operation);
    }
    if (!response.allowed) {
      contract_broken("patch on a denial", admission::patch_json(response.patch));
    }
    // The API server fails the request on a patch that does not apply, even when failing open.
    auto patched = topoguard::engine::apply_patch(request.object, response.patch);
    if (!patched) {
      contract_broken("patch does not apply", patched.error().to_string());
    }
  }
  const std::string wire = admission::to_admission_review_json(response);
  const Json parsed = Json::parse(wire, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded() || !parsed.contains("response")) {
    contract_broken("response is not an AdmissionReview", wire);
  }
  const Json& wire_response = parsed["response"];
  if (wire_response.value("uid", std::string()) != request.uid) {
    contract_broken("uid not echoed on the wire", wire);
  }
  if (wire_response.contains("patch") != wire_response.contains("patchType")) {
    contract_broken("patch without patchType or the reverse", wire);
  }
}

// The validating endpoint end to end: a status the server may send, a JSON body, and for 200 an
// AdmissionReview without a patch.
void check_validate_endpoint(const admission::ReviewEndpoint& endpoint, std::string_view body) {
  const admission::ReviewReply reply = endpoint(admission::ReviewCall{body, {}});
  if (reply.http_status != 200 && reply.http_status != 400 && reply.http_status != 413) {
    contract_broken("unexpected HTTP status", std::to_string(reply.http_status));
  }
  const Json parsed = Json::parse(reply.body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) {
    contract_broken("answer body is not JSON", reply.body);
  }
  if (reply.http_status == 200) {
    if (!parsed.contains("response") || parsed["response"].contains("patch") ||
        parsed["response"].contains("patchType")) {
      contract_broken("validate answered without a response or with a patch", reply.body);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  const policy::PolicySetPtr& policies = builtin_policies();

  static const admission::ReviewEndpoint kValidateEndpoint = admission::with_body_limit(
      std::size_t{4} << 20U, admission::make_review_endpoint(
                                 [] { return builtin_policies(); },
                                 {admission::Mode::kValidate, admission::FailureMode::kClosed}));
  check_validate_endpoint(kValidateEndpoint, body);

  // Mutation is where a wrong answer breaks clusters (a patch that does not apply fails the
  // request even under failurePolicy Ignore), so it is checked on the handler's own result.
  auto request = admission::parse_admission_review(body);
  if (!request) {
    return 0;
  }
  for (admission::FailureMode failure :
       {admission::FailureMode::kClosed, admission::FailureMode::kOpen}) {
    check_mutate_response(*request, admission::handle_admission(
                                        *request, *policies, {admission::Mode::kMutate, failure}));
  }
  return 0;
}
