// Node shapes: grouping nodes by what feasibility reads of their devices must not change any
// answer. Random clusters (a few node shapes with per-node attributes, taints, moved PCIe roots,
// incomplete pools, shareable NICs, partitionable GPUs, a slice for all nodes, allocations) and
// random claims are checked node by node and by shape, and the whole results compared.
#include "topoguard/cluster/shape_index.h"

#include <gtest/gtest.h>

#include <limits>
#include <random>
#include <sstream>

#include "cluster_test_support.h"
#include "topoguard/cluster/feasibility.h"
#include "topoguard/cluster/feasibility_cache.h"

namespace topoguard::cluster {
namespace {

struct Generated {
  std::string yaml;
  std::vector<std::string> gpu_uuids;
};

class ClusterGenerator {
 public:
  explicit ClusterGenerator(unsigned seed) : random_(seed) {
    for (Template& t : templates_) {
      t = Template{below(3), chance(0.5) ? 4 : 2,
                   std::vector<int>{2, 4, 8}[static_cast<std::size_t>(below(3))]};
    }
  }

  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(random_) < p; }
  int below(int n) { return std::uniform_int_distribution<int>(0, n - 1)(random_); }

  // One node's two (or three) slices; `changed` varies its GPUs' driver version.
  std::string node_slices(const std::string& node, bool changed = false) {
    static const char* const kModels[] = {"H100", "A100", "B200"};
    // Mostly one of the cluster's node templates, with a variation now and then.
    const Template& t = templates_[static_cast<std::size_t>(below(3))];
    const int model = t.model;
    const int roots = t.roots;
    const int nics = t.nics;
    const bool tainted = chance(0.1);
    const bool moved_root = chance(0.1);
    const bool incomplete = chance(0.05);
    const bool shareable = chance(0.15);
    const bool partitioned = chance(0.1);
    // A short name beside the same name qualified: the allocator reads each under its own name.
    const bool flipped_numa = chance(0.3);
    const std::string suffix(1, static_cast<char>('a' + below(3)));
    std::ostringstream out;
    out << "---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: " << node
        << "-gpu-" << suffix << "}\nspec:\n  driver: gpu.nvidia.com\n  nodeName: " << node
        << "\n  pool: {name: " << node << ", resourceSliceCount: " << (incomplete ? 2 : 1) << "}\n";
    if (partitioned) {
      out << "  sharedCounters: [{name: gpu-0, counters: {memory: {value: 80Gi}}}]\n";
    }
    out << "  devices:\n";
    for (int i = 0; i < 8; ++i) {
      const std::string uuid = "GPU-" + node + "-" + std::to_string(i);
      uuids_.push_back(uuid);
      out << "  - name: gpu-" << i << "\n    attributes:\n"
          << "      productName: {string: NVIDIA " << kModels[model] << " SN" << node << "}\n"
          << "      uuid: {string: " << uuid << "}\n"
          << "      index: {int: " << i << "}\n"
          << "      numa: {int: " << (flipped_numa ? 1 - i / 4 : i / 4) << "}\n"
          << "      gpu.nvidia.com/numa: {int: " << i / 4 << "}\n"
          << "      driverVersion: {version: " << (changed ? "580.1.0" : "570.1.0") << "}\n"
          << "      resource.kubernetes.io/pcieRoot: {string: pci0000:" << 10 + (i % roots) * 10
          << "}\n"
          << "      topology.example.com/node: {string: " << node << "}\n";
      if (tainted && i == 0) {
        out << "    taints: [{key: maint, value: 'yes', effect: NoSchedule}]\n";
      }
    }
    if (partitioned) {
      for (int i = 0; i < 3; ++i) {
        out << "  - name: gpu-0-mig-" << i << "\n    attributes: {mig: {bool: true}}\n"
            << "    consumesCounters: [{counterSet: gpu-0, counters: {memory: {value: 40Gi}}}]\n";
      }
    }
    out << "---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: " << node
        << "-nic}\nspec:\n  driver: dra.net\n  nodeName: " << node << "\n  pool: {name: " << node
        << "-nic, resourceSliceCount: 1}\n  devices:\n";
    for (int i = 0; i < nics; ++i) {
      const int root = (moved_root && i == 0) ? (i + 1) % roots : i % roots;
      out << "  - name: nic-" << i << "\n    attributes:\n"
          << "      rdma: {bool: true}\n"
          << "      ifName: {string: eth" << i << "}\n"
          << "      resource.kubernetes.io/pcieRoot: {string: pci0000:" << 10 + root * 10 << "}\n"
          << "      topology.example.com/node: {string: " << node << "}\n";
      if (shareable) {
        out << "    allowMultipleAllocations: true\n    capacity: {bandwidth: {value: 200Gi, "
               "requestPolicy: {default: 50Gi, validRange: {min: 50Gi, step: 50Gi}}}}\n";
      }
    }
    return out.str();
  }

