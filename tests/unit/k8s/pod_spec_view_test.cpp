#include "topoguard/k8s/pod_spec_view.h"

#include <gtest/gtest.h>

#include "note_name.h"

#include "topoguard/common/yaml_document.h"

namespace topoguard::k8s {
namespace {

// Claims, extended resources (once per container, core resources left out) and Multus
// networks are read from a Deployment's template with their pointers.
TEST(PodSpecViewTest, ReadsClaimsResourcesAndNetworks) {
  YamlStream stream = parse_yaml_stream(R"(
apiVersion: apps/v1
kind: Deployment
spec:
  template:
    metadata:
      annotations:
        k8s.v1.cni.cncf.io/networks: "sriov-a, other/sriov-b@net2"
    spec:
      resourceClaims:
      - name: pair
        resourceClaimTemplateName: gpu-nic
      - name: shared
        resourceClaimName: existing
      initContainers:
      - name: init
        resources: {limits: {cpu: 1}}
      containers:
      - name: main
        resources:
          limits: {nvidia.com/gpu: 1, memory: 1Gi, hugepages-2Mi: 1Gi}
          requests: {nvidia.com/gpu: 1, rdma/ib: 1}
)",
                                        "d.yaml");
  ASSERT_TRUE(stream.errors.empty());
  const Json& object = stream.documents[0].value;
  auto locations = locate_pod_templates(object);
  ASSERT_EQ(locations.size(), 1u);
  PodSpecView view = read_pod_spec(locations[0]);
  ASSERT_EQ(view.claims.size(), 2u);
  EXPECT_EQ(view.claims[0].template_name, "gpu-nic");
  EXPECT_EQ(view.claims[1].claim_name, "existing");
  EXPECT_EQ(view.claims[1].pointer, "/spec/template/spec/resourceClaims/1");
  ASSERT_EQ(view.extended_resources.size(), 2u);
  EXPECT_EQ(view.extended_resources[0].resource, "nvidia.com/gpu");
  EXPECT_EQ(view.extended_resources[0].pointer,
            "/spec/template/spec/containers/0/resources/limits/nvidia.com~1gpu");
  EXPECT_EQ(view.extended_resources[1].resource, "rdma/ib");
  ASSERT_EQ(view.networks.size(), 2u);
  EXPECT_EQ(view.networks[0].name, "sriov-a");
  EXPECT_EQ(view.networks[1].namespace_name, "other");
  EXPECT_EQ(view.networks[1].name, "sriov-b");
  EXPECT_EQ(view.networks_pointer,
            "/spec/template/metadata/annotations/k8s.v1.cni.cncf.io~1networks");
}

struct NetworkCase {
  std::string_view note;
  std::string annotation;
  std::vector<std::string> expected;  // "namespace/name"
};

class NetworkAnnotationTest : public ::testing::TestWithParam<NetworkCase> {};

// Both Multus annotation forms parse; garbage yields nothing rather than an error.
TEST_P(NetworkAnnotationTest, Parses) {
  std::vector<std::string> names;
  for (const auto& network : parse_network_annotation(GetParam().annotation)) {
    names.push_back(network.namespace_name + "/" + network.name);
  }
  EXPECT_EQ(names, GetParam().expected);
}

INSTANTIATE_TEST_SUITE_P(
    Forms, NetworkAnnotationTest,
    ::testing::Values(NetworkCase{"single", "sriov-rdma-mlnx", {"/sriov-rdma-mlnx"}},
                      NetworkCase{"list", "a,b , ns/c@eth1", {"/a", "/b", "ns/c"}},
                      NetworkCase{"json", R"([{"name":"a","namespace":"x"},{"name":"b"}])",
                                  {"x/a", "/b"}},
                      NetworkCase{"broken_json", "[{\"name\":", {}},
                      NetworkCase{"empty", "  ", {}}),
    topoguard::testing::NoteName());

// networking.gke.io/interfaces (GKE multi-networking): the network of each interface, in order;
// entries without one, other JSON and broken text give none.
TEST(GkeInterfacesTest, ReadsNetworkNames) {
  EXPECT_EQ(parse_gke_interfaces(R"([{"interfaceName":"eth0","network":"default"},
                                     {"interfaceName":"eth2","network":"rdma-0"},
                                     {"interfaceName":"eth3","network":"rdma-1"}])"),
            (std::vector<std::string>{"default", "rdma-0", "rdma-1"}));
  EXPECT_TRUE(parse_gke_interfaces(R"([{"interfaceName":"eth0"}])").empty());
  EXPECT_TRUE(parse_gke_interfaces(R"({"network":"rdma-0"})").empty());
  EXPECT_TRUE(parse_gke_interfaces("[{").empty());
}

}  // namespace
}  // namespace topoguard::k8s
