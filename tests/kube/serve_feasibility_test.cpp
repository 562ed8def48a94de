// Adversarial (issue 38, item 1): feasibility amplification against `topoguard serve
// --kubeconfig --threads=4`, failing closed, as deployed. The fake API server holds a generated
// cluster of 2,000 nodes whose GPUs each publish a unique uuid, as NVIDIA's driver does. Hostile
// clients (several usernames) send templates whose GPU selector reads that uuid, with a new
// string each time (which once made every node its own group); a legitimate client sends
// aligned templates alongside. Behaviour is asserted, not timing (bench/feasibility-load.sh
// measures latency): the legitimate client gets every answer, and its feasibility is checked;
// every hostile review is answered with its verdict, its feasibility checked or, where the lane
// gave no share, unknown, counted in /metrics, never a warning or a denial.
#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "dra_objects.h"
#include "ephemeral_certs.h"
#include "eventually.h"
#include "fake_apiserver.h"
#include "serve_process.h"
#include "test_paths.h"
#include "topoguard/common/json.h"
#include "webhook_test_support.h"

namespace topoguard::testing {
namespace {

using std::chrono::milliseconds;

constexpr int kGpusPerNode = 8;
constexpr int kRoots = 4;  // two GPUs and one NIC under each

// The scenario's size: the test's defaults, or what bench/feasibility-load.sh asks for through
// the environment (FEASIBILITY_LOAD_NODES, _HOSTILE_CLIENTS, _LEGITIMATE_REVIEWS; and
// FEASIBILITY_LOAD_BINARY, another topoguard to measure, such as a build of an older commit).
int from_environment(const char* name, int fallback) {
  const char* text = std::getenv(name);
  return text != nullptr && *text != '\0' ? std::atoi(text) : fallback;
}
const int kNodes = from_environment("FEASIBILITY_LOAD_NODES", 2'000);
const int kHostileClients = from_environment("FEASIBILITY_LOAD_HOSTILE_CLIENTS", 6);
constexpr int kHostileReviewsEach = 12;
const int kLegitimateReviews = from_environment("FEASIBILITY_LOAD_LEGITIMATE_REVIEWS", 20);

std::string serve_binary() {
  const char* binary = std::getenv("FEASIBILITY_LOAD_BINARY");
  return binary != nullptr && *binary != '\0' ? std::string(binary) : test::topoguard_binary();
}

std::string node_name(int node) { return "node-" + std::to_string(10'000 + node); }

std::string root_of(int index) { return "pci0000:" + std::to_string(10 + index); }

// One node's two slices: 8 GPUs with unique uuids, 4 NICs, each GPU pair and NIC on one root.
std::vector<Json> node_slices(int node) {
  Json gpus = Json::array();
  for (int i = 0; i < kGpusPerNode; ++i) {
    gpus.push_back(
        {{"name", "gpu-" + std::to_string(i)},
         {"attributes",
          {{"uuid", {{"string", "GPU-" + std::to_string(node) + "-" + std::to_string(i)}}},
           {"productName", {{"string", "NVIDIA H100 80GB HBM3"}}},
           {"resource.kubernetes.io/pcieRoot", {{"string", root_of(i / 2)}}}}}});
  }
  Json nics = Json::array();
  for (int i = 0; i < kRoots; ++i) {
    nics.push_back(
        {{"name", "nic-" + std::to_string(i)},
         {"attributes", {{"resource.kubernetes.io/pcieRoot", {{"string", root_of(i)}}}}}});
  }
  std::vector<Json> slices;
  for (auto& [driver, devices] : {std::pair{std::string("gpu.nvidia.com"), std::move(gpus)},
                                  std::pair{std::string("dra.net"), std::move(nics)}}) {
    slices.push_back({{"apiVersion", "resource.k8s.io/v1"},
                      {"kind", "ResourceSlice"},
                      {"metadata", {{"name", node_name(node) + "-" + driver}}},
                      {"spec",
                       {{"driver", driver},
                        {"nodeName", node_name(node)},
                        {"pool", {{"name", node_name(node)}, {"generation", 1},
                                  {"resourceSliceCount", 1}}},
                        {"devices", devices}}}});
  }
  return slices;
}

// An aligned GPU + NIC template; `gpu_selector` (CEL) narrows the GPU request when not empty,
// `nics` NICs under the GPU's root (more than one is unsatisfiable on this hardware).
Json aligned_template(const std::string& name, const std::string& gpu_selector, int nics) {
  Json spec = dra_claim_spec(true);
  spec["devices"]["requests"][1]["exactly"]["count"] = nics;
  if (!gpu_selector.empty()) {
    spec["devices"]["requests"][0]["exactly"]["selectors"] =
        Json::array({{{"cel", {{"expression", gpu_selector}}}}});
  }
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "ResourceClaimTemplate"},
          {"metadata", {{"name", name}, {"namespace", "ml"}}},
          {"spec", {{"spec", std::move(spec)}}}};
}

// The AdmissionReview the API server sends for a CREATE of `object` by `username`.
std::string review_by(const std::string& username, const Json& object, const std::string& uid) {
  Json review = Json::parse(review_body(object, uid));
  review["request"]["kind"]["group"] = "resource.k8s.io";
  review["request"]["userInfo"] = {{"username", username},
                                   {"groups", Json::array({"system:authenticated"})}};
  return review.dump();
}

struct Answer {
  int status = -1;
  Json response;  // the AdmissionReview's response when status is 200
  double seconds = 0;
};

// "n=.. p50=.. p99=.. max=.." of the answers' latencies, in milliseconds.
std::string latency_summary(std::vector<double> seconds) {
  if (seconds.empty()) {
    return "n=0";
  }
  std::sort(seconds.begin(), seconds.end());
  const auto at = [&](double q) {
    const auto index = static_cast<std::size_t>(q * static_cast<double>(seconds.size()));
    return 1000.0 * seconds[std::min(seconds.size() - 1, index)];
  };
  char text[160];
  std::snprintf(text, sizeof text, "n=%zu p50=%.1fms p99=%.1fms max=%.1fms", seconds.size(),
                at(0.5), at(0.99), 1000.0 * seconds.back());
  return text;
}

class ServeFeasibilityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = make_temp_dir("topoguard-serve-feasibility");
    pki_ = make_test_pki();
    write_file(dir_ + "/tls.crt", pki_.server.cert);
    write_file(dir_ + "/tls.key", pki_.server.key);
    write_file(dir_ + "/ca.pem", pki_.ca.cert);
    write_file(dir_ + "/kubeconfig",
               "apiVersion: v1\nkind: Config\ncurrent-context: fake\n"
               "clusters:\n- name: fake\n  cluster:\n    server: " + fake_.server() +
                   "\n    certificate-authority: " + fake_.ca_file() +
                   "\ncontexts:\n- name: fake\n  context: {cluster: fake, user: u}\n"
                   "users:\n- name: u\n  user:\n    token: test-token\n");
  }