  Generated cluster() {
    Generated out;
    uuids_.clear();
    std::ostringstream yaml;
    yaml << R"(apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.nvidia.com}
spec: {selectors: [{cel: {expression: 'device.driver == "gpu.nvidia.com"'}}]}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu-whole}
spec: {selectors: [{cel: {expression: 'device.driver == "gpu.nvidia.com" && !has(device.attributes["gpu.nvidia.com"].mig)'}}]}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: dranet}
spec: {selectors: [{cel: {expression: 'device.driver == "dra.net"'}}]}
)";
    const int nodes = 4 + below(17);
    std::vector<std::pair<std::string, std::string>> allocatable;  // pool, device
    for (int n = 0; n < nodes; ++n) {
      const std::string node = "node-" + std::to_string(below(1000) * 100 + n);
      yaml << node_slices(node);
      allocatable.emplace_back(node, "gpu-" + std::to_string(below(8)));
    }
    if (chance(0.3)) {
      yaml << R"(---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: shared}
spec:
  driver: dra.net
  allNodes: true
  pool: {name: shared, resourceSliceCount: 1}
  devices:
  - name: shared-nic
    attributes: {rdma: {bool: true}, resource.kubernetes.io/pcieRoot: {string: pci0000:10}}
)";
    }
    if (chance(0.5)) {
      yaml << "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: other, "
              "namespace: ns}\nspec: {devices: {requests: []}}\nstatus: {allocation: {devices: "
              "{results: [";
      const int taken = 1 + below(3);
      for (int i = 0; i < taken; ++i) {
        const auto& [pool, device] = allocatable[static_cast<std::size_t>(below(nodes))];
        yaml << (i == 0 ? "" : ", ") << "{request: r, driver: gpu.nvidia.com, pool: " << pool
             << ", device: " << (chance(0.2) ? "gpu-0-mig-0" : device) << "}";
      }
      yaml << "]}}}\n";
    }
    out.yaml = yaml.str();
    out.gpu_uuids = uuids_;
    return out;
  }

  // A claim's spec.devices, YAML; its GPU request selects with `gpu_expression` when given.
  std::string claim(const Generated& cluster, const std::string& gpu_expression = "") {
    const int gpus = std::vector<int>{1, 2, 4}[static_cast<std::size_t>(below(3))];
    const int nics = 1 + below(2);
    std::string gpu_selector;
    const auto some_uuid = [&] {
      return cluster.gpu_uuids[static_cast<std::size_t>(
          below(static_cast<int>(cluster.gpu_uuids.size())))];
    };
    switch (gpu_expression.empty() ? below(9) : -1) {
      case -1:
        gpu_selector = "selectors: [{cel: {expression: '" + gpu_expression + "'}}], ";
        break;
      case 4:
        gpu_selector = "selectors: [{cel: {expression: 'device.attributes[\"gpu.nvidia.com\"].uuid "
                       "!= \"" + some_uuid() + "\"'}}], ";
        break;
      case 5:
        gpu_selector = "selectors: [{cel: {expression: 'device.attributes[\"gpu.nvidia.com\"].uuid "
                       "in [\"" + some_uuid() + "\", \"" + some_uuid() + "\", \"GPU-x\"]'}}], ";
        break;
      case 6:
        gpu_selector = "selectors: [{cel: {expression: 'has(device.attributes[\"gpu.nvidia.com\"]."
                       "uuid) && device.attributes[\"gpu.nvidia.com\"].uuid != \"GPU-x\"'}}, "
                       "{cel: {expression: 'device.attributes[\"topology.example.com\"].node != "
                       "\"node-7\"'}}], ";
        break;
      case 0:
        gpu_selector =
            "selectors: [{cel: {expression: 'device.attributes[\"gpu.nvidia.com\"]."
            "productName.startsWith(\"NVIDIA H100\")'}}], ";
        break;
      case 1:
        gpu_selector =
            "selectors: [{cel: {expression: 'device.attributes[\"gpu.nvidia.com\"].uuid "
            "== \"" +
            cluster.gpu_uuids[static_cast<std::size_t>(
                below(static_cast<int>(cluster.gpu_uuids.size())))] +
            "\"'}}], ";
        break;
      case 2:
        gpu_selector =
            "selectors: [{cel: {expression: '\"uuid\" in "
            "device.attributes[\"gpu.nvidia.com\"]'}}], ";
        break;
      case 3:
        gpu_selector =
            "selectors: [{cel: {expression: 'device.attributes[\"gpu.nvidia.com\"]."
            "driverVersion.isGreaterThan(semver(\"575.0.0\"))'}}], ";
        break;
      default:
        break;
    }
    const std::string tolerations =
        chance(0.3) ? "tolerations: [{key: maint, operator: Exists}], " : "";
    const std::string nic_capacity =
        chance(0.2)
            ? ", capacity: {requests: {bandwidth: " + std::string(chance(0.5) ? "150Gi" : "50Gi") +
                  "}}"
            : "";
    std::string gpu_request;
    switch (below(5)) {
      case 0:
        gpu_request = "{name: gpu, exactly: {deviceClassName: gpu-whole, allocationMode: All, " +
                      gpu_selector + tolerations + "}}";
        break;
      case 1:
        gpu_request =
            "{name: gpu, firstAvailable: [{name: big, deviceClassName: gpu-whole, count: "
            "8, " +
            gpu_selector +
            "}, {name: small, deviceClassName: gpu-whole, count: " + std::to_string(gpus) + ", " +
            tolerations + "}]}";
        break;
      case 2:
        gpu_request =
            "{name: gpu, exactly: {deviceClassName: gpu.nvidia.com, count: 2, "
            "selectors: [{cel: {expression: 'has(device.attributes[\"gpu.nvidia.com\"]."
            "mig)'}}]}}";
        break;
      default:
        gpu_request =
            "{name: gpu, exactly: {deviceClassName: gpu-whole, count: " + std::to_string(gpus) +
            ", " + gpu_selector + tolerations + "}}";
        break;
    }
    std::string constraints;
    switch (below(6)) {
      case 3:
        constraints = ", constraints: [{requests: [gpu], matchAttribute: numa}]";
        break;
      case 0:
        break;
      case 1:
        constraints =
            ", constraints: [{requests: [gpu], distinctAttribute: "
            "resource.kubernetes.io/pcieRoot}]";
        break;
      case 2:
        constraints =
            ", constraints: [{requests: [gpu, nic], matchAttribute: "
            "topology.example.com/node}]";
        break;
      default:
        constraints =
            ", constraints: [{requests: [gpu, nic], matchAttribute: "
            "resource.kubernetes.io/pcieRoot}]";
        break;
    }
    return "{requests: [" + gpu_request +
           ", {name: nic, exactly: {deviceClassName: dranet, "
           "count: " +
           std::to_string(nics) + nic_capacity + "}}]" + constraints + "}";
  }

 private:
  struct Template {
    int model = 0;
    int roots = 4;
    int nics = 8;
  };

  std::mt19937 random_;
  Template templates_[3];
  std::vector<std::string> uuids_;
};

