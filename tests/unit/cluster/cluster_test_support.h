// Builds cluster states for tests from inline YAML or files of the shared corpus, expanding
// `kind: List` as kubectl prints it.
#pragma once

#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "topoguard/cluster/cluster_state.h"
#include "topoguard/common/yaml_document.h"
#include "topoguard/k8s/claim_view.h"
#include "test_paths.h"

namespace topoguard::cluster::testing {

// Every object of a YAML stream, List items expanded.
inline std::vector<Json> parse_documents(const std::string& yaml) {
  YamlStream stream = parse_yaml_stream(yaml, "inline.yaml");
  EXPECT_TRUE(stream.errors.empty()) << stream.errors.at(0).to_string();
  std::vector<Json> objects;
  for (YamlDocument& document : stream.documents) {
    const Json* items = member(document.value, "items");
    if (string_member_view(document.value, "kind") == "List" && items != nullptr) {
      objects.insert(objects.end(), items->begin(), items->end());
    } else {
      objects.push_back(std::move(document.value));
    }
  }
  return objects;
}

inline ClusterState build_state(const std::string& yaml) {
  ClusterStateBuilder builder;
  for (const Json& object : parse_documents(yaml)) {
    auto added = builder.add(object);
    EXPECT_TRUE(added) << added.error().to_string();
  }
  return std::move(builder).finish();
}

// The spec of ResourceClaim ns/mine whose spec.devices is `devices` (YAML).
inline k8s::ClaimSpec claim_spec(const std::string& devices) {
  const std::vector<Json> objects = parse_documents(
      "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: mine, namespace: "
      "ns}\nspec:\n  devices: " +
      devices + "\n");
  auto spec = k8s::read_claim_spec(objects.at(0));
  EXPECT_TRUE(spec) << spec.error().to_string() << "\n" << devices;
  return spec ? std::move(spec).value() : k8s::ClaimSpec{};
}

inline std::string read_corpus_file(const std::string& path) {
  std::ifstream in(test::corpus_dir() + "/" + path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Corpus files (relative to ../shared/corpus) plus extra inline YAML, as one cluster state.
inline ClusterState load_corpus_state(std::initializer_list<std::string> paths,
                                      const std::string& extra_yaml = "") {
  std::string yaml;
  for (const std::string& path : paths) {
    yaml += "---\n" + read_corpus_file(path) + "\n";
  }
  if (!extra_yaml.empty()) {
    yaml += "---\n" + extra_yaml;
  }
  return build_state(yaml);
}

}  // namespace topoguard::cluster::testing
