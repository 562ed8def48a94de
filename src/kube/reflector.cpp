#include "topoguard/kube/reflector.h"

#include <algorithm>
#include <random>
#include <utility>

namespace topoguard::kube {

namespace {

constexpr std::string_view kInitialEventsEnd = "k8s.io/initial-events-end";

// metadata.resourceVersion of an object, "" when absent.
std::string version_of(const Json& object) {
  const Json* metadata = member(object, "metadata");
  return metadata != nullptr ? string_member(*metadata, "resourceVersion") : std::string();
}

bool ends_initial_events(const Json& bookmark) {
  const Json* metadata = member(bookmark, "metadata");
  const Json* annotations = metadata != nullptr ? member(*metadata, "annotations") : nullptr;
  return annotations != nullptr && string_member(*annotations, kInitialEventsEnd) == "true";
}

}  // namespace

const char* reflector_error_kind_name(ReflectorErrorKind kind) {
  switch (kind) {
    case ReflectorErrorKind::kListFailed:
      return "list_failed";
    case ReflectorErrorKind::kWatchFailed:
      return "watch_failed";
    case ReflectorErrorKind::kExpired:
      return "expired";
    case ReflectorErrorKind::kNotServed:
      return "not_served";
    case ReflectorErrorKind::kInvalidStream:
      return "invalid_stream";
  }
  return "list_failed";
}

Reflector::Reflector(ApiClientPtr client, ResourceRef resource, ReflectorHandler& handler,
                     ReflectorOptions options)
    : client_(std::move(client)),
      resource_(std::move(resource)),
      path_(resource_.path()),
      handler_(handler),
      options_(std::move(options)),
      list_options_{options_.page_size, options_.label_selector, options_.field_selector,
                    options_.page_bytes},
      random_(std::random_device{}()) {}

Reflector::~Reflector() { stop(); }

void Reflector::start() {
  thread_ = std::jthread([this](std::stop_token stop) { run(std::move(stop)); });
}

void Reflector::stop() {
  if (thread_.joinable()) {
    thread_.request_stop();
    thread_.join();
  }
}

std::string Reflector::resource_version() const {
  std::lock_guard lock(mutex_);
  return resource_version_;
}

void Reflector::set_resource_version(std::string version) {
  std::lock_guard lock(mutex_);
  resource_version_ = std::move(version);
}

ReflectorStats Reflector::stats() const {
  return ReflectorStats{lists_.load(),     watches_.load(),     events_.load(),
                        bookmarks_.load(), expirations_.load(), errors_.load()};
}

std::chrono::seconds Reflector::watch_timeout() {
  const auto low = options_.min_watch_timeout.count();
  const auto high = std::max(options_.max_watch_timeout.count(), low);
  return std::chrono::seconds(
      std::uniform_int_distribution<std::chrono::seconds::rep>(low, high)(random_));
}

void Reflector::report(ReflectorErrorKind kind, const Attempt& attempt,
                       std::chrono::nanoseconds retry_in) {
  ++errors_;
  ReflectorError error;
  error.kind = kind;
  error.message = resource_.to_string() + ": " + attempt.message;
  error.status = attempt.status;
  error.retry_in = retry_in;
  handler_.on_error(error);
}

Reflector::Attempt Reflector::list(std::stop_token stop) {
  ListResult listed = list_resource_pages(
      *client_, resource_, list_options_,
      [this](std::vector<Json>&& items) { handler_.on_list_page(std::move(items)); }, stop,
      [this](const ApiStatus& status) {
        handler_.on_list_discarded();
        ++expirations_;
        report(ReflectorErrorKind::kExpired,
               {Outcome::kExpired, "the list's continue token expired; listing again", status},
               std::chrono::nanoseconds(0));
      });
  if (!listed.ok()) {
    handler_.on_list_discarded();
  }
  if (listed.stopped) {
    return {Outcome::kStopped, "", std::nullopt};
  }
  if (!listed.ok()) {
    const Outcome outcome = listed.not_served() ? Outcome::kNotServed
                            : listed.invalid    ? Outcome::kInvalid
                                                : Outcome::kFailed;
    return {outcome, std::move(listed.error), std::move(listed.status)};
  }
  set_resource_version(listed.resource_version);
  ++lists_;
  handler_.on_sync(listed.resource_version);
  synced_ = true;
  return {Outcome::kOk, "", std::nullopt};
}

Reflector::Attempt Reflector::watch(std::stop_token stop, bool initial_events) {
  const std::chrono::seconds timeout = watch_timeout();
  std::string version = resource_version();
  Query query = {{"watch", "true"}};
  if (initial_events) {
    query.emplace_back("sendInitialEvents", "true");
    query.emplace_back("resourceVersionMatch", "NotOlderThan");
  }
  query.emplace_back("resourceVersion", version);
  query.emplace_back("allowWatchBookmarks", "true");
  query.emplace_back("timeoutSeconds", std::to_string(timeout.count()));
  add_selectors(list_options_, query);

  WatchStreamParser parser(options_.max_event_bytes);
  std::vector<Json> initial;
  bool initial_done = !initial_events;
  std::optional<ApiStatus> stream_error;
  std::optional<Error> invalid;
  std::uint64_t delivered = 0;
  const auto on_event = [&](WatchEvent&& event) {
    if (event.type == WatchEventType::kError) {
      stream_error = parse_api_status(500, event.object.dump());
      return false;
    }
    std::string event_version = version_of(event.object);
    if (event_version.empty()) {
      invalid = Error{ErrorCode::kMissingField,
                      std::string(watch_event_type_name(event.type)) +
                          " event without metadata.resourceVersion",
                      {}};
      return false;
    }
    if (event.type == WatchEventType::kBookmark) {
      ++bookmarks_;
      set_resource_version(event_version);
      if (!initial_done && ends_initial_events(event.object)) {
        initial_done = true;
        ++lists_;
        if (!initial.empty()) {
          handler_.on_list_page(std::move(initial));
          initial.clear();
        }
        handler_.on_sync(event_version);
        synced_ = true;
      }
      return true;
    }
    if (!initial_done) {
      if (event.type != WatchEventType::kAdded) {
        invalid = Error{ErrorCode::kInvalidValue,
                        "a streaming list sent " + std::string(watch_event_type_name(event.type)) +
                            " before its initial events ended",
                        {}};
        return false;
      }
      initial.push_back(std::move(event.object));
      if (initial.size() >= std::max<std::size_t>(options_.page_size, 1)) {
        handler_.on_list_page(std::move(initial));  // as a list's pages: never held whole
        initial.clear();
      }
      set_resource_version(std::move(event_version));
      return true;
    }
    ++delivered;
    ++events_;
    set_resource_version(std::move(event_version));
    handler_.on_event(event.type, std::move(event.object));
    return true;
  };
  const BodySink sink = [&](std::string_view bytes) {
    if (bytes.empty()) {
      handler_.on_watching();
      return true;
    }
    Status fed = parser.feed(bytes, on_event);
    if (!fed) {
      invalid = fed.error();
      return false;
    }
    return !invalid && !stream_error;
  };

  ++watches_;
  const auto started = client_->clock()->now();
  Result<ApiResponse> response =
      client_->stream(path_, query, sink, timeout + options_.watch_idle_grace, stop);
  Attempt attempt = finish_watch(response, parser, stream_error, invalid, initial_events,
                                 initial_done, started, delivered, stop);
  attempt.list_unfinished = !initial_done;
  if (!initial_done) {
    handler_.on_list_discarded();
  }
  return attempt;
}

Reflector::Attempt Reflector::finish_watch(const Result<ApiResponse>& response,
                                           const WatchStreamParser& parser,
                                           const std::optional<ApiStatus>& stream_error,
                                           const std::optional<Error>& invalid, bool initial_events,
                                           bool initial_done,
                                           std::chrono::steady_clock::time_point started,
                                           std::uint64_t delivered, const std::stop_token& stop) {
  if (stop.stop_requested()) {
    return {Outcome::kStopped, "", std::nullopt};
  }
  if (invalid) {
    return {Outcome::kInvalid, "watch: " + invalid->message, std::nullopt};
  }
  if (stream_error) {
    if (stream_error->expired()) {
      return {Outcome::kExpired, "watch: " + stream_error->to_string(), stream_error};
    }
    return {Outcome::kFailed, "watch: ERROR event: " + stream_error->to_string(), stream_error};
  }
  if (!response) {
    return {Outcome::kFailed, "watch: " + response.error().message, std::nullopt};
  }
  if (!response->ok()) {
    const ApiStatus& status = *response->error;
    if (status.expired()) {
      return {Outcome::kExpired, "watch: " + status.to_string(), status};
    }
    if (response->status == 404) {
      return {Outcome::kNotServed, "watch: " + status.to_string(), status};
    }
    if (initial_events && response->status >= 400 && response->status < 500 &&
        response->status != 429) {
      return {Outcome::kRefused, "streaming list refused: " + status.to_string(), status};
    }
    return {Outcome::kFailed, "watch: " + status.to_string(), status};
  }
  if (!parser.at_boundary()) {
    return {Outcome::kInvalid, "watch: the stream ended inside an event", std::nullopt};
  }
  if (!initial_done) {
    return {Outcome::kRefused, "the streaming list ended before its initial events did",
            std::nullopt};
  }
  if (client_->clock()->now() - started < std::chrono::seconds(1) && delivered == 0 &&
      parser.events() == 0) {
    return {Outcome::kFailed, "watch: very short watch: closed within a second, no event",
            std::nullopt};
  }
  return {Outcome::kClosed, "", std::nullopt};
}

void Reflector::run(std::stop_token stop) {
  Backoff backoff(options_.backoff, client_->clock());
  const ClockPtr& clock = client_->clock();
  bool streaming = options_.streaming_list;
  const auto wait = [&](std::chrono::nanoseconds duration) {
    return clock->sleep_for(duration, stop);
  };
  while (!stop.stop_requested()) {
    // List, or let the first watch be a streaming list.
    bool listed_by_watch = false;
    if (streaming) {
      set_resource_version("");
      listed_by_watch = true;
    } else {
      Attempt listed = list(stop);
      if (listed.outcome == Outcome::kStopped) {
        return;
      }
      if (listed.outcome == Outcome::kNotServed) {
        report(ReflectorErrorKind::kNotServed, listed, options_.not_served_retry);
        if (options_.not_served_retry.count() <= 0 || !wait(options_.not_served_retry)) {
          return;
        }
        continue;
      }
      if (listed.outcome != Outcome::kOk) {
        const auto delay = backoff.next();
        report(listed.outcome == Outcome::kInvalid ? ReflectorErrorKind::kInvalidStream
                                                   : ReflectorErrorKind::kListFailed,
               listed, delay);
        if (!wait(delay)) {
          return;
        }
        continue;
      }
    }
    // Watch until the version is gone.
    bool relist = false;
    while (!relist && !stop.stop_requested()) {
      Attempt watched = watch(stop, listed_by_watch);
      const bool was_streaming_list = listed_by_watch;
      listed_by_watch = false;
      switch (watched.outcome) {
        case Outcome::kStopped:
          return;
        case Outcome::kOk:
        case Outcome::kClosed:
          break;  // watch again at once
        case Outcome::kRefused: {
          streaming = false;  // this server does not do streaming lists: list from now on
          report(ReflectorErrorKind::kListFailed, watched, std::chrono::nanoseconds(0));
          relist = true;
          break;
        }
        case Outcome::kExpired: {
          ++expirations_;
          const auto delay = backoff.next();
          report(ReflectorErrorKind::kExpired, watched, delay);
          if (!wait(delay)) {
            return;
          }
          relist = true;
          break;
        }
        case Outcome::kNotServed:
          report(ReflectorErrorKind::kNotServed, watched, options_.not_served_retry);
          if (options_.not_served_retry.count() <= 0 || !wait(options_.not_served_retry)) {
            return;
          }
          relist = true;
          break;
        case Outcome::kInvalid: {
          const auto delay = backoff.next();
          report(ReflectorErrorKind::kInvalidStream, watched, delay);
          if (!wait(delay)) {
            return;
          }
          relist = true;
          break;
        }
        case Outcome::kFailed: {
          const auto delay = backoff.next();
          report(ReflectorErrorKind::kWatchFailed, watched, delay);
          if (!wait(delay)) {
            return;
          }
          break;
        }
      }
      if (was_streaming_list && watched.list_unfinished) {
        relist = true;  // the handler has had no list yet: list again (streaming or not)
      }
    }
  }
}

}  // namespace topoguard::kube
