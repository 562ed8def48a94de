// The body of a watch: JSON events one after another ({"type": ..., "object": {...}}, a newline
// after each), arriving in chunks whose boundaries mean nothing: one event may span many chunks
// and one chunk may hold many events. JsonValueSplitter finds where each top-level value ends with
// a small state machine (strings, escapes, nesting), in one pass over each byte, holding only the
// unfinished value, and bounded by a size limit; WatchStreamParser decodes each value into a
// WatchEvent (simdjson, then a Json tree built in n log n for objects of many keys). Not
// thread-safe: one per stream.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "topoguard/common/json.h"
#include "topoguard/common/json_reader.h"
#include "topoguard/common/result.h"

namespace topoguard::kube {

class JsonValueSplitter {
 public:
  static constexpr int kMaxDepth = 512;

  explicit JsonValueSplitter(std::size_t max_value_bytes) : max_value_bytes_(max_value_bytes) {}

  // Called with the text of each complete value (valid during the call only); false stops the
  // feed early (the rest of the bytes are not scanned).
  using ValueSink = std::function<bool(std::string_view value)>;

  // Scans `bytes`. Errors: a top-level value that is not an object or array (invalid_json), one
  // longer than the limit (too_large) or nested deeper than kMaxDepth (too_deep). After an
  // error the stream is unusable: every later feed returns the same error.
  Status feed(std::string_view bytes, const ValueSink& on_value);
  // No part of a value held: the stream may end here cleanly.
  [[nodiscard]] bool at_boundary() const { return !in_value_; }
  // Bytes of the unfinished value held.
  [[nodiscard]] std::size_t held_bytes() const { return partial_.size(); }

 private:
  Status fail(ErrorCode code, std::string message);

  const std::size_t max_value_bytes_;
  std::string partial_;
  bool in_value_ = false;
  bool in_string_ = false;
  bool escape_ = false;
  int depth_ = 0;
  std::optional<Error> failed_;
};


enum class WatchEventType { kAdded, kModified, kDeleted, kBookmark, kError };

// "ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR".
[[nodiscard]] std::string_view watch_event_type_name(WatchEventType type);

struct WatchEvent {
  WatchEventType type = WatchEventType::kAdded;
  Json object;  // the object; for kError a Status; for kBookmark only kind, apiVersion, metadata
};

// One event's JSON text: `type` one of the five names, `object` an object.
[[nodiscard]] Result<WatchEvent> parse_watch_event(std::string_view text);

class WatchStreamParser {
 public:
  // The API server's limit on a request body is 3 MiB and etcd's on a value 1.5 MiB; an event
  // carries one object.
  static constexpr std::size_t kDefaultMaxEventBytes = 16 * 1024 * 1024;

  explicit WatchStreamParser(std::size_t max_event_bytes = kDefaultMaxEventBytes);
  ~WatchStreamParser();
  WatchStreamParser(const WatchStreamParser&) = delete;
  WatchStreamParser& operator=(const WatchStreamParser&) = delete;

  // Called with each decoded event; false stops the feed (the rest of the bytes are dropped).
  using EventSink = std::function<bool(WatchEvent&& event)>;

  // Feeds the next bytes of the body. An undecodable event is an error, and so is anything after
  // it.
  Status feed(std::string_view bytes, const EventSink& on_event);
  [[nodiscard]] bool at_boundary() const { return splitter_.at_boundary(); }
  // Events decoded so far.
  [[nodiscard]] std::size_t events() const { return events_; }

 private:
  JsonValueSplitter splitter_;
  std::unique_ptr<JsonReader> reader_;
  std::size_t events_ = 0;
  std::optional<Error> failed_;
};

}  // namespace topoguard::kube
