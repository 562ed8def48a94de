// `topoguard evidence`: a Pod's (or one claim's) allocation read from a live cluster -> the
// devices with their published attributes and a verdict, as a JSON document on stdout to keep
// with benchmark results, and the verdict as one line per claim on stderr.
#include <iostream>
#include <optional>

#include "cluster_slices.h"
#include "commands.h"
#include "conventions.h"
#include "topoguard/common/json_reader.h"
#include "topoguard/common/json_writer.h"
#include "topoguard/common/printable_text.h"
#include "topoguard/hardware/evidence.h"
#include "topoguard/hardware/node_report.h"

namespace topoguard::cli {

namespace {

// Nesting of a Pod or claim as the API returns it, with room to spare.
constexpr int kObjectDepth = 64;

struct EvidenceOptions {
  std::string pod;
  std::string claim;
  std::string namespace_name = "default";
  kube::LoadOptions kube;
};

// "NS/NAME" or "NAME" (in `fallback`).
std::pair<std::string, std::string> split_name(const std::string& text, const std::string& fallback) {
  const std::size_t slash = text.find('/');
  return slash == std::string::npos ? std::pair{fallback, text}
                                    : std::pair{text.substr(0, slash), text.substr(slash + 1)};
}

Result<Json> get_object(kube::ApiClient& client, const std::string& path) {
  Result<kube::ApiResponse> response = client.get(path, {});
  if (!response) {
    return response.error();
  }
  if (!response->ok()) {
    return Error{ErrorCode::kIo,
                 "GET " + path + ": " +
                     (response->error ? response->error->to_string() : std::to_string(response->status)),
                 {}};
  }
  return read_json(response->body, kObjectDepth);
}

// The node's inventory as the DaemonSet reported it (deploy/inventory: a ClusterReport named after
// the Node's uid); an error saying why there is none.
Result<hardware::SourcedNodeView> node_inventory(kube::ApiClient& client, const std::string& node) {
  const auto none = [](const std::string& why) { return Error{ErrorCode::kIo, why, {}}; };
  Result<Json> node_object = get_object(client, "/api/v1/nodes/" + node);
  const Json* uid = node_object ? find_at(*node_object, "/metadata/uid") : nullptr;
  if (uid == nullptr || !uid->is_string()) {
    return none(node_object ? "the Node has no uid" : node_object.error().message);
  }
  const std::string name = uid->get<std::string>();
  Result<Json> report =
      get_object(client, "/apis/openreports.io/v1alpha1/clusterreports/" + name);
  if (!report) {
    return none(report.error().message + " (is deploy/inventory running there?)");
  }
  if (!hardware::is_node_inventory_report(*report)) {
    return none("ClusterReport " + name + " is not topoguard's node inventory");
  }
  Result<hardware::NodeSysfsView> view = hardware::node_view_from_report(*report);
  if (!view) {
    return none("ClusterReport " + name + ": " + view.error().message);
  }
  return hardware::SourcedNodeView{"ClusterReport " + name, std::move(*view)};
}

int fail(const std::string& message) {
  std::cerr << "topoguard evidence: " << printable(message) << '\n';
  return kExitUsage;
}

int run_evidence_command(const EvidenceOptions& options) {
  if (options.pod.empty() == options.claim.empty()) {
    return fail("give a POD or --claim NS/NAME (one of them)");
  }
  const std::shared_ptr<kube::ApiClient> client = make_api_client("evidence", options.kube);
  if (!client) {
    return kExitUsage;
  }
  Json pod_summary;
  std::vector<std::pair<std::string, std::string>> claims;  // namespace, name
  if (!options.pod.empty()) {
    const auto [pod_namespace, pod_name] = split_name(options.pod, options.namespace_name);
    Result<Json> pod = get_object(*client, "/api/v1/namespaces/" + pod_namespace + "/pods/" + pod_name);
    if (!pod) {
      return fail(pod.error().to_string());
    }
    // Claims made from templates are named in the status, the others in the spec.
    for (const char* pointer : {"/status/resourceClaimStatuses", "/spec/resourceClaims"}) {
      const Json* listed = find_at(*pod, pointer);
      for (const Json& entry : listed != nullptr && listed->is_array() ? *listed : Json::array()) {
        const std::string name = entry.is_object() ? string_member(entry, "resourceClaimName") : "";
        if (!name.empty()) {
          claims.emplace_back(pod_namespace, name);
        }
      }
    }
    const Json* node = find_at(*pod, "/spec/nodeName");
    pod_summary = Json{{"namespace", pod_namespace},
                       {"name", pod_name},
                       {"node", node != nullptr && node->is_string() ? *node : Json()}};
    if (claims.empty()) {
      return fail("pod " + pod_namespace + "/" + pod_name + " has no ResourceClaim (yet)");
    }
  } else {
    claims.push_back(split_name(options.claim, options.namespace_name));
  }
  const std::optional<std::vector<k8s::ParsedSlicePtr>> slices =
      list_cluster_slices("evidence", *client);
  if (!slices) {
    return kExitUsage;
  }
  std::optional<hardware::SourcedNodeView> inventory;
  std::string without_inventory;  // why the node's inventory is missing, said after the verdicts
  if (const Json* node = find_at(pod_summary, "/node"); node != nullptr && node->is_string()) {
    Result<hardware::SourcedNodeView> read = node_inventory(*client, node->get<std::string>());
    if (read) {
      inventory = std::move(*read);
    } else {
      without_inventory = "no inventory of node " + node->get<std::string>() + ": " +
                          read.error().message;
    }
  }
  Json documents = Json::array();
  for (const auto& [claim_namespace, claim_name] : claims) {
    Result<Json> claim = get_object(*client, "/apis/resource.k8s.io/v1/namespaces/" +
                                                  claim_namespace + "/resourceclaims/" + claim_name);
    if (!claim) {
      return fail(claim.error().to_string());
    }
    Result<hardware::Evidence> evidence = hardware::build_evidence(*claim, *slices);
    if (!evidence) {
      return fail(claim_namespace + "/" + claim_name + ": " + evidence.error().message);
    }
    if (inventory) {
      hardware::add_node_inventory(*evidence, inventory->view, inventory->source);
    }
    std::cerr << claim_namespace << '/' << printable(claim_name) << ": "
              << printable(evidence->verdict_line) << '\n';
    documents.push_back(std::move(evidence->document));
  }
  if (!without_inventory.empty()) {
    std::cerr << "topoguard evidence: " << printable(without_inventory) << '\n';
  }
  std::cout << to_json_text(Json{{"kind", "topoguard.evidence/v1"},
                                 {"pod", pod_summary},
                                 {"claims", documents}},
                            2)
            << '\n';
  return kExitOk;
}

}  // namespace

void add_evidence_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<EvidenceOptions>();
  CLI::App* command = app.add_subcommand(
      "evidence",
      "What a Pod's claims (or one claim) were allocated in a live cluster: the devices with their "
      "published attributes and a verdict (aligned / same NUMA other root / across NUMA / "
      "unknown), as JSON to keep with benchmark results");
  command->add_option("pod", options->pod, "The Pod, NAME or NS/NAME")->type_name("POD");
  command->add_option("--claim", options->claim, "One ResourceClaim instead, NAME or NS/NAME")
      ->type_name("NS/NAME");
  command->add_option("--namespace,-n", options->namespace_name,
                      "Namespace of a POD or claim given without one")
      ->capture_default_str()
      ->type_name("NAME");
  add_kube_options(*command, options->kube, "");
  command->callback([options, &exit_code] { exit_code = run_evidence_command(*options); });
}

}  // namespace topoguard::cli
