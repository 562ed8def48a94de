// The object store and its snapshots: after any sequence of watch events and relists, the store
// and the snapshot built from it are what a fresh list of the server's objects gives (the
// oracle); snapshots share objects instead of copying them, and a snapshot's inventory and
// cluster state see the objects it holds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "topoguard/cache/cache_snapshot.h"
#include "topoguard/cache/object_store.h"
#include "topoguard/cluster/feasibility.h"
#include "topoguard/k8s/claim_view.h"

namespace topoguard::cache {
namespace {

using kube::WatchEventType;

Json slice(const std::string& node, int version, int devices) {
  Json list = Json::array();
  for (int i = 0; i < devices; ++i) {
    list.push_back({{"name", "gpu-" + std::to_string(i)},
                    {"attributes",
                     {{"resource.kubernetes.io/pcieRoot",
                       {{"string", "pci0000:" + std::to_string(10 + (i + version) % 2)}}}}}});
  }
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "ResourceSlice"},
          {"metadata", {{"name", node + "-gpu"}, {"resourceVersion", std::to_string(version)}}},
          {"spec",
           {{"driver", "gpu.nvidia.com"},
            {"nodeName", node},
            {"pool", {{"name", node}, {"generation", 1}, {"resourceSliceCount", 1}}},
            {"devices", list}}}};
}

Json claim_template(const std::string& namespace_name, const std::string& name, int version) {
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "ResourceClaimTemplate"},
          {"metadata",
           {{"name", name},
            {"namespace", namespace_name},
            {"resourceVersion", std::to_string(version)}}},
          {"spec",
           {{"spec",
             {{"devices",
               {{"requests",
                 Json::array({{{"name", "gpu"},
                               {"exactly", {{"deviceClassName", "gpu.nvidia.com"}}}}})}}}}}}}};
}

// What the server holds, per resource and key: the oracle.
using ServerState = std::map<std::string, std::map<std::string, Json>>;

std::vector<Json> list_of(const ServerState& server, const std::string& resource) {
  std::vector<Json> items;
  if (const auto found = server.find(resource); found != server.end()) {
    for (const auto& [key, object] : found->second) {
      items.push_back(object);
    }
  }
  return items;
}

ObjectStore rebuilt_from_lists(const ServerState& server, const std::vector<std::string>& resources) {
  ObjectStore store;
  for (const std::string& resource : resources) {
    store.replace(resource, list_of(server, resource));
  }
  return store;
}

void expect_same(const ObjectStore& store, const ObjectStore& oracle) {
  ASSERT_EQ(store.resources().size(), oracle.resources().size());
  for (const auto& [resource, objects] : oracle.resources()) {
    const auto found = store.resources().find(resource);
    ASSERT_NE(found, store.resources().end()) << resource;
    ASSERT_EQ(found->second->size(), objects->size()) << resource;
    ASSERT_EQ(store.count(resource), oracle.count(resource)) << resource;
    for (const auto& [key, object] : *objects) {
      const auto held = found->second->find(key);
      ASSERT_NE(held, found->second->end()) << resource << " " << key;
      EXPECT_EQ(*held->second, *object) << resource << " " << key;
    }
  }
  ASSERT_EQ(store.slices().size(), oracle.slices().size());
  for (const auto& [key, read] : oracle.slices()) {
    const auto held = store.slices().find(key);
    ASSERT_NE(held, store.slices().end()) << key;
    ASSERT_EQ(bool(held->second), bool(read)) << key;
    if (read) {
      EXPECT_EQ((*held->second)->node, (*read)->node) << key;
      ASSERT_EQ((*held->second)->devices.size(), (*read)->devices.size()) << key;
      for (std::size_t i = 0; i < (*read)->devices.size(); ++i) {
        EXPECT_EQ((*held->second)->devices[i].id(), (*read)->devices[i].id()) << key;
        EXPECT_EQ((*held->second)->devices[i].attributes.begin()->second,
                  (*read)->devices[i].attributes.begin()->second)
            << key;
      }
    }
  }
}

std::vector<std::string> device_ids(const cluster::ClusterState& state) {
  std::vector<std::string> ids;
  for (const cluster::Device& device : state.devices()) {
    ids.push_back(device.id() + "@" + device.node.get() + "=" +
                  device.attribute("resource.kubernetes.io/pcieRoot")->to_string());
  }
  return ids;
}

