#include "topoguard/kube/watch_stream.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "note_name.h"

namespace topoguard::kube {
namespace {

// Three events of a real stream, with strings holding braces, brackets, escaped quotes and
// backslashes, and a nested object; joined by newlines as the API server writes them.
const std::vector<std::string> kEvents = {
    R"({"type":"ADDED","object":{"kind":"Namespace","apiVersion":"v1","metadata":{"name":"a","resourceVersion":"11","annotations":{"note":"a } brace and a \" quote and a \\ backslash {"}}}})",
    R"({"type":"MODIFIED","object":{"kind":"ResourceSlice","apiVersion":"resource.k8s.io/v1","metadata":{"name":"s","resourceVersion":"12"},"spec":{"devices":[{"name":"gpu0","attributes":{"x":{"string":"[[]]{{}}"}}},{"name":"nic0"}]}}})",
    R"({"type":"BOOKMARK","object":{"kind":"Namespace","apiVersion":"v1","metadata":{"resourceVersion":"13"}}})",
};

std::string stream_text() {
  std::string text;
  for (const std::string& event : kEvents) {
    text += event + "\n";
  }
  return text;
}

std::vector<WatchEvent> feed_in_pieces(const std::vector<std::string_view>& pieces) {
  WatchStreamParser parser;
  std::vector<WatchEvent> events;
  for (const std::string_view piece : pieces) {
    Status fed = parser.feed(piece, [&](WatchEvent&& event) {
      events.push_back(std::move(event));
      return true;
    });
    EXPECT_TRUE(fed.has_value()) << fed.error().to_string();
  }
  EXPECT_TRUE(parser.at_boundary());
  return events;
}

void expect_the_three_events(const std::vector<WatchEvent>& events) {
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].type, WatchEventType::kAdded);
  EXPECT_EQ(events[0].object["metadata"]["annotations"]["note"],
            "a } brace and a \" quote and a \\ backslash {");
  EXPECT_EQ(events[1].type, WatchEventType::kModified);
  EXPECT_EQ(events[1].object["spec"]["devices"].size(), 2u);
  EXPECT_EQ(events[2].type, WatchEventType::kBookmark);
  EXPECT_EQ(events[2].object["metadata"]["resourceVersion"], "13");
}

// The whole stream in one chunk: several events per chunk.
TEST(WatchStreamTest, SeveralEventsInOneChunk) {
  const std::string text = stream_text();
  expect_the_three_events(feed_in_pieces({text}));
}

// Split into two chunks at every byte offset, the same three events come out.
TEST(WatchStreamTest, SplitAtEveryOffset) {
  const std::string text = stream_text();
  for (std::size_t cut = 0; cut <= text.size(); ++cut) {
    SCOPED_TRACE("cut at " + std::to_string(cut));
    const std::string_view view(text);
    expect_the_three_events(feed_in_pieces({view.substr(0, cut), view.substr(cut)}));
  }
}

// Split into three chunks at every pair of offsets (every event boundary and string state).
TEST(WatchStreamTest, SplitAtEveryPairOfOffsets) {
  const std::string text = stream_text();
  const std::string_view view(text);
  for (std::size_t first = 0; first <= text.size(); first += 7) {
    for (std::size_t second = first; second <= text.size(); ++second) {
      const auto events = feed_in_pieces(
          {view.substr(0, first), view.substr(first, second - first), view.substr(second)});
      ASSERT_EQ(events.size(), 3u) << first << " " << second;
    }
  }
}

// One byte per chunk.
TEST(WatchStreamTest, OneByteAtATime) {
  const std::string text = stream_text();
  std::vector<std::string_view> pieces;
  for (std::size_t i = 0; i < text.size(); ++i) {
    pieces.push_back(std::string_view(text).substr(i, 1));
  }
  expect_the_three_events(feed_in_pieces(pieces));
}

// Random chunk sizes over a long stream, with \r\n and no separator between some events.
TEST(WatchStreamTest, RandomChunksOfALongStream) {
  std::string text;
  for (int i = 0; i < 300; ++i) {
    text += kEvents[static_cast<std::size_t>(i) % 3];
    text += i % 5 == 0 ? "\r\n" : (i % 7 == 0 ? "" : "\n");
  }
  std::mt19937 random(7);
  std::vector<std::string_view> pieces;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t size = std::uniform_int_distribution<std::size_t>(1, 500)(random);
    pieces.push_back(std::string_view(text).substr(at, size));
    at += size;
  }
  EXPECT_EQ(feed_in_pieces(pieces).size(), 300u);
}

