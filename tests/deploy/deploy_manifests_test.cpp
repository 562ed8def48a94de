// deploy/webhook is data that no compiler checks, and a mistake in it (failurePolicy, selector,
// a port or a file name) breaks clusters rather than builds. These tests read the manifests with
// the project's own YAML parser and pin the settings the admission contract depends on.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "note_name.h"
#include "test_paths.h"
#include "topoguard/common/json.h"
#include "topoguard/common/yaml_document.h"
#include "topoguard/k8s/kinds.h"
#include "topoguard/k8s/pod_template.h"
#include "topoguard/kube/discovery.h"

namespace topoguard {
namespace {

namespace fs = std::filesystem;

const fs::path kDeployDir = fs::path(test::source_dir()) / "deploy" / "webhook";

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<fs::path> yaml_files_under(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    const std::string ext = entry.path().extension().string();
    if (entry.is_regular_file() && (ext == ".yaml" || ext == ".yml")) {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<Json> parse_file(const fs::path& path) {
  YamlStream stream = parse_yaml_stream(read_file(path), path.string());
  std::vector<Json> documents;
  for (const Error& error : stream.errors) {
    ADD_FAILURE() << error.to_string();
  }
  for (YamlDocument& document : stream.documents) {
    documents.push_back(std::move(document.value));
  }
  return documents;
}

// Every object of the base (and of the overlays and components when `with_overlay`), keyed
// "Kind/name".
std::map<std::string, Json> load_objects(bool with_overlay) {
  std::map<std::string, Json> objects;
  for (const fs::path& path : yaml_files_under(kDeployDir)) {
    const std::string relative = fs::relative(path, kDeployDir).generic_string();
    const bool in_overlay = relative.find('/') != std::string::npos && relative.rfind("base/", 0) != 0;
    if (relative.rfind("base/policies/", 0) == 0 || (in_overlay && !with_overlay)) {
      continue;
    }
    for (Json& document : parse_file(path)) {
      if (document.is_object() && document.contains("kind") && document.contains("metadata")) {
        std::string key = document["kind"].get<std::string>() + "/" +
                          document["metadata"]["name"].get<std::string>();
        objects.emplace(std::move(key), std::move(document));
      }
    }
  }
  return objects;
}

const Json& object_named(const std::map<std::string, Json>& objects, const std::string& key) {
  static const Json kNull;
  auto it = objects.find(key);
  if (it == objects.end()) {
    ADD_FAILURE() << "deploy/webhook has no " << key;
    return kNull;
  }
  return it->second;
}

// Every YAML file in deploy/webhook parses, and every document is a Kubernetes object, a
// kustomization, an AlignmentPolicy, or a JSON6902 patch (a list of operations).
TEST(DeployManifestsTest, EveryFileParses) {
  const std::vector<fs::path> files = yaml_files_under(kDeployDir);
  ASSERT_GE(files.size(), 8u);
  for (const fs::path& path : files) {
    SCOPED_TRACE(path.string());
    const std::vector<Json> documents = parse_file(path);
    ASSERT_FALSE(documents.empty());
    for (const Json& document : documents) {
      if (document.is_array()) {
        for (const Json& op : document) {
          EXPECT_TRUE(op.contains("op") && op.contains("path")) << op.dump();
        }
        continue;
      }
      ASSERT_TRUE(document.is_object());
      EXPECT_TRUE(document.contains("apiVersion")) << "no apiVersion";
      EXPECT_TRUE(document.contains("kind")) << "no kind";
    }
  }
}

// Each kustomization names only files (or kustomization folders) that exist, and every YAML
// file of the folder is used by some kustomization: no stale or forgotten manifest.
TEST(DeployManifestsTest, KustomizationsListExistingFilesAndNothingIsOrphaned) {
  std::set<fs::path> referenced;
  int kustomizations = 0;
  for (const fs::path& path : yaml_files_under(kDeployDir)) {
    if (path.filename() != "kustomization.yaml") {
      continue;
    }
    ++kustomizations;
    referenced.insert(fs::weakly_canonical(path));
    const std::vector<Json> documents = parse_file(path);
    ASSERT_EQ(documents.size(), 1u) << path;
    const Json& kustomization = documents[0];
    const fs::path dir = path.parent_path();
    std::vector<std::string> entries;
    for (const Json& resource : kustomization.value("resources", Json::array())) {
      entries.push_back(resource.get<std::string>());
    }
    for (const Json& patch : kustomization.value("patches", Json::array())) {
      if (patch.contains("path")) {
        entries.push_back(patch["path"].get<std::string>());
      }
    }
    for (const Json& generator : kustomization.value("configMapGenerator", Json::array())) {
      for (const Json& file : generator.value("files", Json::array())) {
        std::string name = file.get<std::string>();
        entries.push_back(name.substr(name.find('=') + 1));  // "key=path" or "path"
      }
    }
    ASSERT_FALSE(entries.empty()) << path;
    for (const std::string& entry : entries) {
      const fs::path target = fs::weakly_canonical(dir / entry);
      if (fs::is_directory(target)) {
        EXPECT_TRUE(fs::exists(target / "kustomization.yaml")) << path << ": " << entry;
      } else {
        EXPECT_TRUE(fs::is_regular_file(target)) << path << ": missing " << entry;
        referenced.insert(target);
      }
    }
  }
  // deploy/webhook, base, cert-manager, dev, existing-secret, monitoring, mtls, reports,
  // examples/user-overlay, verify
  EXPECT_EQ(kustomizations, 10);
  for (const fs::path& path : yaml_files_under(kDeployDir)) {
    EXPECT_TRUE(referenced.count(fs::weakly_canonical(path)) == 1)
        << path << " is not listed in any kustomization.yaml";
  }
}

// The ConfigMap serves the same default policy that is compiled into the binary.
TEST(DeployManifestsTest, ConfigMapPolicyIsTheRepositoryDefault) {
  const fs::path repository = fs::path(test::source_dir()) / "policies" / "default.yaml";
  const fs::path copy = kDeployDir / "base" / "policies" / "default.yaml";
  ASSERT_TRUE(fs::exists(repository));
  ASSERT_TRUE(fs::exists(copy));
  EXPECT_EQ(read_file(copy), read_file(repository))
      << "deploy/webhook/base/policies/default.yaml differs from policies/default.yaml; run: "
         "cp policies/default.yaml deploy/webhook/base/policies/default.yaml";
}

struct WebhookCase {
  std::string_view note;
  std::string object_key;
  std::string webhook_name;
  std::string path;
  std::string failure_policy;  // as registered
  std::string failure_policy_when_serving;  // annotated, set by topoguard once it serves; or ""
  std::vector<std::string> operations;
  bool reinvoked;
};

const Json& webhook_named(const Json& configuration, const std::string& name) {
  static const Json kNull;
  if (configuration.contains("webhooks")) {
    for (const Json& webhook : configuration["webhooks"]) {
      if (webhook.value("name", "") == name) {
        return webhook;
      }
    }
  }
  ADD_FAILURE() << "no webhook " << name;
  return kNull;
}

class WebhookConfigurationTest : public ::testing::TestWithParam<WebhookCase> {};

// Each webhook keeps the settings the admission contract relies on (fail open for mutation,
// fail closed for claim validation once topoguard serves and open before, v1 reviews, no side
// effects, short timeout, safe namespaces).
TEST_P(WebhookConfigurationTest, KeepsSafetySettings) {
  const WebhookCase& c = GetParam();
  const auto objects = load_objects(false);
  const Json& configuration = object_named(objects, c.object_key);
  ASSERT_TRUE(configuration.contains("webhooks"));
  ASSERT_EQ(configuration["webhooks"].size(), 2u);  // claims, workloads
  const Json& webhook = webhook_named(configuration, c.webhook_name);
  ASSERT_TRUE(webhook.is_object());
  EXPECT_EQ(webhook.value("failurePolicy", ""), c.failure_policy);
  const Json annotations = configuration["metadata"].value("annotations", Json::object());
  const Json when_serving = Json::parse(
      annotations.value("topoguard.dev/failure-policy-when-serving", "{}"), nullptr, false);
  EXPECT_EQ(when_serving.value(c.webhook_name, ""), c.failure_policy_when_serving);
  EXPECT_EQ(webhook.value("sideEffects", ""), "None");
  EXPECT_EQ(webhook.value("matchPolicy", ""), "Equivalent");
  EXPECT_EQ(webhook["admissionReviewVersions"], Json::array({"v1"}));
  const int timeout = webhook.value("timeoutSeconds", 0);
  EXPECT_GE(timeout, 1);
  EXPECT_LE(timeout, 10);
  EXPECT_EQ(webhook.value("reinvocationPolicy", "Never") == "IfNeeded", c.reinvoked);

  const Json& service = webhook["clientConfig"]["service"];
  EXPECT_EQ(service.value("name", ""), "topoguard");
  EXPECT_EQ(service.value("namespace", ""), "topoguard");
  EXPECT_EQ(service.value("path", ""), c.path);
  EXPECT_EQ(service.value("port", 0), 443);

  bool excludes_system_namespaces = false;
  for (const Json& expression : webhook["namespaceSelector"]["matchExpressions"]) {
    if (expression.value("key", "") == "kubernetes.io/metadata.name" &&
        expression.value("operator", "") == "NotIn") {
      const Json& values = expression["values"];
      excludes_system_namespaces =
          std::find(values.begin(), values.end(), Json("kube-system")) != values.end() &&
          std::find(values.begin(), values.end(), Json("topoguard")) != values.end();
    }
  }
  EXPECT_TRUE(excludes_system_namespaces);

  ASSERT_FALSE(webhook["rules"].empty());
  for (const Json& rule : webhook["rules"]) {
    std::vector<std::string> operations = rule["operations"].get<std::vector<std::string>>();
    EXPECT_EQ(operations, c.operations) << rule.dump();
    EXPECT_EQ(rule.value("scope", ""), "Namespaced");
  }
}

INSTANTIATE_TEST_SUITE_P(Webhooks, WebhookConfigurationTest,
                         ::testing::Values(WebhookCase{"mutating_claims_fail_open",
                                                       "MutatingWebhookConfiguration/topoguard",
                                                       "claims.mutate.topoguard.dev",
                                                       "/mutate",
                                                       "Ignore",
                                                       "",
                                                       {"CREATE"},
                                                       true},
                                           WebhookCase{"mutating_workloads_fail_open",
                                                       "MutatingWebhookConfiguration/topoguard",
                                                       "workloads.mutate.topoguard.dev",
                                                       "/mutate",
                                                       "Ignore",
                                                       "",
                                                       {"CREATE"},
                                                       false},
                                           WebhookCase{"validating_claims_fail_closed_once_serving",
                                                       "ValidatingWebhookConfiguration/topoguard",
                                                       "claims.validate.topoguard.dev",
                                                       "/validate",
                                                       "Ignore",
                                                       "Fail",
                                                       {"CREATE"},
                                                       false},
                                           WebhookCase{"validating_workloads_fail_open",
                                                       "ValidatingWebhookConfiguration/topoguard",
                                                       "workloads.validate.topoguard.dev",
                                                       "/validate",
                                                       "Ignore",
                                                       "",
                                                       {"CREATE", "UPDATE"},
                                                       false}),
                         topoguard::testing::NoteName());

// (group, resource) pairs of the rules of a configuration's webhooks, every version expanded.
std::set<std::pair<std::string, std::string>> matched_resources(const Json& configuration) {
  std::set<std::pair<std::string, std::string>> resources;
  for (const Json& webhook : configuration["webhooks"]) {
    for (const Json& rule : webhook["rules"]) {
      for (const Json& group : rule["apiGroups"]) {
        for (const Json& resource : rule["resources"]) {
          resources.emplace(group.get<std::string>(), resource.get<std::string>());
        }
      }
    }
  }
  return resources;
}

// Both webhooks match the same resources, each of them a kind the engine evaluates (a workload
// with pod templates or a claim), and together every kind the admission contract names.
TEST(DeployManifestsTest, WebhooksMatchTheKindsTheEngineEvaluates) {
  // Resource plural -> kind, for the resources the webhooks may list.
  const std::map<std::pair<std::string, std::string>, std::string> kinds = {
      {{"", "pods"}, "Pod"},
      {{"", "replicationcontrollers"}, "ReplicationController"},
      {{"apps", "deployments"}, "Deployment"},
      {{"apps", "replicasets"}, "ReplicaSet"},
      {{"apps", "statefulsets"}, "StatefulSet"},
      {{"apps", "daemonsets"}, "DaemonSet"},
      {{"batch", "jobs"}, "Job"},
      {{"batch", "cronjobs"}, "CronJob"},
      {{"leaderworkerset.x-k8s.io", "leaderworkersets"}, "LeaderWorkerSet"},
      {{"disaggregatedset.x-k8s.io", "disaggregatedsets"}, "DisaggregatedSet"},
      {{"kubeflow.org", "mpijobs"}, "MPIJob"},
      {{"kubeflow.org", "pytorchjobs"}, "PyTorchJob"},
      {{"resource.k8s.io", "resourceclaims"}, "ResourceClaim"},
      {{"resource.k8s.io", "resourceclaimtemplates"}, "ResourceClaimTemplate"},
  };
  const auto objects = load_objects(false);
  const auto mutating =
      matched_resources(object_named(objects, "MutatingWebhookConfiguration/topoguard"));
  const auto validating =
      matched_resources(object_named(objects, "ValidatingWebhookConfiguration/topoguard"));
  EXPECT_EQ(mutating, validating);
  for (const auto& [group, resource] : validating) {
    auto it = kinds.find({group, resource});
    ASSERT_NE(it, kinds.end()) << group << "/" << resource << " has no kind in this test's table";
    EXPECT_TRUE(k8s::is_workload_kind(group, it->second) || k8s::is_claim_kind(group, it->second))
        << it->second << " is matched by the webhooks but not evaluated by the engine";
  }
  for (const auto& [resource, kind] : kinds) {
    EXPECT_EQ(validating.count(resource), 1u) << resource.first << "/" << resource.second;
  }
  // Claim kinds and workload kinds never share a webhook: their failure policies differ.
  for (const std::string config :
       {"MutatingWebhookConfiguration/topoguard", "ValidatingWebhookConfiguration/topoguard"}) {
    for (const Json& webhook : object_named(objects, config)["webhooks"]) {
      std::set<bool> claim_kinds;
      for (const Json& rule : webhook["rules"]) {
        const bool claims = rule["apiGroups"] == Json::array({"resource.k8s.io"});
        claim_kinds.insert(claims);
        if (claims) {
          EXPECT_EQ(rule["apiVersions"], Json::array({"v1", "v1beta2", "v1beta1"}));
        }
      }
      EXPECT_EQ(claim_kinds.size(), 1u) << webhook.value("name", "");
    }
  }
}

std::string flag_value(const Json& args, std::string_view flag) {
  for (const Json& arg : args) {
    const std::string text = arg.get<std::string>();
    if (text.rfind(std::string(flag) + "=", 0) == 0) {
      return text.substr(flag.size() + 1);
    }
  }
  return "";
}

int container_port(const Json& container, std::string_view name) {
  for (const Json& port : container["ports"]) {
    if (port.value("name", "") == name) {
      return port.value("containerPort", 0);
    }
  }
  return 0;
}

// The Deployment, Service, volumes and flags agree with each other: the Service's 443 reaches the
// port topoguard listens on, the self-managed TLS flags name the Secret, Service and
// configurations (existing-secret/'s TLS flags the Secret it mounts), the policy flag points into
// its volume, and the pods run with the restricted security settings.
TEST(DeployManifestsTest, DeploymentServiceAndFlagsAgree) {
  const auto objects = load_objects(false);
  const Json& deployment = object_named(objects, "Deployment/topoguard");
  const Json& service = object_named(objects, "Service/topoguard");
  const Json& pod = deployment["spec"]["template"]["spec"];
  ASSERT_EQ(pod["containers"].size(), 1u);
  const Json& container = pod["containers"][0];
  const Json& args = container["args"];

  EXPECT_EQ(args[0], "serve");
  EXPECT_EQ(deployment["spec"].value("replicas", 0), 3);
  EXPECT_EQ(flag_value(args, "--listen"),
            "0.0.0.0:" + std::to_string(container_port(container, "https")));
  EXPECT_EQ(flag_value(args, "--metrics-listen"),
            "0.0.0.0:" + std::to_string(container_port(container, "metrics")));
  for (const Json& port : service["spec"]["ports"]) {
    EXPECT_NE(container_port(container, port.value("targetPort", "")), 0) << port.dump();
  }

  std::map<std::string, std::string> mounts;  // volume name -> mount path
  for (const Json& mount : container["volumeMounts"]) {
    mounts[mount["name"].get<std::string>()] = mount["mountPath"].get<std::string>();
    EXPECT_TRUE(mount.value("readOnly", false)) << mount.dump();
  }
  std::string policy_config_map;
  for (const Json& volume : pod["volumes"]) {
    EXPECT_FALSE(volume.contains("secret")) << "self-managed TLS mounts no Secret";
    if (volume.contains("configMap")) {
      policy_config_map = volume["configMap"].value("name", "");
      EXPECT_EQ(flag_value(args, "--policies"), mounts[volume["name"].get<std::string>()]);
    }
  }
  EXPECT_EQ(policy_config_map, "topoguard-policies");
  // Self-managed TLS: the Secret in topoguard's namespace, the Service the API server calls,
  // the configurations that exist, and a Lease identity per pod.
  EXPECT_EQ(flag_value(args, "--tls-secret"), "topoguard/topoguard-tls");
  EXPECT_EQ(flag_value(args, "--service"), service["metadata"].value("namespace", "") + "/" +
                                                service["metadata"].value("name", ""));
  EXPECT_EQ(flag_value(args, "--webhook-configuration"), "topoguard");
  object_named(objects, "ValidatingWebhookConfiguration/topoguard");
  object_named(objects, "MutatingWebhookConfiguration/topoguard");
  EXPECT_EQ(container["env"][0]["valueFrom"]["fieldRef"].value("fieldPath", ""), "metadata.name");

  // existing-secret/: --tls-cert and --tls-key point into the Secret's volume it mounts.
  const std::vector<Json> patch =
      parse_file(kDeployDir / "existing-secret" / "deployment-patch.yaml");
  ASSERT_EQ(patch.size(), 1u);
  Json mounted_args;
  std::string mount_path;
  std::string secret_name;
  for (const Json& operation : patch[0]) {
    const std::string path = operation.value("path", "");
    if (path == "/spec/template/spec/containers/0/args") {
      mounted_args = operation["value"];
    } else if (path == "/spec/template/spec/containers/0/volumeMounts/0") {
      mount_path = operation["value"].value("mountPath", "");
    } else if (path == "/spec/template/spec/volumes/0") {
      secret_name = operation["value"]["secret"].value("secretName", "");
    }
  }
  EXPECT_EQ(flag_value(mounted_args, "--tls-cert"), mount_path + "/tls.crt");
  EXPECT_EQ(flag_value(mounted_args, "--tls-key"), mount_path + "/tls.key");
  EXPECT_EQ(secret_name, "topoguard-tls");

  EXPECT_TRUE(pod["securityContext"].value("runAsNonRoot", false));
  EXPECT_EQ(pod["securityContext"]["seccompProfile"].value("type", ""), "RuntimeDefault");
  const Json& security = container["securityContext"];
  EXPECT_TRUE(security.value("readOnlyRootFilesystem", false));
  EXPECT_FALSE(security.value("allowPrivilegeEscalation", true));
  EXPECT_EQ(security["capabilities"]["drop"], Json::array({"ALL"}));
  EXPECT_EQ(container["readinessProbe"]["httpGet"].value("path", ""), "/readyz");
  EXPECT_EQ(container["livenessProbe"]["httpGet"].value("path", ""), "/healthz");
  EXPECT_FALSE(pod.value("priorityClassName", "").empty());
  EXPECT_TRUE(pod["affinity"].contains("podAntiAffinity"));
  EXPECT_TRUE(container["resources"].contains("requests"));
  EXPECT_TRUE(container["resources"]["limits"].contains("memory"));

  const Json& budget = object_named(objects, "PodDisruptionBudget/topoguard");
  EXPECT_EQ(budget["spec"]["selector"]["matchLabels"],
            deployment["spec"]["selector"]["matchLabels"]);
  EXPECT_EQ(service["spec"]["selector"], deployment["spec"]["selector"]["matchLabels"]);
}

// The NetworkPolicy covers the webhook pods, leaves the webhook port open to every source (the
// API server's address differs per cluster) and lets only labelled namespaces reach the metrics
// port; the ServiceMonitor scrapes that port through the Service.
TEST(DeployManifestsTest, NetworkPolicyAndServiceMonitorAgreeWithTheDeployment) {
  const auto objects = load_objects(true);
  const Json& deployment = object_named(objects, "Deployment/topoguard");
  const Json& container = deployment["spec"]["template"]["spec"]["containers"][0];
  const Json& policy = object_named(objects, "NetworkPolicy/topoguard");
  EXPECT_EQ(policy["spec"]["podSelector"]["matchLabels"],
            deployment["spec"]["selector"]["matchLabels"]);
  EXPECT_EQ(policy["spec"]["policyTypes"], Json::array({"Ingress"}));
  std::map<std::string, Json> sources_by_port;  // port name -> `from` of its rule (null: anyone)
  for (const Json& rule : policy["spec"]["ingress"]) {
    for (const Json& port : rule["ports"]) {
      const std::string name = port.value("port", "");
      EXPECT_NE(container_port(container, name), 0) << name << " is not a container port";
      sources_by_port[name] = rule.contains("from") ? rule["from"] : Json();
    }
  }
  ASSERT_EQ(sources_by_port.size(), 2u);
  EXPECT_TRUE(sources_by_port["https"].is_null());
  EXPECT_EQ(sources_by_port["metrics"],
            Json::parse(R"([{"namespaceSelector":{"matchLabels":)"
                        R"({"topoguard.dev/metrics-scraper":"true"}}}])"));

  const Json& monitor = object_named(objects, "ServiceMonitor/topoguard");
  const Json& service = object_named(objects, "Service/topoguard");
  for (const auto& [key, value] : monitor["spec"]["selector"]["matchLabels"].items()) {
    EXPECT_EQ(service["metadata"]["labels"].value(key, ""), value.get<std::string>()) << key;
  }
  ASSERT_EQ(monitor["spec"]["endpoints"].size(), 1u);
  const std::string scraped = monitor["spec"]["endpoints"][0].value("port", "");
  bool service_has_port = false;
  for (const Json& port : service["spec"]["ports"]) {
    service_has_port = service_has_port || port.value("name", "") == scraped;
  }
  EXPECT_TRUE(service_has_port) << scraped;
  EXPECT_EQ(scraped, "metrics");
}

// The cluster cache's ClusterRole grants get/list/watch on exactly the resources topoguard reads
// from a cluster (kube::cluster_state_resources()) and nothing else; the binding gives it to the
// Deployment's service account, whose pods mount a token.
TEST(DeployManifestsTest, ClusterRoleReadsExactlyTheClusterState) {
  const auto objects = load_objects(false);
  const Json& role = object_named(objects, "ClusterRole/topoguard-cluster-cache");
  std::set<std::pair<std::string, std::string>> granted;  // (group, resource)
  for (const Json& rule : role["rules"]) {
    EXPECT_EQ(rule["verbs"], Json::array({"get", "list", "watch"})) << rule.dump();
    EXPECT_FALSE(rule.contains("resourceNames") || rule.contains("nonResourceURLs")) << rule.dump();
    for (const Json& group : rule["apiGroups"]) {
      for (const Json& resource : rule["resources"]) {
        EXPECT_TRUE(granted.emplace(group.get<std::string>(), resource.get<std::string>()).second)
            << resource << " granted twice";
      }
    }
  }
  std::set<std::pair<std::string, std::string>> read;
  for (const kube::WantedResource& wanted : kube::cluster_state_resources()) {
    read.emplace(wanted.group, wanted.resource);
  }
  EXPECT_EQ(granted, read);

  const Json& binding = object_named(objects, "ClusterRoleBinding/topoguard-cluster-cache");
  EXPECT_EQ(binding["roleRef"],
            Json::parse(R"({"apiGroup":"rbac.authorization.k8s.io",)"
                        R"("kind":"ClusterRole","name":"topoguard-cluster-cache"})"));
  const Json& deployment = object_named(objects, "Deployment/topoguard");
  const Json& pod = deployment["spec"]["template"]["spec"];
  const Json& account = object_named(objects, "ServiceAccount/topoguard");
  EXPECT_EQ(binding["subjects"],
            Json::array({{{"kind", "ServiceAccount"},
                          {"name", pod.value("serviceAccountName", "")},
                          {"namespace", account["metadata"].value("namespace", "")}}}));
  EXPECT_EQ(account["metadata"].value("name", ""), pod.value("serviceAccountName", ""));
  EXPECT_TRUE(pod.value("automountServiceAccountToken", false));
}

// deploy/audit's two roles together grant get/list on exactly what `audit --cluster` reads: the
// cluster state and every workload kind (resource: the kind's plural, lowercase + "s" for all
// of them), nothing else and no other verb; the cluster-scoped kinds are in their own role, so a
// team bound to the namespaced one in its namespace can run `audit --cluster -n TEAM`.
TEST(DeployManifestsTest, AuditRolesReadExactlyWhatAuditClusterReads) {
  const fs::path file = fs::path(test::source_dir()) / "deploy" / "audit" / "clusterrole.yaml";
  std::map<std::string, std::set<std::pair<std::string, std::string>>> granted;  // role -> ...
  for (const Json& role : parse_file(file)) {
    ASSERT_EQ(role.value("kind", ""), "ClusterRole");
    auto& resources = granted[role["metadata"].value("name", "")];
    for (const Json& rule : role["rules"]) {
      EXPECT_EQ(rule["verbs"], Json::array({"get", "list"})) << rule.dump();
      EXPECT_FALSE(rule.contains("resourceNames") || rule.contains("nonResourceURLs"));
      for (const Json& group : rule["apiGroups"]) {
        for (const Json& resource : rule["resources"]) {
          EXPECT_TRUE(resources.emplace(group.get<std::string>(), resource.get<std::string>()).second)
              << resource << " granted twice";
        }
      }
    }
  }
  const std::set<std::pair<std::string, std::string>> cluster_scoped = {
      {"resource.k8s.io", "deviceclasses"},
      {"resource.k8s.io", "resourceslices"},
      {"resource.k8s.io", "devicetaintrules"},
      {"", "namespaces"}};
  EXPECT_EQ(granted["topoguard-audit-cluster-state"], cluster_scoped);

  std::set<std::pair<std::string, std::string>> read;
  for (const kube::WantedResource& wanted : kube::cluster_state_resources()) {
    if (!cluster_scoped.contains({wanted.group, wanted.resource})) {
      read.emplace(wanted.group, wanted.resource);
    }
  }
  for (const k8s::WorkloadKindName& kind : k8s::workload_kinds()) {
    std::string plural(kind.kind);
    std::transform(plural.begin(), plural.end(), plural.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    read.emplace(std::string(kind.group), plural + "s");
  }
  EXPECT_EQ(granted["topoguard-audit-namespaced"], read);
  EXPECT_EQ(granted.size(), 2u);
}

// Egress from the webhook pods: the API server's ports (443 through the kubernetes Service, 6443
// after DNAT) and DNS, nothing else; the ingress policy stays as it is.
TEST(DeployManifestsTest, EgressPolicyReachesTheApiServer) {
  const auto objects = load_objects(false);
  const Json& deployment = object_named(objects, "Deployment/topoguard");
  const Json& policy = object_named(objects, "NetworkPolicy/topoguard-egress");
  EXPECT_EQ(policy["spec"]["podSelector"]["matchLabels"],
            deployment["spec"]["selector"]["matchLabels"]);
  EXPECT_EQ(policy["spec"]["policyTypes"], Json::array({"Egress"}));
  std::set<std::string> ports;  // "PROTOCOL/port"
  for (const Json& rule : policy["spec"]["egress"]) {
    EXPECT_FALSE(rule.contains("to")) << "the API server's address differs per cluster";
    for (const Json& port : rule["ports"]) {
      ports.insert(port.value("protocol", "") + "/" + std::to_string(port.value("port", 0)));
    }
  }
  EXPECT_EQ(ports, (std::set<std::string>{"TCP/443", "TCP/6443", "TCP/53", "UDP/53"}));
}

// The cert-manager overlay issues the Secret the Deployment mounts, for the Service's DNS names,
// and its CA-injection annotation names that Certificate.
TEST(DeployManifestsTest, CertManagerOverlayIssuesTheMountedSecret) {
  const auto objects = load_objects(true);
  const Json& certificate = object_named(objects, "Certificate/topoguard-serving-cert");
  EXPECT_EQ(certificate["spec"].value("secretName", ""), "topoguard-tls");
  const Json& names = certificate["spec"]["dnsNames"];
  EXPECT_NE(std::find(names.begin(), names.end(), Json("topoguard.topoguard.svc")), names.end());

  const std::vector<Json> patch = parse_file(kDeployDir / "cert-manager" / "inject-ca.yaml");
  ASSERT_EQ(patch.size(), 1u);
  ASSERT_TRUE(patch[0].is_array());
  ASSERT_EQ(patch[0].size(), 1u);
  const std::string injected_from =
      patch[0][0]["value"].value("cert-manager.io/inject-ca-from", "");
  EXPECT_EQ(injected_from, certificate["metadata"].value("namespace", "") + "/" +
                               certificate["metadata"].value("name", ""));
}

}  // namespace
}  // namespace topoguard
