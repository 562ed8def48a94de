// Standard base64 (RFC 4648, padded) over OpenSSL's EVP block coder, for the kubeconfig's
// *-data fields, basic authentication, KUBERNETES_EXEC_INFO, Secret data and caBundles.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace topoguard::kube {

[[nodiscard]] std::string base64_encode(std::string_view bytes);
// Whitespace (line breaks in YAML) is ignored; nullopt when the text is not base64.
[[nodiscard]] std::optional<std::string> base64_decode(std::string_view text);

}  // namespace topoguard::kube