// A partial event is held and reported: the stream cannot end cleanly there.
TEST(WatchStreamTest, PartialEventIsNotABoundary) {
  WatchStreamParser parser;
  int seen = 0;
  const auto sink = [&](WatchEvent&&) {
    ++seen;
    return true;
  };
  ASSERT_TRUE(parser.feed(kEvents[0].substr(0, 10), sink).has_value());
  EXPECT_FALSE(parser.at_boundary());
  ASSERT_TRUE(parser.feed(kEvents[0].substr(10) + "\n  ", sink).has_value());
  EXPECT_TRUE(parser.at_boundary());
  EXPECT_EQ(seen, 1);
}

// The sink stops the feed: later events of the same chunk are not delivered.
TEST(WatchStreamTest, SinkStopsTheFeed) {
  WatchStreamParser parser;
  int seen = 0;
  ASSERT_TRUE(parser
                  .feed(stream_text(),
                        [&](WatchEvent&&) {
                          ++seen;
                          return false;
                        })
                  .has_value());
  EXPECT_EQ(seen, 1);
}

struct BadCase {
  std::string_view note;
  std::string text;
  ErrorCode code;
};

class WatchStreamErrorTest : public ::testing::TestWithParam<BadCase> {};

// Malformed streams are errors with a code, and the parser stays failed.
TEST_P(WatchStreamErrorTest, Fails) {
  const BadCase& c = GetParam();
  WatchStreamParser parser(256);
  Status fed = parser.feed(c.text, [](WatchEvent&&) { return true; });
  ASSERT_FALSE(fed.has_value());
  EXPECT_EQ(fed.error().code, c.code) << fed.error().to_string();
  Status again = parser.feed(kEvents[2], [](WatchEvent&&) { return true; });
  EXPECT_FALSE(again.has_value());
}

INSTANTIATE_TEST_SUITE_P(
    Streams, WatchStreamErrorTest,
    ::testing::Values(
        BadCase{"NotAnObject", "\"text\"\n", ErrorCode::kInvalidJson},
        BadCase{"NumberAtTopLevel", "12\n", ErrorCode::kInvalidJson},
        BadCase{"TooLarge",
                "{\"type\":\"ADDED\",\"object\":{\"x\":\"" + std::string(300, 'a') + "\"}}",
                ErrorCode::kTooLarge},
        BadCase{"TooLargeWithoutEnd",
                "{\"type\":\"ADDED\",\"object\":{\"x\":\"" + std::string(300, 'a'),
                ErrorCode::kTooLarge},
        BadCase{"TooDeep", std::string(600, '['), ErrorCode::kTooDeep},
        BadCase{"NotJson", "{\"type\":\"ADDED\",,}\n", ErrorCode::kInvalidJson},
        BadCase{"NoType", "{\"object\":{}}\n", ErrorCode::kMissingField},
        BadCase{"UnknownType", "{\"type\":\"RENAMED\",\"object\":{}}\n", ErrorCode::kInvalidValue},
        BadCase{"ObjectNotAnObject", "{\"type\":\"ADDED\",\"object\":[]}\n",
                ErrorCode::kMissingField}),
    topoguard::testing::NoteName());

// Each of the five event types is recognised.
TEST(WatchStreamTest, EventTypes) {
  for (const auto type :
       {WatchEventType::kAdded, WatchEventType::kModified, WatchEventType::kDeleted,
        WatchEventType::kBookmark, WatchEventType::kError}) {
    const std::string text =
        "{\"type\":\"" + std::string(watch_event_type_name(type)) + "\",\"object\":{}}";
    Result<WatchEvent> event = parse_watch_event(text);
    ASSERT_TRUE(event.has_value());
    EXPECT_EQ(event->type, type);
  }
}

// Objects decode as nlohmann's parser decodes them: key order kept, a repeated key keeping its
// first position and its last value (small and large objects alike), integers typed by sign.
TEST(WatchStreamTest, DecodesLikeNlohmann) {
  std::string many = R"({"type":"ADDED","object":{"z":0)";
  for (int i = 0; i < 40; ++i) {
    many += ",\"k" + std::to_string(i) + "\":" + std::to_string(i);
  }
  many += R"(,"z":99,"k3":-3}})";
  for (const std::string& text :
       {std::string(R"({"type":"ADDED","object":{"b":1,"a":2,"b":3,"n":-5,"f":1.5,"s":"\u00e9"}})"),
        many}) {
    Result<WatchEvent> event = parse_watch_event(text);
    ASSERT_TRUE(event.has_value()) << event.error().to_string();
    const Json expected = Json::parse(text)["object"];
    EXPECT_EQ(event->object, expected);
    EXPECT_EQ(event->object.dump(), expected.dump());
  }
  Result<WatchEvent> typed = parse_watch_event(R"({"type":"ADDED","object":{"u":5,"i":-5}})");
  ASSERT_TRUE(typed.has_value());
  EXPECT_TRUE(typed->object["u"].is_number_unsigned());
  EXPECT_TRUE(typed->object["i"].is_number_integer());
  EXPECT_FALSE(typed->object["i"].is_number_unsigned());
}

}  // namespace
}  // namespace topoguard::kube
