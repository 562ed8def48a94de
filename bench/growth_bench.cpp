// Google Benchmark of how the webhook's answer time grows with the reviewed object (not a test; no
// thresholds). Each family builds AdmissionReview bodies of one shape at sizes from a few to
// 10,000 or 100,000 units (device requests: up to the API server's 32) and answers them through
// make_review_endpoint in mutate mode (parse, views, rules, patch, patched re-check, serialise),
// as `topoguard serve` does:
//   annotations/N           a ResourceClaimTemplate (unaligned GPU + NIC) with N annotation keys
//   requests_unaligned/N    N device requests (N/2 GPU, N/2 NIC), no constraint: N/2 fixes
//   requests_aligned/N      N/2 GPU-NIC pairs, each tied by its own pcieRoot constraint
//   shared_constraints/N    N/2 firstAvailable requests (a GPU and a NIC subrequest each) under
//                           one pcieRoot and one NUMA constraint naming every subrequest
//   requests_refused/N      N device requests, past the API's 32: refused as an input error
//   container_resources/N   a Pod whose container has N extended resources (limits and requests)
//   replica_templates/N     a PyTorchJob with N replica specs, each a pod template with GPU + NIC
// plus <family>/4MiB, the largest body of that shape under 4 MiB (the API server's limit is
// 3 MiB of object; the webhook's body limit is 4 MiB).
// After the runs it prints, per family, the exponent k of time ~ N^k fitted by least squares on
// log-log over all sizes and over the largest three (k near 1: linear), of CPU time (wall time
// in brackets; on a shared machine it also counts waiting for a core).
// Flags besides Google Benchmark's: --max_n=N skips sizes above N (for the quadratic baseline),
// --no_4mib skips the 4 MiB bodies.
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <benchmark/benchmark.h>

#include "growth_fit.h"
#include "topoguard/admission/review_endpoint.h"
#include "topoguard/policy/policy_loader.h"

namespace {

using topoguard::bench::fitted_exponent;
using topoguard::bench::GrowthPoint;
using topoguard::bench::GrowthSeries;

namespace admission = topoguard::admission;

constexpr std::size_t kFourMiB = std::size_t{4} << 20U;

std::string review(std::string_view group, std::string_view version, std::string_view kind,
                   std::string_view object) {
  std::string body = R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{)"
                     R"("uid":"00000000-0000-4000-8000-000000000001","kind":{"group":")";
  body += group;
  body += R"(","version":")";
  body += version;
  body += R"(","kind":")";
  body += kind;
  body += R"("},"namespace":"ml","name":"growth","operation":"CREATE",)"
          R"("userInfo":{"username":"bench"},"object":)";
  body += object;
  body += R"(,"oldObject":null,"dryRun":false}})";
  return body;
}

std::string gpu_request(const std::string& name) {
  return R"({"name":")" + name +
         R"(","exactly":{"deviceClassName":"gpu.nvidia.com","count":1,"selectors":[{"cel":)"
         R"({"expression":"device.attributes[\"gpu.nvidia.com\"].productName == \"H100\""}}]}})";
}

std::string nic_request(const std::string& name) {
  return R"({"name":")" + name +
         R"(","exactly":{"deviceClassName":"dranet.net","count":1,"selectors":[{"cel":)"
         R"({"expression":"device.attributes[\"dra.net\"].rdma == true"}}]}})";
}

std::string claim_template(std::string_view annotations, std::string_view requests,
                           std::string_view constraints) {
  std::string object =
      R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaimTemplate","metadata":)"
      R"({"name":"growth","namespace":"ml","annotations":{)";
  object += annotations;
  object += R"(}},"spec":{"spec":{"devices":{"requests":[)";
  object += requests;
  object += "]";
  if (!constraints.empty()) {
    object += R"(,"constraints":[)";
    object += constraints;
    object += "]";
  }
  object += "}}}}";
  return review("resource.k8s.io", "v1", "ResourceClaimTemplate", object);
}

void append_separated(std::string& out, const std::string& item) {
  if (!out.empty()) {
    out += ',';
  }
  out += item;
}

std::string annotations(std::size_t n) {
  std::string keys;
  for (std::size_t i = 0; i < n; ++i) {
    append_separated(keys, R"("example.com/key-)" + std::to_string(i) + R"(":"value")");
  }
  return claim_template(keys, gpu_request("gpu") + "," + nic_request("nic"), "");
}