// Everything a result says, every node's answer included.
std::string describe(const ClaimFeasibility& result, const ClusterState& state) {
  std::ostringstream out;
  out << "verdict " << verdict_name(result.verdict) << " only_now " << result.only_now << "\n";
  if (result.allocation_error) {
    const AllocationError& e = *result.allocation_error;
    out << "error " << e.request << " " << e.attribute << " " << e.device << " " << e.node << " "
        << e.message << " " << e.pointer << "\n";
  }
  for (const std::string& note : result.notes) {
    out << "note " << note << "\n";
  }
  for (const AttributePublication& p : result.publications) {
    out << "publication " << p.request << " " << p.attribute << " " << p.driver << " nodes "
        << p.node_count;
    for (const auto* list : {&p.nodes_without, &p.nonstandard_values}) {
      for (const std::string& name : *list) {
        out << " " << name;
      }
      out << " |";
    }
    out << "\n";
  }
  if (const NodeFeasibility* closest = result.closest()) {
    out << "closest " << closest->node << "\n";
  }
  for (const NodeFeasibility& node : per_node(result, state)) {
    out << "node " << node.node << " " << verdict_name(node.verdict) << " "
        << static_cast<int>(node.shortfall) << " " << node.closeness << " " << node.reason << "\n";
    for (const auto& [request, ids] : node.assignment) {
      out << "  " << request << ":";
      for (const std::string& id : ids) {
        out << " " << id;
      }
      out << "\n";
    }
    for (const RequestOnNode& r : node.requests) {
      out << "  " << r.request << " " << r.needed << " " << r.matching << " " << r.maybe << " "
          << r.with_attribute << " " << r.tainted << " " << r.held << " " << r.too_small << "\n";
    }
  }
  return out.str();
}

