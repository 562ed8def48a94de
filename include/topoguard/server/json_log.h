// Structured logs: one JSON object per line on stderr (ts, level, msg + fields), through one
// spdlog logger, so platform teams can grep stable keys. Thread-safe.
#pragma once

#include <optional>
#include <string_view>

#include "topoguard/common/json.h"

namespace topoguard::server {

enum class LogLevel { kDebug, kInfo, kWarn, kError, kOff };

[[nodiscard]] std::optional<LogLevel> parse_log_level(std::string_view name);

// Sets the minimum level (default info). Safe to call more than once.
void set_log_level(LogLevel level);

// Writes {"ts":..., "level":..., "msg": message, <fields...>}. `fields` must be an object.
void log_event(LogLevel level, std::string_view message, const Json& fields = Json::object());

}  // namespace topoguard::server
