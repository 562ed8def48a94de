// Google Benchmark programs for the engine and the audit (not tests; no thresholds).
//   engine/template    evaluate() on a typical unaligned v1 ResourceClaimTemplate (fix path)
//   engine/deployment  evaluate() on a Deployment with device-plugin GPU + RDMA resources
//   audit/bundle       parse + audit of a generated 10,000-document bundle
//   baseline/yaml_cpp  yaml-cpp parse-only of the same bundle (the ratio's denominator)
#include <string>

#include <benchmark/benchmark.h>
#include <yaml-cpp/yaml.h>

#include "topoguard/audit/audit_runner.h"
#include "topoguard/audit/manifest_reader.h"
#include "topoguard/common/yaml_document.h"
#include "topoguard/engine/evaluate.h"
#include "topoguard/policy/policy_loader.h"

namespace {

using topoguard::Json;

const char* const kTemplate = R"(apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: gpu-nic-NAME
  namespace: inference
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.nvidia.com
          count: 1
          selectors:
          - cel:
              expression: device.attributes["gpu.nvidia.com"].productName == "NVIDIA A100-SXM4-80GB"
      - name: nic
        exactly:
          deviceClassName: sriovnetwork.k8snetworkplumbingwg.io
          count: 1
          selectors:
          - cel:
              expression: device.attributes["sriovnetwork.k8snetworkplumbingwg.io"].rdmaCapable == true
)";

const char* const kAlignedTemplate = R"(apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: aligned-NAME
  namespace: inference
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu.nvidia.com}
      - name: nic
        exactly: {deviceClassName: dranet}
      constraints:
      - requests: [gpu, nic]
        matchAttribute: resource.kubernetes.io/pcieRoot
)";

const char* const kDeployment = R"(apiVersion: apps/v1
kind: Deployment
metadata:
  name: decode-NAME
  namespace: inference
  labels: {llm-d.ai/role: decode}
spec:
  replicas: 2
  selector:
    matchLabels: {app: decode}
  template:
    metadata:
      labels: {app: decode, llm-d.ai/role: decode}
    spec:
      resourceClaims:
      - name: pair
        resourceClaimTemplateName: aligned-NAME
      containers:
      - name: vllm
        image: vllm/vllm-openai:latest
        args: ["--model", "meta-llama/Llama-3.1-8B", "--kv-transfer-config", "{}"]
        env:
        - {name: VLLM_NIXL_SIDE_CHANNEL_HOST, value: "0.0.0.0"}
        ports:
        - {containerPort: 8000, name: http}
        resources:
          limits: {nvidia.com/gpu: "1", rdma/ib: "1", memory: 64Gi, cpu: "8"}
          requests: {nvidia.com/gpu: "1", rdma/ib: "1", memory: 64Gi, cpu: "8"}
)";

const char* const kConfigMap = R"(apiVersion: v1
kind: ConfigMap
metadata:
  name: config-NAME
  namespace: inference
data:
  key: value
  other: "42"
)";

std::string instantiate(const char* text, int index) {
  std::string document(text);
  const std::string name = std::to_string(index);
  for (std::size_t at = document.find("NAME"); at != std::string::npos;
       at = document.find("NAME", at)) {
    document.replace(at, 4, name);
  }
  return document;
}

// 10,000 documents: templates (half unaligned), Deployments referencing them, ConfigMaps.
const std::string& bundle() {
  static const std::string text = [] {
    std::string out;
    const char* const kinds[] = {kTemplate, kAlignedTemplate, kDeployment, kConfigMap};
    for (int i = 0; i < 10'000; ++i) {
      out += "---\n";
      out += instantiate(kinds[i % 4], i / 4);
    }
    return out;
  }();
  return text;
}

const topoguard::policy::PolicySet& builtin() {
  static const topoguard::policy::PolicySet policies = [] {
    auto loaded = topoguard::policy::load_builtin_policies();
    if (!loaded) {
      std::abort();  // the built-in policy is part of the binary; it must load
    }
    return std::move(loaded).value();
  }();
  return policies;
}

Json parse_one(const char* text) {
  auto stream = topoguard::parse_yaml_stream(instantiate(text, 0), "bench.yaml");
  return stream.documents.at(0).value;
}

void engine_evaluate(benchmark::State& state, const char* manifest) {
  const Json object = parse_one(manifest);
  const topoguard::engine::Inventory inventory;
  for (auto _ : state) {
    auto evaluation = topoguard::engine::evaluate(object, builtin(), inventory);
    benchmark::DoNotOptimize(evaluation);
  }
}
BENCHMARK_CAPTURE(engine_evaluate, template, kTemplate)->Name("engine/template");
BENCHMARK_CAPTURE(engine_evaluate, deployment, kDeployment)->Name("engine/deployment");

void audit_bundle(benchmark::State& state) {
  for (auto _ : state) {
    auto manifests = topoguard::audit::parse_manifests({{"bundle.yaml", bundle()}});
    auto run = topoguard::audit::run_audit(manifests, builtin());
    benchmark::DoNotOptimize(run);
  }
  state.SetItemsProcessed(state.iterations() * 10'000);
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(bundle().size()));
}
BENCHMARK(audit_bundle)->Name("audit/bundle_10k")->Unit(benchmark::kMillisecond);

void yaml_cpp_baseline(benchmark::State& state) {
  for (auto _ : state) {
    auto documents = YAML::LoadAll(bundle());
    benchmark::DoNotOptimize(documents);
  }
  state.SetItemsProcessed(state.iterations() * 10'000);
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(bundle().size()));
}
BENCHMARK(yaml_cpp_baseline)->Name("baseline/yaml_cpp_parse_10k")->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