// Random clusters and claims: by shape, with per-node attributes detected, chosen or none, the
// result is the one node by node, every node's answer included.
TEST(ShapeIndexTest, GroupedResultsEqualNodeByNode) {
  std::size_t grouped_checks = 0;
  std::size_t fewer_groups = 0;
  std::size_t verdicts[3] = {0, 0, 0};
  for (unsigned seed = 1; seed <= 60; ++seed) {
    ClusterGenerator generator(seed);
    const Generated cluster = generator.cluster();
    const ClusterState state = testing::build_state(cluster.yaml);
    const std::vector<NodeShapes> shapes = {
        NodeShapes::of(state),
        NodeShapes::of(state, ShapeOptions{AttributeNames{}}),
        NodeShapes::of(state, ShapeOptions{AttributeNames{
                                  "gpu.nvidia.com/uuid", "gpu.nvidia.com/productName",
                                  "topology.example.com/node", "resource.kubernetes.io/pcieRoot",
                                  "gpu.nvidia.com/numa"}}),
    };
    for (int c = 0; c < 12; ++c) {
      const std::string devices = generator.claim(cluster);
      const k8s::ClaimSpec spec = testing::claim_spec(devices);
      FeasibilityOptions options;
      options.own_claim = c % 4 == 0 ? "ns/other" : "ns/mine";
      options.with_allocations = c % 5 != 0;
      const ClaimFeasibility plain = check_feasibility(spec, state, options);
      ++verdicts[static_cast<std::size_t>(plain.verdict)];
      const std::string expected = describe(plain, state);
      for (const NodeShapes& node_shapes : shapes) {
        FeasibilityOptions grouped = options;
        grouped.shapes = &node_shapes;
        const ClaimFeasibility result = check_feasibility(spec, state, grouped);
        ASSERT_EQ(describe(result, state), expected)
            << "seed " << seed << " claim " << devices << "\n"
            << cluster.yaml;
        ++grouped_checks;
        fewer_groups += result.nodes.size() < state.nodes().size() ? 1 : 0;
      }
    }
  }
  EXPECT_EQ(grouped_checks, 60u * 12u * 3u);
  // The grouping does group (without per-node attributes it cannot: every GPU has a uuid), and
  // the claims have every answer.
  EXPECT_GT(fewer_groups, grouped_checks / 6);
  for (std::size_t count : verdicts) {
    EXPECT_GT(count, grouped_checks / 3 / 10);
  }
}