// Two GPUs of one slice's driver under one PCIe root: what the node shapes must answer as node
// by node does.
k8s::ClaimSpec two_aligned_gpus() {
  const Json claim = {
      {"apiVersion", "resource.k8s.io/v1"},
      {"kind", "ResourceClaim"},
      {"metadata", {{"name", "two"}, {"namespace", "ml"}}},
      {"spec",
       {{"devices",
         {{"requests",
           Json::array({{{"name", "gpu"},
                         {"exactly",
                          {{"deviceClassName", "gpu"},
                           {"count", 2},
                           {"selectors",
                            Json::array({{{"cel",
                                           {{"expression",
                                             "device.driver == 'gpu.nvidia.com'"}}}}})}}}}})},
          {"constraints",
           Json::array({{{"requests", {"gpu"}},
                         {"matchAttribute", "resource.kubernetes.io/pcieRoot"}}})}}}}}};
  auto spec = k8s::read_claim_spec(claim);
  EXPECT_TRUE(spec.has_value());
  return *spec;
}

std::vector<std::string> verdicts(const std::vector<cluster::NodeFeasibility>& nodes) {
  std::vector<std::string> all;
  for (const cluster::NodeFeasibility& node : nodes) {
    all.push_back(node.node + ":" + std::string(cluster::verdict_name(node.verdict)));
  }
  return all;
}

// Random ADDED/MODIFIED/DELETED events, and now and then a relist (after a 410), applied to the
// store; at every step it holds what a list of the server would give, and so do its snapshots.
// The snapshots of one builder keep their node shapes per changed node: feasibility by shape
// answers every node as a check node by node does.
TEST(ObjectStoreTest, EventsAndRelistsMatchTheRebuiltFromListOracle) {
  const std::vector<std::string> resources = {"resourceslices", "resourceclaimtemplates"};
  for (unsigned seed = 1; seed <= 20; ++seed) {
    std::mt19937 random(seed);
    SnapshotBuilder builder;
    const k8s::ClaimSpec claim = two_aligned_gpus();
    ServerState server;
    ObjectStore store;
    for (const std::string& resource : resources) {
      store.replace(resource, {});
    }
    int version = 0;
    for (int step = 0; step < 300; ++step) {
      ++version;
      const std::string& resource = resources[random() % resources.size()];
      const int which = static_cast<int>(random() % 8);
      Json object = resource == "resourceslices"
                        ? slice("node-" + std::to_string(which), version,
                                1 + static_cast<int>(random() % 4))
                        : claim_template("ns-" + std::to_string(which % 3),
                                         "t-" + std::to_string(which), version);
      const std::string key = object_key(object);
      auto& objects = server[resource];
      const unsigned action = random() % 10;
      if (action == 0) {
        // The watch expired: the reflector lists again, page by page, and the list replaces
        // the resource's objects (those unchanged kept as they were).
        ObjectStore::Listing listing = store.begin_list(resource);
        std::vector<Json> items = list_of(server, resource);
        const std::size_t page_size = 1 + random() % 3;
        for (std::size_t first = 0; first < items.size(); first += page_size) {
          const std::size_t last = std::min(items.size(), first + page_size);
          listing.add(std::vector<Json>(items.begin() + static_cast<std::ptrdiff_t>(first),
                                        items.begin() + static_cast<std::ptrdiff_t>(last)));
        }
        store.commit(std::move(listing));
      } else if (action <= 3 && objects.count(key) != 0) {
        objects.erase(key);
        store.apply(resource, WatchEventType::kDeleted, std::move(object));
      } else {
        const WatchEventType type =
            objects.count(key) != 0 ? WatchEventType::kModified : WatchEventType::kAdded;
        objects.insert_or_assign(key, object);
        store.apply(resource, type, std::move(object));
      }
      if (step % 5 == 0 || step == 299) {
        const ObjectStore oracle = rebuilt_from_lists(server, resources);
        expect_same(store, oracle);
        const CacheSnapshotPtr snapshot = builder.build(store, static_cast<std::uint64_t>(step));
        const CacheSnapshotPtr expected = build_snapshot(oracle, 1);
        cluster::FeasibilityOptions by_shape;
        by_shape.shapes = &snapshot->shapes;
        EXPECT_EQ(verdicts(cluster::per_node(
                      cluster::check_feasibility(claim, snapshot->cluster_state, by_shape),
                      snapshot->cluster_state)),
                  verdicts(cluster::check_feasibility(claim, expected->cluster_state).nodes))
            << "seed " << seed << " step " << step;
        EXPECT_EQ(device_ids(snapshot->cluster_state), device_ids(expected->cluster_state))
            << "seed " << seed << " step " << step;
        EXPECT_EQ(snapshot->cluster_state.nodes().size(), expected->cluster_state.nodes().size());
        for (const auto& [held_key, held] : server["resourceclaimtemplates"]) {
          const std::string namespace_name = held["metadata"]["namespace"];
          const std::string name = held["metadata"]["name"];
          const Json* found = snapshot->inventory.claim_template(namespace_name, name);
          ASSERT_NE(found, nullptr) << held_key;
          EXPECT_EQ(*found, held);
        }
        if (HasFailure()) {
          return;
        }
      }
    }
  }
}

