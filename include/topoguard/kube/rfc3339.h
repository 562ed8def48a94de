// Times as the Kubernetes API writes them: metav1.Time ("2006-01-02T15:04:05Z") and
// metav1.MicroTime ("2006-01-02T15:04:05.000000Z", Leases and Events).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace topoguard::kube {

// "2006-01-02T15:04:05Z", with optional fractional seconds and a numeric offset instead of Z.
[[nodiscard]] std::optional<std::chrono::system_clock::time_point> parse_rfc3339(
    std::string_view text);
// UTC, whole seconds (metav1.Time).
[[nodiscard]] std::string format_rfc3339(std::chrono::system_clock::time_point time);
// UTC, microseconds (metav1.MicroTime).
[[nodiscard]] std::string format_rfc3339_micro(std::chrono::system_clock::time_point time);

}  // namespace topoguard::kube