  void generate_cluster() {
    Json events = Json::array();
    for (const std::string class_name : {"gpu.nvidia.com", "dra.net"}) {
      events.push_back({{"type", "ADDED"},
                        {"object", dra_device_class(class_name, "device.driver == \"" +
                                                                    class_name + "\"")}});
    }
    for (int node = 0; node < kNodes; ++node) {
      for (Json& slice : node_slices(node)) {
        events.push_back({{"type", "ADDED"}, {"object", std::move(slice)}});
      }
      if (node % 500 == 499 || node + 1 == kNodes) {  // a few MB a request
        fake_.control("objects", {{"events", std::move(events)}});
        events = Json::array();
      }
    }
  }

  Answer review(httplib::SSLClient& client, const std::string& body) {
    const auto start = std::chrono::steady_clock::now();
    auto answer = client.Post("/mutate?timeout=10s", body, "application/json");
    Answer out;
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (answer) {
      out.status = answer->status;
      if (answer->status == 200) {
        out.response = Json::parse(answer->body)["response"];
      }
    }
    return out;
  }

  std::unique_ptr<httplib::SSLClient> client() {
    auto made = std::make_unique<httplib::SSLClient>("127.0.0.1", server_.port());
    made->set_ca_cert_path((dir_ + "/ca.pem").c_str());
    made->enable_server_certificate_verification(true);
    made->set_read_timeout(std::chrono::seconds(30));
    // As the API server's Go client does: without it a request's header and body records wait
    // on the server's delayed acknowledgement (tens of milliseconds).
    made->set_tcp_nodelay(true);
    return made;
  }

  std::string metrics() {
    httplib::Client metrics_client("127.0.0.1", server_.metrics_port());
    auto answer = metrics_client.Get("/metrics");
    return answer ? answer->body : "";
  }