TEST(ObjectStoreTest, SnapshotsShareObjectsAndStayAsTheyWere) {
  ObjectStore store;
  store.replace("resourceslices", {slice("a", 1, 2)});
  const CacheSnapshotPtr first = build_snapshot(store, 1);
  store.apply("resourceslices", WatchEventType::kModified, slice("a", 2, 3));
  store.apply("resourceslices", WatchEventType::kAdded, slice("b", 3, 1));
  const CacheSnapshotPtr second = build_snapshot(store, 2);
  // The first snapshot is immutable: later events do not reach it.
  EXPECT_EQ(first->cluster_state.devices().size(), 2u);
  EXPECT_EQ(second->cluster_state.devices().size(), 4u);
  EXPECT_EQ(second->cluster_state.nodes().size(), 2u);
  // Unchanged slices are shared, not copied.
  const Result<cluster::ParsedSlicePtr>& in_store = store.slices().at("/b-gpu");
  EXPECT_EQ(second->objects.slices().at("/b-gpu")->get(), in_store->get());
  EXPECT_EQ(second->generation, 2u);
}

// A relist taken page by page changes nothing until it is committed; then what did not change
// since the store held it (same resourceVersion) is the store's, not a second copy, what changed
// is read again, and what the list no longer has is gone. A list dropped halfway leaves the
// store as it was.
TEST(ObjectStoreTest, RelistSharesWhatDidNotChange) {
  ObjectStore store;
  store.replace("resourceslices", {slice("a", 1, 2), slice("b", 2, 2), slice("c", 3, 1)});
  store.replace("resourceclaimtemplates",
                {claim_template("ml", "kept", 4), claim_template("ml", "changed", 5)});
  const ObjectStore before = store;

  ObjectStore::Listing dropped = store.begin_list("resourceslices");
  dropped.add({slice("a", 7, 1)});
  EXPECT_EQ(store.slices().at("/a-gpu").value()->devices.size(), 2u);  // not committed

  ObjectStore::Listing slices = store.begin_list("resourceslices");
  slices.add({slice("a", 1, 2)});
  slices.add({slice("b", 8, 3)});  // c is gone
  store.commit(std::move(slices));
  ObjectStore::Listing templates = store.begin_list("resourceclaimtemplates");
  templates.add({claim_template("ml", "kept", 4), claim_template("ml", "changed", 9)});
  store.commit(std::move(templates));

  ASSERT_EQ(store.slices().size(), 2u);
  EXPECT_EQ(store.slices().at("/a-gpu")->get(), before.slices().at("/a-gpu")->get());
  EXPECT_NE(store.slices().at("/b-gpu")->get(), before.slices().at("/b-gpu")->get());
  EXPECT_EQ(store.slices().at("/b-gpu").value()->devices.size(), 3u);
  const ObjectMap& now = *store.resources().at("resourceclaimtemplates");
  const ObjectMap& then = *before.resources().at("resourceclaimtemplates");
  EXPECT_EQ(now.at("ml/kept"), then.at("ml/kept"));
  EXPECT_NE(now.at("ml/changed"), then.at("ml/changed"));
  EXPECT_EQ((*now.at("ml/changed"))["metadata"]["resourceVersion"], "9");
  // The copy taken before is as it was.
  EXPECT_EQ(before.slices().size(), 3u);
  EXPECT_EQ((*then.at("ml/changed"))["metadata"]["resourceVersion"], "5");
}

