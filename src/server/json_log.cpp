#include "topoguard/server/json_log.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include "topoguard/common/json_writer.h"

namespace topoguard::server {
namespace {

// Above this many buffered bytes the sink writes without waiting for the periodic flush.
constexpr std::size_t kFlushBytes = 32 * 1024;

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

// stderr through an in-process buffer and write(2) of whole lines. spdlog's stderr sink writes
// each line with its own write(2) (stderr is unbuffered) and flushed on every line under a mutex
// shared by all workers; at thousands of requests per second that was a syscall per request.
class BufferedStderrSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  BufferedStderrSink() { buffer_.reserve(kFlushBytes * 2); }
  ~BufferedStderrSink() override { write_out(); }
  BufferedStderrSink(const BufferedStderrSink&) = delete;
  BufferedStderrSink& operator=(const BufferedStderrSink&) = delete;

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t formatted;
    formatter_->format(msg, formatted);
    buffer_.append(formatted.data(), formatted.size());
    if (buffer_.size() >= kFlushBytes) {
      write_out();
    }
  }
  void flush_() override { write_out(); }

 private:
  void write_out() {
    std::size_t done = 0;
    while (done < buffer_.size()) {
      const ssize_t n = ::write(STDERR_FILENO, buffer_.data() + done, buffer_.size() - done);
      if (n < 0 && errno == EINTR) {
        continue;
      }
      if (n <= 0) {
        break;  // stderr closed or broken: logs are lost, requests are not
      }
      done += static_cast<std::size_t>(n);
    }
    buffer_.clear();
  }

  std::string buffer_;
};

spdlog::logger& logger() {
  // Built on first use; a function-local static is initialised once, thread-safely.
  static const std::shared_ptr<spdlog::logger> instance = [] {
    auto created =
        std::make_shared<spdlog::logger>("topoguard", std::make_shared<BufferedStderrSink>());
    // The message is the rest of a JSON object; the timestamp is UTC with microseconds.
    created->set_formatter(std::make_unique<spdlog::pattern_formatter>(
        R"({"ts":"%Y-%m-%dT%H:%M:%S.%fZ","level":"%l",%v})", spdlog::pattern_time_type::utc));
    created->set_level(spdlog::level::info);
    created->flush_on(spdlog::level::warn);
    // The registry's periodic flusher writes out info lines at least once a second.
    spdlog::register_logger(created);
    spdlog::flush_every(std::chrono::seconds(1));
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

bool log_enabled(LogLevel level) { return logger().should_log(to_spdlog(level)); }

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
  const std::string text = to_json_text(line);
  // Strip the outer braces: the pattern supplies them around ts and level.
  target.log(spd_level, "{}", std::string_view(text).substr(1, text.size() - 2));
  target.flush();
}

void log_fields(LogLevel level, std::string_view message, std::string_view fields) {
  spdlog::logger& target = logger();
  const auto spd_level = to_spdlog(level);
  if (!target.should_log(spd_level)) {
    return;
  }
  std::string text = "\"msg\":";
  text.reserve(message.size() + fields.size() + 16);
  append_json_string(text, message);
  if (!fields.empty()) {
    text += ',';
    text += fields;
  }
  target.log(spd_level, "{}", text);
}

void flush_logs() { logger().flush(); }

}  // namespace topoguard::server
