// Standard base64 (RFC 4648, padded), as Go's encoding/json renders []byte and Kubernetes writes
// Secret data, caBundles and a kubeconfig's *-data fields. The one coder every module uses.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace topoguard {

[[nodiscard]] std::string base64_encode(std::string_view bytes);
// ASCII whitespace (line breaks in YAML) is ignored; nullopt when the rest is not padded base64
// (a character outside the alphabet, a length not a multiple of 4, '=' other than at the end).
[[nodiscard]] std::optional<std::string> base64_decode(std::string_view text);

}  // namespace topoguard
