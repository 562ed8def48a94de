// Structured logs: one JSON object per line on stderr (ts, level, msg + fields), through one
// spdlog logger, so platform teams can grep stable keys. Thread-safe.
// Lines are buffered: a warning or error, a lifecycle event (log_event), a full buffer, a second
// passing or flush_logs() writes them out, so the per-request info line costs no write(2) of its
// own. A crash loses at most the last second of info lines.
#pragma once

#include <optional>
#include <string_view>

#include "topoguard/common/json.h"

namespace topoguard::server {

enum class LogLevel { kDebug, kInfo, kWarn, kError, kOff };

[[nodiscard]] std::optional<LogLevel> parse_log_level(std::string_view name);

// Sets the minimum level (default info). Safe to call more than once.
void set_log_level(LogLevel level);

[[nodiscard]] bool log_enabled(LogLevel level);

// Writes {"ts":..., "level":..., "msg": message, <fields...>} and flushes: for rare events
// (start, reload, shutdown). `fields` must be an object.
void log_event(LogLevel level, std::string_view message, const Json& fields = Json::object());

// The per-request form: `fields` is already rendered JSON members without the braces
// ("\"uid\":\"...\",\"status\":200"), possibly empty. Buffered below warn.
void log_fields(LogLevel level, std::string_view message, std::string_view fields);

// Writes out buffered lines (before exiting).
void flush_logs();

}  // namespace topoguard::server
