// Durations written as Go and Kubernetes write them ("30s", "5m", "1h30m", "8760h", "250ms",
// "0"): a sequence of decimal numbers, each with a unit (ns, us, µs, ms, s, m, h). Negative
// durations are refused: every flag that takes one means "how long".
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "topoguard/common/result.h"

namespace topoguard {

[[nodiscard]] Result<std::chrono::nanoseconds> parse_duration(std::string_view text);
// The shortest form parse_duration reads back: "1h30m0s" style, as Go's Duration.String.
[[nodiscard]] std::string format_duration(std::chrono::nanoseconds duration);

}  // namespace topoguard
