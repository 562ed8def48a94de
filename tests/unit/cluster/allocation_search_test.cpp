#include "allocation_search.h"

#include <gtest/gtest.h>

#include "cluster_test_support.h"
#include "note_name.h"

namespace topoguard::cluster::search {
namespace {

constexpr std::string_view kRoot = "resource.kubernetes.io/pcieRoot";
constexpr std::size_t kAny = Constraint::kAnyChoice;

// A node shaped like AWS p4d: gpu-0..7, two per root (10, 20, 90, a0); efa-0..3, one per root.
class SearchTest : public ::testing::Test {
 protected:
  SearchTest() {
    std::string yaml =
        "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\n"
        "spec:\n  driver: d\n  nodeName: n\n  pool: {name: n}\n  devices:\n";
    const char* roots[] = {"pci0000:10", "pci0000:20", "pci0000:90", "pci0000:a0"};
    for (int i = 0; i < 8; ++i) {
      yaml += "  - {name: gpu-" + std::to_string(i) + ", attributes: {" + std::string(kRoot) +
              ": {string: \"" + roots[i / 2] + "\"}}}\n";
    }
    for (int i = 0; i < 4; ++i) {
      yaml += "  - {name: efa-" + std::to_string(i) + ", attributes: {" + std::string(kRoot) +
              ": {string: \"" + roots[i] + "\"}}}\n";
    }
    yaml += "  - {name: bare}\n";
    state_ = testing::build_state(yaml);
  }

  std::vector<std::size_t> gpus() const { return {0, 1, 2, 3, 4, 5, 6, 7}; }
  std::vector<std::size_t> efas() const { return {8, 9, 10, 11}; }

  static Request exact(std::vector<std::size_t> definite, std::size_t count,
                       std::vector<std::size_t> maybe = {}) {
    return Request{{Choice{"r", false, count, std::move(definite), std::move(maybe)}}};
  }
  static Constraint on(std::vector<std::pair<std::size_t, std::size_t>> covers,
                       std::string_view attribute = kRoot) {
    return Constraint{std::string(attribute), std::move(covers)};
  }

  Outcome run(const std::vector<Request>& requests, const std::vector<Constraint>& constraints,
              Scenario scenario = Scenario::kOptimistic, std::size_t max_steps = 10'000) {
    last_ = search(state_.devices(), requests, constraints, scenario, max_steps);
    return last_.outcome;
  }