std::string pairs_of_requests(std::size_t n) {
  std::string requests;
  for (std::size_t i = 0; i < n / 2; ++i) {
    append_separated(requests, gpu_request("gpu-" + std::to_string(i)));
    append_separated(requests, nic_request("nic-" + std::to_string(i)));
  }
  return requests;
}

std::string requests_unaligned(std::size_t n) { return claim_template("", pairs_of_requests(n), ""); }

std::string requests_aligned(std::size_t n) {
  std::string constraints;
  for (std::size_t i = 0; i < n / 2; ++i) {
    const std::string index = std::to_string(i);
    append_separated(constraints, R"({"requests":["gpu-)" + index + R"(","nic-)" + index +
                                      R"("],"matchAttribute":"resource.kubernetes.io/pcieRoot"})");
  }
  return claim_template("", pairs_of_requests(n), constraints);
}

std::string shared_constraints(std::size_t n) {
  std::string requests;
  std::string names;
  for (std::size_t i = 0; i < n; ++i) {
    const std::string name = "r-" + std::to_string(i);
    append_separated(
        requests,
        R"({"name":")" + name +
            R"(","firstAvailable":[{"name":"gpu","deviceClassName":"gpu.nvidia.com"},)"
            R"({"name":"nic","deviceClassName":"dranet.net"}]})");
    append_separated(names, "\"" + name + "/gpu\",\"" + name + "/nic\"");
  }
  const std::string constraints =
      R"({"requests":[)" + names + R"(],"matchAttribute":"resource.kubernetes.io/pcieRoot"},)" +
      R"({"requests":[)" + names + R"(],"matchAttribute":"resource.kubernetes.io/numaNode"})";
  return claim_template("", requests, constraints);
}

std::string container_resources(std::size_t n) {
  std::string quantities;
  for (std::size_t i = 0; i < n; ++i) {
    append_separated(quantities, (i % 2 == 0 ? R"("nvidia.com/mig-)" : R"("rdma/hca-)") +
                                     std::to_string(i) + R"(":"1")");
  }
  const std::string object =
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"growth","namespace":"ml"},)"
      R"("spec":{"containers":[{"name":"main","image":"trainer","resources":{"limits":{)" +
      quantities + R"(},"requests":{)" + quantities + "}}}]}}";
  return review("", "v1", "Pod", object);
}