// A copy of the store (a snapshot's) shares its maps until one side changes them: then only
// the changed resource's map is copied, and the other side still sees what it held.
TEST(ObjectStoreTest, CopiesShareMapsUntilOneChanges) {
  ObjectStore store;
  store.replace("resourceslices", {slice("a", 1, 2)});
  store.replace("resourceclaimtemplates", {claim_template("ml", "pair", 1)});
  const ObjectStore copy = store;
  const auto map_of = [](const ObjectStore& of, const char* resource) {
    return &*of.resources().at(resource);
  };
  EXPECT_EQ(map_of(copy, "resourceslices"), map_of(store, "resourceslices"));
  EXPECT_EQ(&copy.slices(), &store.slices());

  store.apply("resourceclaimtemplates", WatchEventType::kAdded, claim_template("ml", "solo", 2));
  EXPECT_NE(map_of(copy, "resourceclaimtemplates"), map_of(store, "resourceclaimtemplates"));
  EXPECT_EQ(copy.resources().at("resourceclaimtemplates")->size(), 1u);
  EXPECT_EQ(store.resources().at("resourceclaimtemplates")->size(), 2u);
  EXPECT_EQ(map_of(copy, "resourceslices"), map_of(store, "resourceslices"));

  // Changing the copy leaves the store as it was, slices read included.
  ObjectStore changed = copy;
  changed.apply("resourceslices", WatchEventType::kDeleted, slice("a", 2, 2));
  EXPECT_EQ(changed.slices().size(), 0u);
  EXPECT_EQ(store.slices().size(), 1u);
  EXPECT_EQ(copy.slices().size(), 1u);
  EXPECT_EQ(store.count("resourceslices"), 1u);
  // A store whose maps no copy shares changes them in place.
  const SliceMap* own = &changed.slices();
  changed.apply("resourceslices", WatchEventType::kAdded, slice("b", 3, 1));
  EXPECT_EQ(&changed.slices(), own);
}

// managedFields, which the API server sends with every object, are not kept; the rest is.
TEST(ObjectStoreTest, DropsManagedFields) {
  const auto claim = [](const char* name, const char* manager) {
    return Json{{"apiVersion", "resource.k8s.io/v1"},
                {"kind", "ResourceClaim"},
                {"metadata",
                 {{"name", name},
                  {"namespace", "ml"},
                  {"managedFields", Json::array({{{"manager", manager}}})}}},
                {"spec", {{"devices", {{"requests", Json::array()}}}}}};
  };
  ObjectStore store;
  store.replace("resourceclaims", {claim("a", "kubectl")});
  store.apply("resourceclaims", WatchEventType::kAdded, claim("b", "scheduler"));
  ASSERT_EQ(store.resources().at("resourceclaims")->size(), 2u);
  for (const auto& [key, object] : *store.resources().at("resourceclaims")) {
    const Json& metadata = object->at("metadata");
    EXPECT_FALSE(metadata.contains("managedFields")) << key;
    EXPECT_TRUE(metadata.contains("name")) << key;
    EXPECT_TRUE(object->contains("spec")) << key;
  }
}

// A slice is read once, when the store takes it, and kept as read, without its object; one that
// cannot be read is kept as its error and its object cut to its node. Snapshots share the
// devices of the slices no event changed.
TEST(ObjectStoreTest, KeepsSlicesReadAndSharesTheirDevices) {
  ObjectStore store;
  Json broken = slice("c", 1, 1);
  broken["spec"]["devices"][0]["capacity"] = {{"memory", {{"value", "lots"}}}};
  store.replace("resourceslices.v1.resource.k8s.io",
                {slice("a", 1, 2), slice("b", 2, 1), std::move(broken)});
  const ObjectMap& kept = *store.resources().at("resourceslices.v1.resource.k8s.io");
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(*kept.at("/c-gpu"), Json({{"spec", {{"nodeName", "c"}}}}));
  EXPECT_EQ(store.count("resourceslices.v1.resource.k8s.io"), 3u);
  EXPECT_FALSE(store.slices().at("/c-gpu"));
  store.apply("resourceslices.v1.resource.k8s.io", WatchEventType::kModified, slice("c", 2, 1));
  EXPECT_TRUE(kept.empty());
  store.apply("resourceslices.v1.resource.k8s.io", WatchEventType::kDeleted, slice("c", 3, 1));
  ASSERT_EQ(store.slices().size(), 2u);
  const Result<cluster::ParsedSlicePtr>& read = store.slices().at("/a-gpu");
  ASSERT_TRUE(read);
  EXPECT_EQ((*read)->devices.size(), 2u);

  SnapshotBuilder builder;
  const CacheSnapshotPtr first = builder.build(store, 1);
  store.apply("resourceslices.v1.resource.k8s.io", WatchEventType::kModified, slice("b", 3, 3));
  const CacheSnapshotPtr second = builder.build(store, 2);
  EXPECT_EQ(second->cluster_state.devices().size(), 5u);
  const auto device_of = [](const CacheSnapshot& snapshot, std::string_view id) {
    return &snapshot.cluster_state.devices()[*snapshot.cluster_state.device_index(id)];
  };
  const std::string unchanged = (*read)->devices[0].id();
  EXPECT_EQ(device_of(*first, unchanged), device_of(*second, unchanged));
  EXPECT_EQ(device_of(*second, unchanged), &(*read)->devices[0]);

  store.apply("resourceslices.v1.resource.k8s.io", WatchEventType::kDeleted, slice("a", 4, 2));
  EXPECT_EQ(store.slices().count("/a-gpu"), 0u);
  EXPECT_EQ(builder.build(store, 3)->cluster_state.devices().size(), 3u);
}