// Selectors that only compare a per-node attribute (a GPU's uuid) with string literals: by shape,
// the nodes where a value equals a literal are told apart and the others stay grouped, and the
// result is the one node by node. A literal long enough, with a selector costly enough, that
// devices differing only in that value might not cost alike is checked by value instead, with
// the same result; also with the nodes' values indexed once, by a FeasibilityCache, for every
// claim against the state.
TEST(ShapeIndexTest, LiteralComparisonsGroupAsNodeByNode) {
  std::size_t checks = 0;
  std::size_t grouped = 0;
  const std::string costly_tail = [] {
    std::string list;
    for (int i = 0; i < 1000; ++i) {
      list += i == 0 ? "0" : ",0";
    }
    return " && [" + list + "].all(x, x >= 0)";
  }();
  for (unsigned seed = 1; seed <= 30; ++seed) {
    ClusterGenerator generator(seed + 100);
    const Generated cluster = generator.cluster();
    const ClusterState state = testing::build_state(cluster.yaml);
    const NodeShapes shapes = NodeShapes::of(
        state, ShapeOptions{AttributeNames{"gpu.nvidia.com/uuid", "gpu.nvidia.com/productName",
                                           "topology.example.com/node"}});
    FeasibilityCache cache;  // keeps no answer (no spec_key), only the values
    const std::string uuid = "device.attributes[\"gpu.nvidia.com\"].uuid";
    const std::string some = cluster.gpu_uuids[seed % cluster.gpu_uuids.size()];
    for (const std::string& expression : {
             uuid + " != \"GPU-x\"",
             uuid + " != \"" + some + "\"",
             "\"" + some + "\" == " + uuid,
             uuid + " in [\"" + some + "\", \"" + cluster.gpu_uuids.front() + "\"]",
             "!has(" + uuid + ") || " + uuid + " != \"" + some + "\"",
             uuid + " != \"" + std::string(7000, 'x') + "\"" + costly_tail,
         }) {
      const k8s::ClaimSpec spec = testing::claim_spec(generator.claim(cluster, expression));
      FeasibilityOptions options;
      const std::string expected = describe(check_feasibility(spec, state, options), state);
      options.shapes = &shapes;
      const ClaimFeasibility result = check_feasibility(spec, state, options);
      ASSERT_EQ(describe(result, state), expected)
          << "seed " << seed << " selector " << expression.substr(0, 200) << "\n"
          << cluster.yaml;
      options.cache = &cache;
      ASSERT_EQ(describe(check_feasibility(spec, state, options), state), expected)
          << "seed " << seed << " selector " << expression.substr(0, 200) << " (values kept)";
      ++checks;
      grouped += result.nodes.size() < state.nodes().size() ? 1 : 0;
    }
  }
  EXPECT_EQ(checks, 30u * 6u);
  EXPECT_GT(grouped, checks / 3);
}

