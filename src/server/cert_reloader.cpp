#include "topoguard/server/cert_reloader.h"

namespace topoguard::server {

Result<std::shared_ptr<CertReloader>> CertReloader::create(std::string cert_path,
                                                           std::string key_path) {
  Loader load_pair = [cert_path, key_path]() { return http::load_key_pair(cert_path, key_path); };
  return load<CertReloader>({std::move(cert_path), std::move(key_path)}, std::move(load_pair));
}

std::shared_ptr<CertReloader> CertReloader::in_memory() {
  Loader none = []() -> Result<Ptr> {
    return Error{ErrorCode::kInternal, "an in-memory certificate is not loaded from files", {}};
  };
  return std::shared_ptr<CertReloader>(new CertReloader({}, std::move(none), nullptr, ""));
}

}  // namespace topoguard::server
