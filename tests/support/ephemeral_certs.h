// Certificates made at test time with the OpenSSL API (nothing committed): a CA, a server
// certificate for the webhook's names and a client certificate for mTLS. EC P-256 keys.
#pragma once

#include <string>
#include <vector>

namespace topoguard::testing {

struct PemPair {
  std::string cert;
  std::string key;
};

struct TestPki {
  PemPair ca;
  PemPair server;  // SANs: topoguard.topoguard.svc, topoguard.topoguard.svc.cluster.local,
                   // localhost, 127.0.0.1
  PemPair client;  // clientAuth, CN kube-apiserver
};

[[nodiscard]] PemPair make_ca(const std::string& common_name);
// A leaf signed by `ca`. `sans` entries are "DNS:name" or "IP:addr". `serial` distinguishes
// rotations of the same names. Valid from 1 minute ago for `valid_seconds`.
[[nodiscard]] PemPair make_leaf(const PemPair& ca, const std::string& common_name,
                                const std::vector<std::string>& sans, bool client, long serial,
                                long valid_seconds = 3600);
[[nodiscard]] TestPki make_test_pki();

// Writes `text` to `path` atomically (temporary file + rename), as cert-manager's tools do.
void write_file(const std::string& path, const std::string& text);
// A fresh directory under the system temp dir.
[[nodiscard]] std::string make_temp_dir(const std::string& prefix);

}  // namespace topoguard::testing