// Selectors that read a per-node attribute (a GPU's uuid, a node-name attribute) other than by
// comparing it with literals: each device is judged, nodes of one shape are grouped by what the
// selectors match on them, and the result is the one node by node, every node's answer included.
TEST(ShapeIndexTest, SelectorsReadingPerNodeValuesGroupByWhatTheyMatch) {
  std::size_t checks = 0;
  std::size_t grouped = 0;
  for (unsigned seed = 1; seed <= 30; ++seed) {
    ClusterGenerator generator(seed + 200);
    const Generated cluster = generator.cluster();
    const ClusterState state = testing::build_state(cluster.yaml);
    const std::vector<NodeShapes> shapes = {
        NodeShapes::of(state),
        NodeShapes::of(state, ShapeOptions{AttributeNames{"gpu.nvidia.com/uuid",
                                                          "gpu.nvidia.com/productName",
                                                          "topology.example.com/node"}}),
    };
    const std::string uuid = "device.attributes[\"gpu.nvidia.com\"].uuid";
    const std::string some = cluster.gpu_uuids[seed % cluster.gpu_uuids.size()];
    for (const std::string& expression : {
             uuid + ".endsWith(\"-3\") || " + uuid + ".endsWith(\"-5\")",
             uuid + ".startsWith(\"GPU-node-\")",
             "size(" + uuid + ") > 14",
             uuid + ".startsWith(\"" + some.substr(0, some.size() - 2) + "\")",
             uuid + " != \"GPU-x\" && " + uuid + ".contains(\"e-\")",
             std::string("device.attributes[\"gpu.nvidia.com\"].productName.endsWith(\"0\")"),
             std::string("device.attributes[\"topology.example.com\"].node.matches(\"[13579]$\")"),
             "!has(" + uuid + ") || " + uuid + " < \"" + some + "\"",
         }) {
      const k8s::ClaimSpec spec = testing::claim_spec(generator.claim(cluster, expression));
      FeasibilityOptions options;
      options.with_allocations = checks % 3 != 0;
      const std::string expected = describe(check_feasibility(spec, state, options), state);
      for (const NodeShapes& node_shapes : shapes) {
        options.shapes = &node_shapes;
        const ClaimFeasibility result = check_feasibility(spec, state, options);
        ASSERT_EQ(describe(result, state), expected)
            << "seed " << seed << " selector " << expression << "\n"
            << cluster.yaml;
        ++checks;
        grouped += result.nodes.size() < state.nodes().size() ? 1 : 0;
      }
    }
  }
  EXPECT_EQ(checks, 30u * 8u * 2u);
  // Most selectors match alike on every node of a shape: the nodes stay grouped.
  EXPECT_GT(grouped, checks / 3);
}

// What selectors can see of a device: devices alike in everything read share a key; a value
// compared only with literals counts by the literal it equals.
TEST(ShapeIndexTest, LookKeysTellDevicesApartByWhatSelectorsRead) {
  const ClusterState state = testing::build_state(R"(apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: d
  nodeName: n
  pool: {name: p, resourceSliceCount: 1}
  devices:
  - {name: a, attributes: {uuid: {string: u1}, model: {string: m}}}
  - {name: b, attributes: {uuid: {string: u2}, model: {string: m}}}
  - {name: c, attributes: {uuid: {string: u3}, model: {string: other}}}
  - {name: e, attributes: {uuid: {int: 4}, model: {string: m}}}
  - {name: f, attributes: {uuid: {string: u1}, model: {string: m}}, capacity: {mem: {value: 1Gi}}}
)");
  const auto key = [&](std::size_t d, const SelectorReads& reads) {
    return look_key(state.devices()[d], reads);
  };
  SelectorReads model_only;
  model_only.attributes = {"d/model"};
  EXPECT_EQ(key(0, model_only), key(1, model_only));
  EXPECT_EQ(key(0, model_only), key(3, model_only));
  EXPECT_NE(key(0, model_only), key(2, model_only));
  EXPECT_NE(key(0, model_only), key(4, model_only));  // capacity is always read
  SelectorReads by_value = model_only;
  by_value.attributes.insert("d/uuid");
  EXPECT_NE(key(0, by_value), key(1, by_value));
  SelectorReads by_literal = by_value;
  by_literal.by_literal["d/uuid"] = {"u2"};
  EXPECT_NE(key(0, by_literal), key(1, by_literal));  // u2 is the literal
  by_literal.by_literal["d/uuid"] = {"u9"};
  EXPECT_EQ(key(0, by_literal), key(1, by_literal));  // neither is
  EXPECT_NE(key(0, by_literal), key(3, by_literal));  // an int, not a string
  SelectorReads whole_domain = by_literal;
  whole_domain.domains = {"d"};
  EXPECT_NE(key(0, whole_domain), key(1, whole_domain));
}

