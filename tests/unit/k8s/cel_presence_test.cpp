#include "topoguard/k8s/cel_presence.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "topoguard/common/yaml_document.h"

namespace topoguard::k8s {
namespace {

// Any member named "cel" anywhere below `value`: what the structured walk must agree with on
// well-formed manifests.
bool any_cel_member(const Json& value) {
  if (value.is_object()) {
    for (const auto& [key, child] : value.items()) {
      if (key == "cel" || any_cel_member(child)) {
        return true;
      }
    }
  } else if (value.is_array()) {
    for (const Json& child : value) {
      if (any_cel_member(child)) {
        return true;
      }
    }
  }
  return false;
}

Json parse(const std::string& yaml) {
  const YamlStream stream = parse_yaml_stream(yaml, "inline");
  EXPECT_EQ(stream.documents.size(), 1U);
  return stream.documents.empty() ? Json() : stream.documents[0].value;
}

// Every ResourceClaim and ResourceClaimTemplate of the corpus (v1beta1, v1beta2 and v1, from
// the Kubernetes API test data, the website and the DRA drivers' demos): CEL is found exactly
// where the manifest has it, and the corpus has claims both with and without.
TEST(CelPresenceTest, CorpusClaimsAgreeWithTheirText) {
  int with_cel = 0;
  int without_cel = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(TOPOGUARD_CORPUS_DIR)) {
    const std::string extension = entry.path().extension().string();
    if (!entry.is_regular_file() || (extension != ".yaml" && extension != ".yml")) {
      continue;
    }
    std::ifstream file(entry.path());
    std::stringstream text;
    text << file.rdbuf();
    for (const YamlDocument& document :
         parse_yaml_stream(text.str(), entry.path().string()).documents) {
      const Json& object = document.value;
      const std::string kind = object.is_object() ? object.value("kind", "") : "";
      if (kind != "ResourceClaim" && kind != "ResourceClaimTemplate") {
        continue;
      }
      const bool expected = any_cel_member(object.value("spec", Json()));
      EXPECT_EQ(has_cel_selector(object), expected) << entry.path() << " " << document.index;
      (expected ? with_cel : without_cel) += 1;
    }
  }
  EXPECT_GE(with_cel, 5);
  EXPECT_GE(without_cel, 5);
}

struct Case {
  const char* note;
  const char* yaml;
  bool expected;
};

// One row per API shape and per odd shape; odd shapes count as CEL.
TEST(CelPresenceTest, ShapesAcrossVersions) {
  const Case cases[] = {
      {"v1beta1 flat selectors",
       "apiVersion: resource.k8s.io/v1beta1\nkind: ResourceClaim\nspec:\n  devices:\n"
       "    requests:\n    - name: gpu\n      deviceClassName: gpu\n      selectors:\n"
       "      - cel:\n          expression: 'true'\n",
       true},
      {"v1 exactly",
       "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nspec:\n  devices:\n    requests:\n"
       "    - name: gpu\n      exactly:\n        deviceClassName: gpu\n        selectors:\n"
       "        - cel:\n            expression: 'true'\n",
       true},
      {"v1beta2 firstAvailable",
       "apiVersion: resource.k8s.io/v1beta2\nkind: ResourceClaim\nspec:\n  devices:\n"
       "    requests:\n    - name: gpu\n      firstAvailable:\n      - name: a\n"
       "        deviceClassName: gpu\n      - name: b\n        deviceClassName: gpu\n"
       "        selectors:\n        - cel:\n            expression: 'true'\n",
       true},
      {"template nests the claim spec under spec.spec",
       "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nspec:\n  spec:\n"
       "    devices:\n      requests:\n      - name: gpu\n        exactly:\n"
       "          deviceClassName: gpu\n          selectors:\n          - cel:\n"
       "              expression: 'true'\n",
       true},
      {"template without selectors",
       "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nspec:\n  spec:\n"
       "    devices:\n      requests:\n      - name: gpu\n        exactly:\n"
       "          deviceClassName: gpu\n",
       false},
      {"claim without devices", "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nspec: {}\n",
       false},
      {"a cel member outside selectors is not a selector",
       "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata:\n  labels:\n"
       "    cel: x\nspec:\n  devices:\n    requests: []\n",
       false},
      {"other kinds", "apiVersion: v1\nkind: Pod\nspec:\n  selectors:\n  - cel: {}\n", false},
      {"odd: requests is a mapping",
       "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nspec:\n  devices:\n"
       "    requests: {a: 1}\n",
       true},
      {"odd: a request is a string",
       "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nspec:\n  devices:\n"
       "    requests: [gpu]\n",
       true},
      {"odd: selectors is a string",
       "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nspec:\n  devices:\n    requests:\n"
       "    - name: gpu\n      exactly:\n        selectors: 'device.driver == \"x\"'\n",
       true},
      {"odd: a selector is a list",
       "apiVersion: resource.k8s.io/v1beta1\nkind: ResourceClaim\nspec:\n  devices:\n"
       "    requests:\n    - name: gpu\n      selectors: [[1]]\n",
       true},
      {"odd: template spec.spec is a list",
       "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nspec:\n  spec: []\n", true},
      {"odd: spec is a number", "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nspec: 3\n",
       true},
  };
  for (const Case& row : cases) {
    EXPECT_EQ(has_cel_selector(parse(row.yaml)), row.expected) << row.note;
  }
  EXPECT_FALSE(has_cel_selector(Json()));  // a DELETE's absent object
}

}  // namespace
}  // namespace topoguard::k8s
