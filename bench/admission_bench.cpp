// Google Benchmark of the webhook's in-process request path, without the transport (not a test;
// no thresholds). What `topoguard serve` spends per review outside httplib and TLS:
//   admission/parse             parse_admission_review of the bench review (wire form: compact)
//   admission/handle_mutate     handle_admission in mutate mode (evaluate, patch check, re-evaluate)
//   admission/serialize         to_admission_review_json of the mutate response
//   admission/endpoint_mutate   make_review_endpoint: parse + handle + serialise, as served
//   admission/endpoint_validate the same in validate mode (one evaluation, no patch)
// The review is examples/admission/bench-rct-create.json, the body bench/webhook-load.sh POSTs.
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include <benchmark/benchmark.h>

#include "topoguard/admission/admission_handler.h"
#include "topoguard/admission/admission_review.h"
#include "topoguard/admission/review_endpoint.h"
#include "topoguard/policy/policy_loader.h"

namespace {

using topoguard::Json;
namespace admission = topoguard::admission;

// The bench review as the API server sends it: compact JSON.
const std::string& review_body() {
  static const std::string body = [] {
    std::ifstream in(TOPOGUARD_SOURCE_DIR "/examples/admission/bench-rct-create.json");
    std::stringstream text;
    text << in.rdbuf();
    return Json::parse(text.str()).dump();
  }();
  return body;
}

topoguard::policy::PolicySetPtr builtin() {
  static const topoguard::policy::PolicySetPtr policies = [] {
    auto loaded = topoguard::policy::load_builtin_policies();
    if (!loaded) {
      std::abort();
    }
    return std::make_shared<const topoguard::policy::PolicySet>(std::move(*loaded));
  }();
  return policies;
}

void BM_Parse(benchmark::State& state) {
  const std::string& body = review_body();
  for (auto _ : state) {
    auto parsed = admission::parse_admission_review(body);
    benchmark::DoNotOptimize(parsed);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * body.size()));
}
BENCHMARK(BM_Parse)->Name("admission/parse");

void BM_HandleMutate(benchmark::State& state) {
  const auto request = admission::parse_admission_review(review_body());
  if (!request) {
    state.SkipWithError("bench review does not parse");
    return;
  }
  const admission::HandlerOptions options{admission::Mode::kMutate,
                                          admission::FailureMode::kClosed};
  for (auto _ : state) {
    auto handled = admission::handle_admission(*request, *builtin(), options);
    benchmark::DoNotOptimize(handled);
  }
}
BENCHMARK(BM_HandleMutate)->Name("admission/handle_mutate");

void BM_Serialize(benchmark::State& state) {
  const auto request = admission::parse_admission_review(review_body());
  if (!request) {
    state.SkipWithError("bench review does not parse");
    return;
  }
  const auto handled = admission::handle_admission(
      *request, *builtin(), {admission::Mode::kMutate, admission::FailureMode::kClosed});
  for (auto _ : state) {
    auto text = admission::to_admission_review_json(handled.response);
    benchmark::DoNotOptimize(text);
  }
}
BENCHMARK(BM_Serialize)->Name("admission/serialize");

void run_endpoint(benchmark::State& state, admission::Mode mode) {
  const admission::ReviewEndpoint endpoint = admission::make_review_endpoint(
      [] { return builtin(); }, {mode, admission::FailureMode::kClosed});
  admission::ReviewCall call;
  call.body = review_body();
  for (auto _ : state) {
    auto reply = endpoint(call);
    benchmark::DoNotOptimize(reply);
  }
}

void BM_EndpointMutate(benchmark::State& state) { run_endpoint(state, admission::Mode::kMutate); }
BENCHMARK(BM_EndpointMutate)->Name("admission/endpoint_mutate");

void BM_EndpointValidate(benchmark::State& state) {
  run_endpoint(state, admission::Mode::kValidate);
}
BENCHMARK(BM_EndpointValidate)->Name("admission/endpoint_validate");

}  // namespace

BENCHMARK_MAIN();