// A step budget never changes an answer it suffices for, and past it the answer is unknown with
// nothing else said (no publication to warn about): random clusters and claims, by shape and
// node by node, with budgets from none to more than enough.
TEST(ShapeIndexTest, StepBudgetGivesTheAnswerOrUnknown) {
  std::size_t stopped = 0;
  std::size_t completed = 0;
  for (unsigned seed = 1; seed <= 25; ++seed) {
    ClusterGenerator generator(seed);
    const Generated cluster = generator.cluster();
    const ClusterState state = testing::build_state(cluster.yaml);
    const NodeShapes shapes = NodeShapes::of(state);
    for (int c = 0; c < 8; ++c) {
      const k8s::ClaimSpec spec = testing::claim_spec(generator.claim(cluster));
      FeasibilityOptions options;
      options.shapes = c % 2 == 0 ? &shapes : nullptr;
      const std::string expected = describe(check_feasibility(spec, state, options), state);
      for (std::size_t limit : {std::size_t{0}, std::size_t{1}, std::size_t{10}, std::size_t{100},
                                std::size_t{1'000}, std::size_t{100'000}}) {
        StepBudget budget(limit);
        options.budget = &budget;
        const ClaimFeasibility result = check_feasibility(spec, state, options);
        EXPECT_LE(budget.spent(), limit);
        EXPECT_EQ(budget.spent() + budget.left(), limit);
        EXPECT_EQ(result.budget_exhausted, budget.exhausted());
        if (result.budget_exhausted) {
          ++stopped;
          EXPECT_EQ(result.verdict, Verdict::kUnknown);
          EXPECT_TRUE(result.publications.empty());
          EXPECT_FALSE(result.allocation_error.has_value());
          EXPECT_FALSE(result.only_now);
        } else {
          ++completed;
          ASSERT_EQ(describe(result, state), expected)
              << "seed " << seed << " limit " << limit << "\n" << cluster.yaml;
        }
      }
    }
  }
  EXPECT_GT(stopped, 0u);
  EXPECT_GT(completed, 25u * 8u);  // the largest budget suffices for every claim at least
}

// Two checks given one budget share it: the second finds what the first left.
TEST(ShapeIndexTest, StepBudgetIsSharedBetweenChecks) {
  ClusterGenerator generator(3);
  const Generated cluster = generator.cluster();
  const ClusterState state = testing::build_state(cluster.yaml);
  const k8s::ClaimSpec spec = testing::claim_spec(generator.claim(cluster));
  StepBudget unbounded(std::numeric_limits<std::size_t>::max());
  FeasibilityOptions options;
  options.budget = &unbounded;
  const ClaimFeasibility once = check_feasibility(spec, state, options);
  const std::size_t cost = unbounded.spent();
  ASSERT_GT(cost, 0u);
  StepBudget budget(cost + cost / 2);
  options.budget = &budget;
  EXPECT_EQ(describe(check_feasibility(spec, state, options), state), describe(once, state));
  EXPECT_TRUE(check_feasibility(spec, state, options).budget_exhausted);
  EXPECT_TRUE(budget.exhausted());
}