  FakeApiServer fake_;
  std::string dir_;
  TestPki pki_;
  ServeProcess server_;
};

std::string warnings_of(const Json& response) {
  std::string text;
  for (const Json& warning : response.value("warnings", Json::array())) {
    text += warning.get<std::string>() + "\n";
  }
  return text;
}

bool feasibility_unknown(const Json& response) {
  return response.value("auditAnnotations", Json::object())
             .value("feasibility", "")
             .rfind("unknown", 0) == 0;
}

TEST_F(ServeFeasibilityTest, AdversarialUuidSelectorsLeaveTheLegitimateClientAnswered) {
  generate_cluster();
  ASSERT_TRUE(server_.start(serve_binary(),
                            {"--tls-cert", dir_ + "/tls.crt", "--tls-key", dir_ + "/tls.key",
                             "--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0",
                             "--kubeconfig", dir_ + "/kubeconfig", "--threads", "4",
                             "--failure-mode", "closed"}))
      << server_.log();
  ASSERT_TRUE(eventually(
      [&] {
        httplib::Client probe("127.0.0.1", server_.metrics_port());
        auto answer = probe.Get("/readyz");
        return answer && answer->status == 200;
      },
      milliseconds(60'000)))
      << server_.log();

  std::atomic<bool> legitimate_done{false};
  std::vector<std::vector<Answer>> hostile(kHostileClients);
  std::vector<std::thread> threads;
  for (int c = 0; c < kHostileClients; ++c) {
    threads.emplace_back([&, c] {
      auto connection = client();
      // Until the legitimate client is done, and at least kHostileReviewsEach reviews.
      for (int i = 0; i < kHostileReviewsEach || !legitimate_done; ++i) {
        const std::string selector = "device.attributes[\"gpu.nvidia.com\"].uuid != \"GPU-x" +
                                     std::to_string(c) + "-" + std::to_string(i) + "\"";
        hostile[static_cast<std::size_t>(c)].push_back(review(
            *connection, review_by("system:serviceaccount:team-" + std::to_string(c % 3) +
                                       ":builder-" + std::to_string(c),
                                   aligned_template("hostile", selector, 1),
                                   "h-" + std::to_string(c) + "-" + std::to_string(i))));
      }
    });
  }
  std::vector<Answer> legitimate;
  {
    auto connection = client();
    for (int i = 0; i < kLegitimateReviews; ++i) {
      // Every other review asks for two NICs under the GPU's root, which no node has.
      legitimate.push_back(review(
          *connection, review_by("alice", aligned_template("pair", "", 1 + i % 2),
                                 "l-" + std::to_string(i))));
    }
  }
  legitimate_done = true;
  for (std::thread& thread : threads) {
    thread.join();
  }
  // The figures, for bench/feasibility-load.sh; nothing below depends on them.
  std::vector<double> legitimate_seconds;
  std::size_t legitimate_failures = 0;
  for (const Answer& answer : legitimate) {
    legitimate_seconds.push_back(answer.seconds);
    legitimate_failures +=
        answer.status == 200 && answer.response.value("allowed", false) ? 0 : 1;
  }
  std::vector<double> hostile_seconds;
  for (const std::vector<Answer>& answers : hostile) {
    for (const Answer& answer : answers) {
      hostile_seconds.push_back(answer.seconds);
    }
  }
  std::printf("feasibility-load: %d nodes, %d hostile clients\n", kNodes, kHostileClients);
  std::printf("feasibility-load: legitimate %s failures=%zu\n",
              latency_summary(legitimate_seconds).c_str(), legitimate_failures);
  std::printf("feasibility-load: hostile %s\n", latency_summary(hostile_seconds).c_str());
  std::fflush(stdout);

  // The legitimate client: every review answered and allowed, the unsatisfiable ones warned of
  // whenever its feasibility was checked, which it was.
  std::size_t legitimate_checked = 0;
  for (std::size_t i = 0; i < legitimate.size(); ++i) {
    const Answer& answer = legitimate[i];
    ASSERT_EQ(answer.status, 200) << "legitimate review " << i;
    EXPECT_TRUE(answer.response.value("allowed", false)) << answer.response.dump();
    const bool warned = warnings_of(answer.response).find("unsatisfiable-alignment") !=
                        std::string::npos;
    if (feasibility_unknown(answer.response)) {
      EXPECT_FALSE(warned) << answer.response.dump();
      continue;
    }
    ++legitimate_checked;
    EXPECT_EQ(warned, i % 2 == 1) << answer.response.dump();
  }
  EXPECT_GT(legitimate_checked, 0u);

  // Every hostile review answered with its verdict (aligned: allowed), never warned of: its
  // selector only compares the uuid with a literal no GPU has, so the nodes stay grouped by
  // shape and feasibility is checked within the budget (satisfiable), or, where the requester
  // had no share left, unknown.
  std::size_t hostile_unknown = 0;
  std::size_t hostile_answers = 0;
  for (const std::vector<Answer>& answers : hostile) {
    for (const Answer& answer : answers) {
      ++hostile_answers;
      ASSERT_EQ(answer.status, 200);
      EXPECT_TRUE(answer.response.value("allowed", false)) << answer.response.dump();
      EXPECT_EQ(warnings_of(answer.response).find("unsatisfiable-alignment"), std::string::npos);
      EXPECT_EQ(answer.response.value("auditAnnotations", Json::object()).value("decision", ""),
                "allow");
      hostile_unknown += feasibility_unknown(answer.response) ? 1 : 0;
    }
  }
  EXPECT_GE(hostile_answers, static_cast<std::size_t>(kHostileClients * kHostileReviewsEach));
  EXPECT_LT(hostile_unknown, hostile_answers);

  const std::string text = metrics();
  const auto counted = [&](const std::string& reason) -> long long {
    const std::string line = "topoguard_feasibility_unknown_total{reason=\"" + reason + "\"} ";
    const std::size_t at = text.find(line);
    return at == std::string::npos ? -1 : std::stoll(text.substr(at + line.size()));
  };
  EXPECT_GE(counted("budget"), 0) << text;
  EXPECT_GE(counted("no_share"), 0) << text;
  EXPECT_EQ(static_cast<std::size_t>(counted("budget") + counted("no_share")),
            hostile_unknown + (legitimate.size() - legitimate_checked))
      << text;
}

}  // namespace
}  // namespace topoguard::testing