std::string replica_templates(std::size_t n) {
  std::string specs;
  for (std::size_t i = 0; i < n; ++i) {
    append_separated(
        specs, R"("Worker-)" + std::to_string(i) +
                   R"(":{"replicas":1,"template":{"spec":{"containers":[{"name":"main",)"
                   R"("image":"trainer","resources":{"limits":{"nvidia.com/gpu":"8",)"
                   R"("rdma/ib":"1"}}}]}}})");
  }
  const std::string object =
      R"({"apiVersion":"kubeflow.org/v1","kind":"PyTorchJob","metadata":{"name":"growth",)"
      R"("namespace":"ml"},"spec":{"pytorchReplicaSpecs":{)" + specs + "}}}";
  return review("kubeflow.org", "v1", "PyTorchJob", object);
}

struct Family {
  std::string name;
  std::function<std::string(std::size_t)> body;
  std::vector<std::size_t> sizes;
};

std::vector<Family> families() {
  const std::vector<std::size_t> keys = {10, 100, 1000, 10000, 100000};
  // A claim holds at most 32 requests and a constraint names at most 32 (API validation).
  const std::vector<std::size_t> requests = {2, 4, 8, 16, 32};
  const std::vector<std::size_t> refused = {100, 1000, 10000, 100000};
  const std::vector<std::size_t> replicas = {2, 20, 200, 2000, 10000};
  return {{"annotations", annotations, keys},
          {"requests_unaligned", requests_unaligned, requests},
          {"requests_aligned", requests_aligned, requests},
          {"shared_constraints", [](std::size_t n) { return shared_constraints(n / 2); },
           requests},
          {"requests_refused", requests_unaligned, refused},
          {"container_resources", container_resources, keys},
          {"replica_templates", replica_templates, replicas}};
}

// The largest n whose body stays under 4 MiB, from the body's growth between two sizes.
std::size_t four_mib_size(const Family& family) {
  const std::size_t small = family.body(100).size();
  const std::size_t large = family.body(1100).size();
  const double per_unit = static_cast<double>(large - small) / 1000.0;
  auto n = static_cast<std::size_t>(static_cast<double>(kFourMiB - small) / per_unit) + 100;
  while (n > 0 && family.body(n).size() > kFourMiB) {
    n -= n / 100 + 1;
  }
  return n;
}

const admission::ReviewEndpoint& mutate_endpoint() {
  static const admission::ReviewEndpoint endpoint = [] {
    auto loaded = topoguard::policy::load_builtin_policies();
    if (!loaded) {
      std::abort();
    }
    auto policies = std::make_shared<const topoguard::policy::PolicySet>(std::move(*loaded));
    return admission::make_review_endpoint(
        [policies] { return policies; },
        {admission::Mode::kMutate, admission::FailureMode::kClosed});
  }();
  return endpoint;
}

void answer(benchmark::State& state, const std::string& body, std::size_t n) {
  const admission::ReviewEndpoint& endpoint = mutate_endpoint();
  std::size_t answer_bytes = 0;
  for (auto _ : state) {
    const admission::ReviewReply reply = endpoint(admission::ReviewCall{body, {}});
    if (reply.http_status != 200) {
      state.SkipWithError(("HTTP " + std::to_string(reply.http_status) + ": " + reply.http_error)
                              .c_str());
      return;
    }
    answer_bytes = reply.body.size();
    benchmark::DoNotOptimize(answer_bytes);
  }
  state.counters["n"] = static_cast<double>(n);
  state.counters["body_bytes"] = static_cast<double>(body.size());
  state.counters["answer_bytes"] = static_cast<double>(answer_bytes);
}

// Collects each run's time by family and size for the fit, and prints as the console does.
class GrowthReporter final : public benchmark::ConsoleReporter {
 public:
  // benchmark::BenchmarkReporter
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      const std::string name = run.benchmark_name();
      const std::size_t slash = name.find('/');
      const auto n = run.counters.find("n");
      if (slash != std::string::npos && n != run.counters.end() &&
          name.find("4MiB") == std::string::npos) {
        points_[name.substr(0, slash)].add(n->second.value, run);
      }
    }
  }

  // CPU time is fitted: on a shared machine wall time also counts the waits for a core.
  void print_exponents() const {
    std::printf("\nfitted exponent k of CPU time ~ n^k (least squares on log-log; wall time in "
                "brackets)\n");
    std::printf("%-20s %5s %15s %15s %10s %11s %11s\n", "family", "sizes", "k (all)",
                "k (largest 3)", "largest n", "CPU s", "wall s");
    for (const auto& [family, times] : points_) {
      const std::span<const GrowthPoint> cpu = times.cpu;
      const std::span<const GrowthPoint> wall = times.wall;
      const std::size_t tail = cpu.size() >= 3 ? cpu.size() - 3 : 0;
      std::printf("%-20s %5zu %6.2f [%6.2f] %6.2f [%6.2f] %10.0f %11.4f %11.4f\n",
                  family.c_str(), cpu.size(), fitted_exponent(cpu), fitted_exponent(wall),
                  fitted_exponent(cpu.subspan(tail)), fitted_exponent(wall.subspan(tail)),
                  cpu.back().n, cpu.back().seconds, wall.back().seconds);
    }
  }

 private:
  std::map<std::string, GrowthSeries> points_;
};

}  // namespace

int main(int argc, char** argv) {
  std::size_t max_n = 0;  // 0: no cap
  bool four_mib = true;
  std::vector<char*> rest;
  for (int i = 0; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.starts_with("--max_n=")) {
      max_n = std::strtoull(argv[i] + 8, nullptr, 10);
    } else if (arg == "--no_4mib") {
      four_mib = false;
    } else {
      rest.push_back(argv[i]);
    }
  }
  int rest_count = static_cast<int>(rest.size());
  benchmark::Initialize(&rest_count, rest.data());

  for (const Family& family : families()) {
    for (const std::size_t n : family.sizes) {
      if (max_n != 0 && n > max_n) {
        continue;
      }
      benchmark::RegisterBenchmark((family.name + "/" + std::to_string(n)).c_str(),
                                   [body = family.body(n), n](benchmark::State& state) {
                                     answer(state, body, n);
                                   })
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
    }
    if (four_mib) {
      const std::size_t n = four_mib_size(family);
      benchmark::RegisterBenchmark((family.name + "/4MiB").c_str(),
                                   [body = family.body(n), n](benchmark::State& state) {
                                     answer(state, body, n);
                                   })
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
    }
  }
  GrowthReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  reporter.print_exponents();
  benchmark::Shutdown();
  return 0;
}
