// `topoguard audit --cluster` end to end: the built binary, a kubeconfig written to a temp dir
// pointing at the fake API server (its CA and a bearer token), and a cluster loaded with dranet's
// real AWS p4d ResourceSlices, its DeviceClass and its unaligned/aligned templates.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "fake_apiserver.h"
#include "temp_dir.h"
#include "topoguard/common/yaml_document.h"
#include "test_paths.h"

namespace topoguard {
namespace {

const std::string kP4d = test::corpus_dir() + "/dranet/examples/aws_eks_examples/gpu-efa";

// Every object of a YAML file (List items expanded), with `ns` set on those that are given one.
std::vector<Json> objects_of(const std::string& path, const std::string& ns = "") {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  const YamlStream stream = parse_yaml_stream(text.str(), path);
  EXPECT_TRUE(stream.errors.empty()) << path;
  std::vector<Json> objects;
  for (const YamlDocument& document : stream.documents) {
    if (document.value.value("kind", "") == "List") {
      for (const Json& item : document.value["items"]) {
        objects.push_back(item);
      }
    } else {
      objects.push_back(document.value);
    }
  }
  if (!ns.empty()) {
    for (Json& object : objects) {
      object["metadata"]["namespace"] = ns;
    }
  }
  return objects;
}

Json parse(const std::string& yaml) {
  YamlStream stream = parse_yaml_stream(yaml, "inline");
  EXPECT_EQ(stream.documents.size(), 1u);
  return stream.documents.at(0).value;
}

// A Deployment whose pods take a claim made from `template_name`.
Json deployment(const std::string& ns, const std::string& name, const std::string& template_name) {
  Json object = parse(R"(
apiVersion: apps/v1
kind: Deployment
metadata: {name: NAME, namespace: NS, uid: 7d5ab4e0-0000-4000-8000-000000000001}
spec:
  selector: {matchLabels: {app: trainer}}
  template:
    metadata: {labels: {app: trainer}}
    spec:
      containers:
      - name: trainer
        image: registry.example.com/trainer:1
        resources: {claims: [{name: gpu-nic}]}
      resourceClaims:
      - {name: gpu-nic, resourceClaimTemplateName: TEMPLATE}
)");
  object["metadata"]["name"] = name;
  object["metadata"]["namespace"] = ns;
  object["spec"]["template"]["spec"]["resourceClaims"][0]["resourceClaimTemplateName"] =
      template_name;
  return object;
}

// A Pod its Deployment's ReplicaSet controls: audited through the Deployment, not itself.
Json controlled_pod(const std::string& ns) {
  Json pod = deployment(ns, "x", "gpu-efa-unaligned")["spec"]["template"];
  pod["apiVersion"] = "v1";
  pod["kind"] = "Pod";
  pod["metadata"]["name"] = "trainer-6d4cf56db6-x2x9z";
  pod["metadata"]["namespace"] = ns;
  pod["metadata"]["ownerReferences"] = Json::array({{{"apiVersion", "apps/v1"},
                                                     {"kind", "ReplicaSet"},
                                                     {"name", "trainer-6d4cf56db6"},
                                                     {"uid", "1"},
                                                     {"controller", true}}});
  return pod;
}

Json namespace_object(const std::string& name) {
  return {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", name}}}};
}

struct CommandRun {
  int code = -1;
  std::string out;
  std::string err;
};

class AuditClusterTest : public ::testing::Test {
 protected:
  AuditClusterTest() {
    std::vector<Json> objects = objects_of(kP4d + "/resourceslice-gpu.yaml");
    for (std::vector<Json> more :
         {objects_of(kP4d + "/resourceslice-dranet.yaml"), objects_of(kP4d + "/device-class.yaml"),
          objects_of(test::source_dir() + "/tests/data/device-classes.yaml"),
          objects_of(kP4d + "/resource-claim-template.yaml", "inference"),
          objects_of(kP4d + "/resource-claim-template.yaml", "other")}) {
      objects.insert(objects.end(), more.begin(), more.end());
    }
    objects.push_back(namespace_object("inference"));
    objects.push_back(namespace_object("other"));
    objects.push_back(deployment("inference", "trainer", "gpu-efa-unaligned"));
    objects.push_back(controlled_pod("inference"));
    Json events = Json::array();
    for (Json& object : objects) {
      events.push_back({{"type", "ADDED"}, {"object", std::move(object)}});
    }
    fake_.control("objects", {{"events", std::move(events)}});
    kubeconfig_ = dir_.write("kubeconfig", R"(apiVersion: v1
kind: Config
clusters:
- name: fake
  cluster: {server: ")" + fake_.server() + R"(", certificate-authority: ")" +
                                               fake_.ca_file() + R"("}
- name: closed
  cluster: {server: "https://127.0.0.1:1", certificate-authority: ")" +
                                               fake_.ca_file() + R"("}
users:
- name: auditor
  user: {token: test-token}
contexts:
- name: fake
  context: {cluster: fake, user: auditor}
- name: closed
  context: {cluster: closed, user: auditor}
current-context: fake
)");
  }

  // Runs `topoguard audit --cluster --kubeconfig K ARGS...`.
  CommandRun audit(const std::string& arguments) {
    const std::string out = dir_.path() + "/out";
    const std::string err = dir_.path() + "/err";
    const std::string command = test::topoguard_binary() + " audit --cluster --kubeconfig " +
                                kubeconfig_ + " " + arguments + " >" + out + " 2>" + err +
                                " </dev/null";
    const int status = std::system(command.c_str());
    CommandRun run;
    run.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    run.out = read(out);
    run.err = read(err);
    return run;
  }

  // (kind, namespace/name) of each finding of `rule` in a JSON report.
  static std::vector<std::string> flagged(const Json& report, const std::string& rule) {
    std::vector<std::string> found;
    for (const Json& finding : report["findings"]) {
      if (finding["rule"] == rule) {
        found.push_back(finding["resource"]["kind"].get<std::string>() + " " +
                        finding["resource"]["namespace"].get<std::string>() + "/" +
                        finding["resource"]["name"].get<std::string>());
      }
    }
    std::sort(found.begin(), found.end());
    return found;
  }

  static std::string read(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  }

  testing::FakeApiServer fake_;
  testing::TempDir dir_;
  std::string kubeconfig_;
};

// The unaligned template and the Deployment that names it are both flagged, each named by its
// cluster source; the aligned template and the controlled Pod are not; the cluster's slices count
// as resources (cluster state), and the absent NetworkAttachmentDefinition CRD is reported.
TEST_F(AuditClusterTest, FlagsUnalignedTemplateAndItsDeployment) {
  const CommandRun run = audit("--format json --namespace inference");
  ASSERT_EQ(run.code, 1) << run.err;
  const Json report = Json::parse(run.out);
  EXPECT_EQ(flagged(report, "missing-pcie-alignment"),
            (std::vector<std::string>{"Deployment inference/trainer",
                                      "ResourceClaimTemplate inference/gpu-efa-unaligned"}));
  std::vector<std::string> files;
  for (const Json& finding : report["findings"]) {
    files.push_back(finding["source"]["file"].get<std::string>());
  }
  EXPECT_NE(std::find(files.begin(), files.end(),
                      "cluster:resourceclaimtemplates.v1.resource.k8s.io/inference/"
                      "gpu-efa-unaligned"),
            files.end());
  EXPECT_NE(std::find(files.begin(), files.end(), "cluster:deployments.v1.apps/inference/trainer"),
            files.end());
  for (const Json& finding : report["findings"]) {
    EXPECT_NE(finding["resource"]["kind"], "Pod") << finding.dump();
  }
  // Nothing is skipped: the Namespaces serve namespace selectors, the slices and DeviceClasses
  // make up the cluster state.
  EXPECT_EQ(report["summary"]["skipped"], 0);
  EXPECT_NE(run.err.find("skipped NetworkAttachmentDefinition.k8s.cni.cncf.io: the cluster does "
                         "not serve it (group k8s.cni.cncf.io is not served)"),
            std::string::npos)
      << run.err;
}

// --namespace lists namespaced resources in that namespace only; cluster-scoped ones whole.
TEST_F(AuditClusterTest, NamespaceRestrictsNamespacedResources) {
  const CommandRun run = audit("--format json --namespace other");
  ASSERT_EQ(run.code, 1) << run.err;
  EXPECT_EQ(flagged(Json::parse(run.out), "missing-pcie-alignment"),
            (std::vector<std::string>{"ResourceClaimTemplate other/gpu-efa-unaligned"}));
  std::vector<std::string> paths;
  for (const Json& request : fake_.requests()) {
    paths.push_back(request["path"].get<std::string>());
  }
  auto listed = [&](const std::string& path) {
    return std::find(paths.begin(), paths.end(), path) != paths.end();
  };
  EXPECT_TRUE(listed("/apis/resource.k8s.io/v1/namespaces/other/resourceclaimtemplates"));
  EXPECT_TRUE(listed("/apis/apps/v1/namespaces/other/deployments"));
  EXPECT_TRUE(listed("/apis/resource.k8s.io/v1/resourceslices"));
  EXPECT_TRUE(listed("/api/v1/namespaces"));
  EXPECT_FALSE(listed("/apis/resource.k8s.io/v1/resourceclaimtemplates"));
}

// Every namespace without --namespace: both namespaces' templates; --policies and --fail-on
// combine with --cluster as with files.
TEST_F(AuditClusterTest, EveryNamespaceByDefault) {
  const CommandRun run = audit("--format json --fail-on never --policies " + test::source_dir() +
                               "/policies/default.yaml");
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_EQ(flagged(Json::parse(run.out), "missing-pcie-alignment"),
            (std::vector<std::string>{"Deployment inference/trainer",
                                      "ResourceClaimTemplate inference/gpu-efa-unaligned",
                                      "ResourceClaimTemplate other/gpu-efa-unaligned"}));
}

// Once the CRD is installed, NetworkAttachmentDefinitions are listed and nothing is skipped.
TEST_F(AuditClusterTest, InstalledCrdIsListed) {
  fake_.add_resource("k8s.cni.cncf.io", "v1", "network-attachment-definitions",
                     "NetworkAttachmentDefinition", true);
  const CommandRun run = audit("--format json --namespace inference");
  ASSERT_EQ(run.code, 1) << run.err;
  EXPECT_EQ(run.err.find("NetworkAttachmentDefinition"), std::string::npos) << run.err;
  bool listed = false;
  for (const Json& request : fake_.requests()) {
    listed = listed || request["path"] ==
                           "/apis/k8s.cni.cncf.io/v1/namespaces/inference/"
                           "network-attachment-definitions";
  }
  EXPECT_TRUE(listed);
}

// A cluster that cannot be read is a clear error naming the kubeconfig and context, exit 2 and
// no report: a token the server refuses (401), and no server listening.
TEST_F(AuditClusterTest, UnreadableClusterFails) {
  fake_.control("tokens", {{"revoke", {"test-token"}}});
  const std::pair<std::string, std::string> failures[] = {
      {"--format json", "context fake): discovery: GET /api: 401 Unauthorized"},
      {"--context closed", "context closed): discovery: GET /api: "},
  };
  for (const auto& [arguments, said] : failures) {
    const CommandRun run = audit(arguments);
    EXPECT_EQ(run.code, 2) << arguments;
    EXPECT_TRUE(run.out.empty()) << run.out;
    EXPECT_NE(run.err.find("topoguard audit: --cluster (kubeconfig " + kubeconfig_ + ", " + said),
              std::string::npos)
        << run.err;
  }
}

// SARIF parses and locates each result at its cluster source.
TEST_F(AuditClusterTest, SarifParses) {
  const CommandRun run = audit("--format sarif --namespace inference");
  ASSERT_EQ(run.code, 1) << run.err;
  const Json sarif = Json::parse(run.out);
  const Json& results = sarif["runs"][0]["results"];
  ASSERT_FALSE(results.empty());
  for (const Json& result : results) {
    const std::string uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"];
    // A relative reference whose first segment has a colon: SARIF writers escape it.
    EXPECT_TRUE(uri.starts_with("cluster%3A")) << uri;
  }
}

// Every other report format renders the cluster's findings, with the same exit code; the
// report CRDs come out as JSON Lists naming the cluster sources.
TEST_F(AuditClusterTest, EveryFormatRenders) {
  for (const std::string format : {"junit", "policyreport", "openreports"}) {
    const CommandRun run = audit("--format " + format + " --namespace inference");
    EXPECT_EQ(run.code, 1) << format << ": " << run.err;
    EXPECT_NE(run.out.find("gpu-efa-unaligned"), std::string::npos) << format << ": " << run.out;
    if (format != "junit") {
      const Json list = Json::parse(run.out, nullptr, false);
      EXPECT_EQ(list.value("kind", ""), "List") << format;
    }
  }
}

// Text names each finding by its cluster source; with manifest paths too, both are audited.
TEST_F(AuditClusterTest, TextWithManifestPaths) {
  const CommandRun run = audit("--namespace inference " + test::source_dir() +
                               "/examples/manifests/unaligned-template-v1.yaml");
  ASSERT_EQ(run.code, 1) << run.err;
  EXPECT_NE(run.out.find("cluster:resourceclaimtemplates.v1.resource.k8s.io/inference/"
                         "gpu-efa-unaligned: deny missing-pcie-alignment"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("unaligned-template-v1.yaml:"), std::string::npos) << run.out;
}

}  // namespace
}  // namespace topoguard