  ClusterState state_;
  SearchResult last_;
};

struct ShapeCase {
  std::string_view note;
  std::size_t gpus;
  std::size_t efas;
  Outcome expected;
};

class P4dShapeTest : public SearchTest, public ::testing::WithParamInterface<ShapeCase> {};

// GPU + EFA counts under one pcieRoot constraint on a p4d-shaped node: two GPUs and one EFA
// per root, so 1+1 and 2+1 fit, 1+2 and 3+1 do not.
TEST_P(P4dShapeTest, SharedRoot) {
  const ShapeCase& c = GetParam();
  EXPECT_EQ(run({exact(gpus(), c.gpus), exact(efas(), c.efas)}, {on({{0, kAny}, {1, kAny}})}),
            c.expected);
}

INSTANTIATE_TEST_SUITE_P(Shapes, P4dShapeTest,
                         ::testing::Values(ShapeCase{"one_gpu_one_efa", 1, 1, Outcome::kFound},
                                           ShapeCase{"two_gpus_one_efa", 2, 1, Outcome::kFound},
                                           ShapeCase{"one_gpu_two_efas", 1, 2, Outcome::kNotFound},
                                           ShapeCase{"three_gpus_one_efa", 3, 1,
                                                     Outcome::kNotFound}),
                         topoguard::testing::NoteName{});

// The assignment found holds distinct devices that share the root.
TEST_F(SearchTest, AssignmentSharesOneRoot) {
  ASSERT_EQ(run({exact(gpus(), 2), exact(efas(), 1)}, {on({{0, kAny}, {1, kAny}})}),
            Outcome::kFound);
  ASSERT_EQ(last_.devices.size(), 2u);
  EXPECT_EQ(last_.devices[0], (std::vector<std::size_t>{0, 1}));
  EXPECT_EQ(last_.devices[1], std::vector<std::size_t>{8});
}

// A device lacking the attribute is never chosen under the constraint, even as the only one;
// without the constraint it is.
TEST_F(SearchTest, DeviceWithoutAttributeIsNeverChosen) {
  EXPECT_EQ(run({exact({12}, 1)}, {on({{0, kAny}})}), Outcome::kNotFound);
  EXPECT_EQ(run({exact({12}, 1)}, {}), Outcome::kFound);
}

// Requests compete for devices: two requests of 5 over the same 8 GPUs cannot both be served.
TEST_F(SearchTest, RequestsGetDistinctDevices) {
  EXPECT_EQ(run({exact(gpus(), 4), exact(gpus(), 4)}, {}), Outcome::kFound);
  EXPECT_EQ(run({exact(gpus(), 5), exact(gpus(), 4)}, {}), Outcome::kNotFound);
}

// firstAvailable: when the first subrequest cannot be satisfied the next one is tried; a
// constraint naming "req/sub" binds only that subrequest, so falling back escapes it.
TEST_F(SearchTest, FirstAvailableFallsBackInOrder) {
  Request gpu{{Choice{"gpu/three", false, 3, gpus(), {}}, Choice{"gpu/two", false, 2, gpus(), {}}}};
  ASSERT_EQ(run({gpu, exact(efas(), 1)}, {on({{0, kAny}, {1, kAny}})}), Outcome::kFound);
  EXPECT_EQ(last_.choices, (std::vector<std::size_t>{1, 0}));

  // gpu-0 is on pci0000:10, nic/one can only get efa-1 on pci0000:20; nic/two (two EFAs on one
  // root) never fits. Bound to "nic", the fallback must share the root and fails; bound only
  // to "nic/two", the fallback escapes the constraint.
  Request nic{{Choice{"nic/two", false, 2, efas(), {}}, Choice{"nic/one", false, 1, {9}, {}}}};
  EXPECT_EQ(run({exact({0}, 1), nic}, {on({{0, kAny}, {1, kAny}})}), Outcome::kNotFound);
  ASSERT_EQ(run({exact({0}, 1), nic}, {on({{0, kAny}, {1, 0}})}), Outcome::kFound);
  EXPECT_EQ(last_.choices, (std::vector<std::size_t>{0, 1}));
}

// allocationMode All takes every matching device: fine when they share one root, a failure when
// one differs or lacks it, and never satisfied by zero devices.
TEST_F(SearchTest, AllocationModeAll) {
  const auto all = [](std::vector<std::size_t> devices) {
    return Request{{Choice{"all", true, 0, std::move(devices), {}}}};
  };
  EXPECT_EQ(run({all({0, 1}), exact(efas(), 1)}, {on({{0, kAny}, {1, kAny}})}), Outcome::kFound);
  EXPECT_EQ(last_.devices[0], (std::vector<std::size_t>{0, 1}));
  EXPECT_EQ(run({all({0, 1, 2}), exact(efas(), 1)}, {on({{0, kAny}, {1, kAny}})}),
            Outcome::kNotFound);
  EXPECT_EQ(run({all({0, 12})}, {on({{0, kAny}})}), Outcome::kNotFound);
  EXPECT_EQ(run({all({})}, {}), Outcome::kNotFound);
  // All takes its devices first: a counted request cannot share them.
  EXPECT_EQ(run({all({0, 1}), exact({0, 1}, 1)}, {}), Outcome::kNotFound);
}

// May-match devices serve counted requests only in the optimistic scenario; an All request
// must accept them in the pessimistic one and needs a sure device.
TEST_F(SearchTest, MayMatchDevicesByScenario) {
  const std::vector<Request> requests{exact({0}, 1, {1}), exact({}, 1, {8})};
  const std::vector<Constraint> constraints{on({{0, kAny}, {1, kAny}})};
  EXPECT_EQ(run(requests, constraints, Scenario::kOptimistic), Outcome::kFound);
  EXPECT_EQ(run(requests, constraints, Scenario::kPessimistic), Outcome::kNotFound);

  const std::vector<Request> all{Request{{Choice{"all", true, 0, {0}, {2}}}}};
  EXPECT_EQ(run(all, {on({{0, kAny}})}, Scenario::kOptimistic), Outcome::kFound);
  EXPECT_EQ(run(all, {on({{0, kAny}})}, Scenario::kPessimistic), Outcome::kNotFound);
  const std::vector<Request> all_maybe{Request{{Choice{"all", true, 0, {}, {2}}}}};
  EXPECT_EQ(run(all_maybe, {}, Scenario::kOptimistic), Outcome::kFound);
  EXPECT_EQ(run(all_maybe, {}, Scenario::kPessimistic), Outcome::kNotFound);
}

// Several constraints at once: GPUs share a root with the NIC, and the two GPUs share a second
// attribute only some of them publish.
TEST_F(SearchTest, SeveralConstraintsAtOnce) {
  EXPECT_EQ(run({exact(gpus(), 2), exact(efas(), 1)},
                {on({{0, kAny}, {1, kAny}}), on({{0, kAny}}, "d/missing")}),
            Outcome::kNotFound);
}

// List-valued attributes match when all chosen devices share an element; types must agree.
TEST_F(SearchTest, ListValuesAndTypes) {
  const ClusterState state = testing::build_state(R"(
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: d
  nodeName: n
  pool: {name: n}
  devices:
  - {name: cpu, attributes: {a: {strings: [x, y]}, n: {int: 1}}}
  - {name: gpu, attributes: {a: {string: y}, n: {string: "1"}}}
  - {name: nic, attributes: {a: {strings: [y, z]}, n: {int: 1}}}
)");
  const auto request = [](std::size_t device) {
    return Request{{Choice{"r", false, 1, {device}, {}}}};
  };
  const std::vector<Request> requests{request(0), request(1), request(2)};
  EXPECT_EQ(search(state.devices(), requests,
                   {Constraint{"d/a", {{0, kAny}, {1, kAny}, {2, kAny}}}},
                   Scenario::kOptimistic, 100)
                .outcome,
            Outcome::kFound);
  EXPECT_EQ(search(state.devices(), requests, {Constraint{"d/n", {{0, kAny}, {1, kAny}}}},
                   Scenario::kOptimistic, 100)
                .outcome,
            Outcome::kNotFound);
  EXPECT_EQ(search(state.devices(), requests, {Constraint{"d/n", {{0, kAny}, {2, kAny}}}},
                   Scenario::kOptimistic, 100)
                .outcome,
            Outcome::kFound);
}

// The bound turns a long search into "bound hit", never "not found".
TEST_F(SearchTest, BoundHitIsNotANo) {
  std::vector<Choice> choices;
  for (int i = 0; i < 8; ++i) {
    choices.push_back(Choice{"sub", false, 9, gpus(), {}});  // never satisfiable
  }
  std::vector<Request> requests(4, Request{choices});
  EXPECT_EQ(run(requests, {}, Scenario::kOptimistic, 50), Outcome::kBoundHit);
  EXPECT_EQ(run(requests, {}, Scenario::kOptimistic, 100'000), Outcome::kNotFound);
}

}  // namespace
}  // namespace topoguard::cluster::search