TEST(ObjectStoreTest, DeletesOfUnknownObjectsAndBookmarksChangeNothing) {
  ObjectStore store;
  store.replace("resourceslices", {slice("a", 1, 1)});
  store.apply("resourceslices", WatchEventType::kDeleted, slice("zzz", 2, 1));
  store.apply("resourceslices", WatchEventType::kBookmark, slice("b", 3, 1));
  EXPECT_EQ(store.size(), 1u);
}

TEST(ObjectStoreTest, SnapshotReportsObjectsTheClusterStateCannotRead) {
  ObjectStore store;
  Json broken = slice("a", 1, 1);
  broken["spec"]["devices"][0]["capacity"] = {{"memory", {{"value", "lots"}}}};
  store.replace("resourceslices", {broken, slice("b", 2, 1)});
  const CacheSnapshotPtr snapshot = build_snapshot(store, 1);
  ASSERT_EQ(snapshot->errors.size(), 1u);
  EXPECT_NE(snapshot->errors[0].message.find("resourceslices /a-gpu"), std::string::npos)
      << snapshot->errors[0].to_string();
  EXPECT_EQ(snapshot->cluster_state.devices().size(), 1u);
}

TEST(ObjectStoreTest, InventoryOfASnapshotSeesItsClusterState) {
  ObjectStore store;
  store.replace("resourceslices", {slice("a", 1, 1)});
  store.replace("resourceclaimtemplates", {claim_template("ml", "pair", 1)});
  const CacheSnapshotPtr snapshot = build_snapshot(store, 1);
  EXPECT_EQ(snapshot->inventory.cluster_state(), &snapshot->cluster_state);
  EXPECT_NE(snapshot->inventory.claim_template("ml", "pair"), nullptr);
  EXPECT_EQ(snapshot->inventory.claim_template("ml", "other"), nullptr);
  // A webhook's claims are never all known: a missing reference is unknown.
  EXPECT_FALSE(snapshot->inventory.claims_known());
}

// Namespaces reach the inventory, for policies' namespace selectors, and follow their events.
TEST(ObjectStoreTest, InventoryOfASnapshotKnowsNamespaceLabels) {
  const auto ns = [](const char* tier) {
    return Json{{"apiVersion", "v1"},
                {"kind", "Namespace"},
                {"metadata", {{"name", "ml"}, {"labels", {{"tier", tier}}}}}};
  };
  ObjectStore store;
  store.replace("namespaces.v1", {ns("dev")});
  const CacheSnapshotPtr first = build_snapshot(store, 1);
  store.apply("namespaces.v1", WatchEventType::kModified, ns("prod"));
  const CacheSnapshotPtr second = build_snapshot(store, 2);
  ASSERT_NE(first->inventory.namespace_labels("ml"), nullptr);
  EXPECT_EQ((*first->inventory.namespace_labels("ml"))["tier"], "dev");
  EXPECT_EQ((*second->inventory.namespace_labels("ml"))["tier"], "prod");
  EXPECT_EQ(second->inventory.namespace_labels("other"), nullptr);
}

}  // namespace
}  // namespace topoguard::cache
