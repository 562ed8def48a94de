#include "topoguard/kube/watch_stream.h"

#include <utility>

#include "topoguard/common/json_reader.h"

namespace topoguard::kube {

Status JsonValueSplitter::fail(ErrorCode code, std::string message) {
  failed_ = Error{code, std::move(message), {}};
  partial_.clear();
  partial_.shrink_to_fit();
  return *failed_;
}

Status JsonValueSplitter::feed(std::string_view bytes, const ValueSink& on_value) {
  if (failed_) {
    return *failed_;
  }
  const char* data = bytes.data();
  const std::size_t size = bytes.size();
  std::size_t i = 0;
  while (i < size) {
    std::size_t start = i;
    if (!in_value_) {
      const char c = data[i];
      if (c == ' ' || c == '\n' || c == '\r' || c == '\t') {
        ++i;
        continue;
      }
      if (c != '{' && c != '[') {
        return fail(ErrorCode::kInvalidJson,
                    std::string("a watch stream holds JSON objects; found '") + c + "'");
      }
      in_value_ = true;
      in_string_ = false;
      escape_ = false;
      depth_ = 0;
    }
    bool complete = false;
    for (; i < size; ++i) {
      const char c = data[i];
      if (in_string_) {
        if (escape_) {
          escape_ = false;
        } else if (c == '\\') {
          escape_ = true;
        } else if (c == '"') {
          in_string_ = false;
        }
        continue;
      }
      if (c == '"') {
        in_string_ = true;
      } else if (c == '{' || c == '[') {
        if (++depth_ > kMaxDepth) {
          return fail(ErrorCode::kTooDeep,
                      "a watch event nests deeper than " + std::to_string(kMaxDepth) + " levels");
        }
      } else if (c == '}' || c == ']') {
        if (--depth_ == 0) {
          complete = true;
          ++i;
          break;
        }
      }
    }
    const std::size_t piece = i - start;
    if (partial_.size() + piece > max_value_bytes_) {
      return fail(ErrorCode::kTooLarge,
                  "a watch event is larger than " + std::to_string(max_value_bytes_) + " bytes");
    }
    if (!complete) {
      partial_.append(data + start, piece);
      break;
    }
    in_value_ = false;
    bool go_on = true;
    if (partial_.empty()) {
      go_on = on_value(std::string_view(data + start, piece));
    } else {
      partial_.append(data + start, piece);
      go_on = on_value(partial_);
      partial_.clear();
      if (partial_.capacity() > 1024 * 1024) {
        partial_.shrink_to_fit();  // one huge event does not keep its buffer
      }
    }
    if (!go_on) {
      break;
    }
  }
  return Ok{};
}

std::string_view watch_event_type_name(WatchEventType type) {
  switch (type) {
    case WatchEventType::kAdded:
      return "ADDED";
    case WatchEventType::kModified:
      return "MODIFIED";
    case WatchEventType::kDeleted:
      return "DELETED";
    case WatchEventType::kBookmark:
      return "BOOKMARK";
    case WatchEventType::kError:
      return "ERROR";
  }
  return "ERROR";
}

namespace {

Result<WatchEvent> decode_watch_event(std::string_view text, JsonReader& reader) {
  Result<Json> decoded = reader.read(text);
  if (!decoded) {
    Error error = decoded.error();
    error.message = "a watch event is " + error.message;
    return error;
  }
  Json& value = *decoded;
  if (!value.is_object()) {
    return Error{ErrorCode::kInvalidJson, "a watch event is not a JSON object", {}};
  }
  const Json* type = member(value, "type");
  if (type == nullptr || !type->is_string()) {
    return Error{ErrorCode::kMissingField, "a watch event has no type", {"", 0, "/type"}};
  }
  WatchEvent event;
  const std::string& name = type->get_ref<const std::string&>();
  if (name == "ADDED") {
    event.type = WatchEventType::kAdded;
  } else if (name == "MODIFIED") {
    event.type = WatchEventType::kModified;
  } else if (name == "DELETED") {
    event.type = WatchEventType::kDeleted;
  } else if (name == "BOOKMARK") {
    event.type = WatchEventType::kBookmark;
  } else if (name == "ERROR") {
    event.type = WatchEventType::kError;
  } else {
    return Error{
        ErrorCode::kInvalidValue, "unknown watch event type \"" + name + "\"", {"", 0, "/type"}};
  }
  auto object = value.find("object");
  if (object == value.end() || !object->is_object()) {
    return Error{ErrorCode::kMissingField, "a watch event has no object", {"", 0, "/object"}};
  }
  event.object = std::move(*object);
  return event;
}

}  // namespace

Result<WatchEvent> parse_watch_event(std::string_view text) {
  JsonReader reader(JsonValueSplitter::kMaxDepth + 1);
  return decode_watch_event(text, reader);
}

WatchStreamParser::WatchStreamParser(std::size_t max_event_bytes)
    : splitter_(max_event_bytes),
      reader_(std::make_unique<JsonReader>(JsonValueSplitter::kMaxDepth + 1)) {}

WatchStreamParser::~WatchStreamParser() = default;

Status WatchStreamParser::feed(std::string_view bytes, const EventSink& on_event) {
  if (failed_) {
    return *failed_;
  }
  Status scanned = splitter_.feed(bytes, [&](std::string_view text) {
    Result<WatchEvent> event = decode_watch_event(text, *reader_);
    if (!event) {
      failed_ = event.error();
      failed_->message += " (event " + std::to_string(events_ + 1) + " of the stream)";
      return false;
    }
    ++events_;
    return on_event(std::move(event).value());
  });
  if (failed_) {
    return *failed_;
  }
  return scanned;
}

}  // namespace topoguard::kube
