#include "topoguard/server/json_log.h"

#include <memory>

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace topoguard::server {
namespace {

spdlog::level::level_enum to_spdlog(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return spdlog::level::debug;
    case LogLevel::kInfo:
      return spdlog::level::info;
    case LogLevel::kWarn:
      return spdlog::level::warn;
    case LogLevel::kError:
      return spdlog::level::err;
    case LogLevel::kOff:
      return spdlog::level::off;
  }
  return spdlog::level::info;
}

spdlog::logger& logger() {
  // Built on first use; a function-local static is initialised once, thread-safely.
  static const std::shared_ptr<spdlog::logger> instance = [] {
    auto sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
    auto created = std::make_shared<spdlog::logger>("topoguard", std::move(sink));
    // The message is the rest of a JSON object; the timestamp is UTC with microseconds.
    created->set_formatter(std::make_unique<spdlog::pattern_formatter>(
        R"({"ts":"%Y-%m-%dT%H:%M:%S.%fZ","level":"%l",%v})", spdlog::pattern_time_type::utc));
    created->set_level(spdlog::level::info);
    created->flush_on(spdlog::level::trace);
    return created;
  }();
  return *instance;
}

}  // namespace

std::optional<LogLevel> parse_log_level(std::string_view name) {
  if (name == "debug") {
    return LogLevel::kDebug;
  }
  if (name == "info") {
    return LogLevel::kInfo;
  }
  if (name == "warn" || name == "warning") {
    return LogLevel::kWarn;
  }
  if (name == "error") {
    return LogLevel::kError;
  }
  if (name == "off") {
    return LogLevel::kOff;
  }
  return std::nullopt;
}

void set_log_level(LogLevel level) { logger().set_level(to_spdlog(level)); }

void log_event(LogLevel level, std::string_view message, const Json& fields) {
  spdlog::logger& target = logger();
  const auto spd_level = to_spdlog(level);
  if (!target.should_log(spd_level)) {
    return;
  }
  Json line = Json::object();
  line["msg"] = message;
  if (fields.is_object()) {
    for (const auto& [key, value] : fields.items()) {
      line[key] = value;
    }
  }
  const std::string text = line.dump(-1, ' ', false, Json::error_handler_t::replace);
  // Strip the outer braces: the pattern supplies them around ts and level.
  target.log(spd_level, "{}", std::string_view(text).substr(1, text.size() - 2));
}

}  // namespace topoguard::server