// Nodes that differ only in per-node attributes share a shape; a claim whose selectors only
// compare one of them with string literals tells apart the nodes where it equals one, a claim
// reading it otherwise the nodes where its selectors match otherwise.
TEST(ShapeIndexTest, PerNodeAttributesGroupUnlessRead) {
  std::string yaml =
      "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu}\n"
      "spec: {selectors: [{cel: {expression: 'device.driver == \"d\"'}}]}\n";
  for (int n = 0; n < 20; ++n) {
    yaml += "---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s" +
            std::to_string(n) + "}\nspec: {driver: d, nodeName: n" + std::to_string(n + 10) +
            ", pool: {name: p" + std::to_string(n) +
            ", resourceSliceCount: 1}, devices: [{name: g, attributes: {uuid: {string: u" +
            std::to_string(n) + "}, model: {string: m}}}]}\n";
  }
  const ClusterState state = testing::build_state(yaml);
  const NodeShapes shapes = NodeShapes::of(state);
  EXPECT_EQ(shapes.per_node_attributes(), AttributeNames{"d/uuid"});
  ASSERT_EQ(shapes.shapes().size(), 1u);
  const auto selecting = [](const std::string& expression) {
    return testing::claim_spec("{requests: [{name: g, exactly: {deviceClassName: gpu, selectors: [{cel: "
                     "{expression: '" + expression + "'}}]}}]}");
  };
  FeasibilityOptions options;
  options.shapes = &shapes;
  const auto by_model = check_feasibility(selecting("device.attributes[\"d\"].model == \"m\""),
                                          state, options);
  EXPECT_EQ(by_model.nodes.size(), 1u);
  EXPECT_EQ(per_node(by_model, state).size(), 20u);
  // n13 publishes u3: it is told apart, the 19 others are one group.
  const auto by_uuid = check_feasibility(selecting("device.attributes[\"d\"].uuid == \"u3\""),
                                         state, options);
  ASSERT_EQ(by_uuid.nodes.size(), 2u);
  EXPECT_EQ(by_uuid.node_groups[1], std::vector<std::size_t>{3});
  EXPECT_EQ(by_uuid.verdict, Verdict::kSatisfiable);
  // A literal no device publishes: one group, and a handful of steps.
  StepBudget budget(19);
  options.budget = &budget;
  const auto unequal = check_feasibility(
      selecting("device.attributes[\"d\"].uuid != \"GPU-x\""), state, options);
  EXPECT_EQ(unequal.verdict, Verdict::kSatisfiable);
  EXPECT_EQ(unequal.nodes.size(), 1u);
  EXPECT_LT(budget.spent(), 19u);
  // Read otherwise, every device is judged: the 20 devices are past a budget of 19, which stops
  // before judging any.
  StepBudget small(19);
  options.budget = &small;
  const auto over_budget = check_feasibility(
      selecting("device.attributes[\"d\"].uuid.startsWith(\"u3\")"), state, options);
  EXPECT_TRUE(over_budget.budget_exhausted);
  EXPECT_EQ(over_budget.verdict, Verdict::kUnknown);
  EXPECT_TRUE(over_budget.nodes.empty());
  EXPECT_EQ(small.spent(), 0u);
  options.budget = nullptr;
  // Within the budget, every device is judged, and the nodes are grouped by what it matches:
  // n13 (u3) is told apart, the others (u1x and the rest) are one group.
  const auto by_match = check_feasibility(
      selecting("device.attributes[\"d\"].uuid.startsWith(\"u3\")"), state, options);
  ASSERT_EQ(by_match.nodes.size(), 2u);
  EXPECT_EQ(by_match.node_groups[1], std::vector<std::size_t>{3});
  EXPECT_EQ(by_match.verdict, Verdict::kSatisfiable);
}

// An index kept up to date node by node places nodes as one built from the new state does.
TEST(ShapeIndexTest, UpdatesMatchRebuild) {
  ClusterGenerator generator(11);
  std::string before;
  std::string after;
  std::vector<std::string> names;
  for (int n = 0; n < 12; ++n) {
    names.push_back("node-" + std::to_string(10 + n));
  }
  std::vector<std::string> slices;
  for (const std::string& name : names) {
    slices.push_back(generator.node_slices(name));
  }
  for (std::size_t n = 0; n < names.size(); ++n) {
    before += slices[n];
    if (n == 3) {
      after += generator.node_slices(names[n], true);  // changed
    } else if (n != 5) {                               // removed
      after += slices[n];
    }
  }
  after += generator.node_slices("node-99");  // added
  const ClusterState old_state = testing::build_state(before);
  const ClusterState new_state = testing::build_state(after);
  const ShapeOptions options{AttributeNames{"gpu.nvidia.com/uuid", "topology.example.com/node"}};
  ShapeIndex index = ShapeIndex::build(old_state, options);
  index.update_node(new_state, names[3]);
  index.update_node(new_state, names[5]);
  index.update_node(new_state, "node-99");
  EXPECT_EQ(index.node_count(), new_state.nodes().size());
  const NodeShapes updated = index.view(new_state);
  const NodeShapes rebuilt = NodeShapes::of(new_state, options);
  EXPECT_EQ(updated.shapes(), rebuilt.shapes());
  EXPECT_EQ(updated.shape_of(), rebuilt.shape_of());
}

}  // namespace
}  // namespace topoguard::cluster
