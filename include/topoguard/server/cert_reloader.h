// The serving key pair, re-read when its files change (Secret volume update, cert-manager
// renewal) or set in memory (self-managed TLS), and handed to every new TLS handshake (see
// http/tls_context.h). A pair that does not
// parse, or whose key does not match its certificate, is refused and the previous pair stays in
// use. A Reloadable: current() is safe from any thread; poll() is called from one watcher thread.
#pragma once

#include <memory>
#include <string>

#include "topoguard/common/result.h"
#include "topoguard/http/key_pair.h"
#include "topoguard/server/reloadable.h"

namespace topoguard::server {

class CertReloader : public Reloadable<http::KeyPair> {
 public:
  // Loads the initial pair; an error when it cannot be used.
  [[nodiscard]] static Result<std::shared_ptr<CertReloader>> create(std::string cert_path,
                                                                    std::string key_path);
  // No files and no pair yet: handshakes fail until set() hands one over.
  [[nodiscard]] static std::shared_ptr<CertReloader> in_memory();

 private:
  friend class Reloadable<http::KeyPair>;
  using Reloadable::Reloadable;
};

}  // namespace topoguard::server
