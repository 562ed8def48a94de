// tests/kube/fake_apiserver.py as a child process of a test: started on 127.0.0.1 with a fresh
// certificate, driven through its control endpoints (cpp-httplib, independent of the client
// under test), killed when the test ends.
#pragma once

#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "temp_dir.h"
#include "topoguard/common/json.h"
#include "topoguard/kube/client_config.h"
#include "test_paths.h"

namespace topoguard::testing {

class FakeApiServer {
 public:
  explicit FakeApiServer(std::vector<std::string> arguments = {},
                         std::vector<std::string> tokens = {"test-token"}) {
    std::vector<std::string> words = {test::test_python(),
                                      test::source_dir() + "/tests/kube/fake_apiserver.py",
                                      "--tls-dir", dir_.path() + "/tls"};
    for (const std::string& token : tokens) {
      words.insert(words.end(), {"--token", token});
    }
    words.insert(words.end(), arguments.begin(), arguments.end());
    std::vector<char*> argv;
    for (std::string& word : words) {
      argv.push_back(word.data());
    }
    argv.push_back(nullptr);
    int fds[2];
    if (::pipe(fds) != 0) {
      ADD_FAILURE() << "pipe";
      return;
    }
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(fds[1], STDOUT_FILENO);
      ::close(fds[0]);
      ::close(fds[1]);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    ::close(fds[1]);
    FILE* out = ::fdopen(fds[0], "r");
    char line[4096];
    if (std::fgets(line, sizeof(line), out) == nullptr) {
      ADD_FAILURE() << "the fake API server did not start";
      std::fclose(out);
      return;
    }
    std::fclose(out);
    info_ = Json::parse(line);
    server_ = info_["server"].get<std::string>();
    port_ = info_["port"].get<int>();
    ca_file_ = info_["ca"].get<std::string>();
  }
  ~FakeApiServer() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  FakeApiServer(const FakeApiServer&) = delete;
  FakeApiServer& operator=(const FakeApiServer&) = delete;

  [[nodiscard]] const std::string& server() const { return server_; }
  [[nodiscard]] const std::string& ca_file() const { return ca_file_; }
  [[nodiscard]] std::string ca_pem() const { return read(ca_file_); }
  [[nodiscard]] std::string client_cert_pem() const {
    return read(info_["clientCert"].get<std::string>());
  }
  [[nodiscard]] std::string client_key_pem() const {
    return read(info_["clientKey"].get<std::string>());
  }
  [[nodiscard]] const TempDir& dir() const { return dir_; }

  // A client configuration for this server with a bearer token.
  [[nodiscard]] kube::ClientConfig config(const std::string& token = "test-token") const {
    kube::ClientConfig config;
    EXPECT_TRUE(kube::parse_server_url(server_, config).has_value());
    config.ca_pem = ca_pem();
    config.token = token;
    config.context = "fake";
    return config;
  }

  // POST /_fake/ACTION; the answer's JSON.
  Json control(const std::string& action, const Json& body = Json::object()) {
    auto client = make_client();
    auto answer = client->Post(("/_fake/" + action).c_str(), body.dump(), "application/json");
    if (!answer || answer->status != 200) {
      ADD_FAILURE() << "control " << action
                    << " failed: " << (answer ? answer->body : httplib::to_string(answer.error()));
      return Json();
    }
    return Json::parse(answer->body);
  }
  // Applies one event to the fake's state: "ADDED", "MODIFIED" or "DELETED".
  Json apply(const std::string& type, const Json& object) {
    return control("objects", {{"type", type}, {"object", object}});
  }
  // Serves one more resource, as installing its CRD would.
  void add_resource(const std::string& group, const std::string& version,
                    const std::string& resource, const std::string& kind, bool namespaced) {
    control("resources", {{"add",
                           {{{"group", group},
                             {"version", version},
                             {"resource", resource},
                             {"kind", kind},
                             {"namespaced", namespaced}}}}});
  }
  // The requests served so far.
  Json requests() { return get("/_fake/requests"); }
  // API requests served so far with `method` (the fake's own /_fake/ calls not counted).
  int api_requests(const std::string& method) {
    int found = 0;
    for (const Json& request : requests()) {
      const std::string path = request["path"];
      found += request["method"] == method && path.rfind("/_fake/", 0) != 0 ? 1 : 0;
    }
    return found;
  }
  Json state() { return get("/_fake/state"); }

 private:
  [[nodiscard]] std::unique_ptr<httplib::SSLClient> make_client() const {
    auto client = std::make_unique<httplib::SSLClient>("127.0.0.1", port_);
    client->set_ca_cert_path(ca_file_.c_str());
    client->enable_server_certificate_verification(true);
    client->set_read_timeout(30, 0);
    return client;
  }
  Json get(const std::string& path) {
    auto client = make_client();
    auto answer = client->Get(path.c_str());
    if (!answer || answer->status != 200) {
      ADD_FAILURE() << "GET " << path << " failed";
      return Json();
    }
    return Json::parse(answer->body);
  }
  static std::string read(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  }

  TempDir dir_;
  pid_t pid_ = -1;
  Json info_;
  std::string server_;
  int port_ = 0;
  std::string ca_file_;
};

}  // namespace topoguard::testing
