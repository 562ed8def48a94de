#include "topoguard/common/yaml_document.h"

#include <gtest/gtest.h>

#include "note_name.h"

namespace topoguard {
namespace {

struct ScalarCase {
  std::string_view note;
  std::string_view yaml;
  Json expected;
};

class ScalarResolutionTest : public ::testing::TestWithParam<ScalarCase> {};

// Plain scalars resolve with the YAML 1.2 core schema; quoted ones stay strings.
TEST_P(ScalarResolutionTest, ResolvesCoreSchema) {
  const ScalarCase& c = GetParam();
  YamlStream stream = parse_yaml_stream(std::string("v: ") + std::string(c.yaml), "t.yaml");
  ASSERT_TRUE(stream.errors.empty()) << stream.errors.front().to_string();
  ASSERT_EQ(stream.documents.size(), 1u);
  EXPECT_EQ(stream.documents[0].value["v"], c.expected);
}

INSTANTIATE_TEST_SUITE_P(
    Scalars, ScalarResolutionTest,
    ::testing::Values(ScalarCase{"int", "42", Json(42)}, ScalarCase{"negative", "-7", Json(-7)},
                      ScalarCase{"hex", "0x1F", Json(31)}, ScalarCase{"octal", "0o17", Json(15)},
                      ScalarCase{"float", "1.5", Json(1.5)},
                      ScalarCase{"exponent", "1e3", Json(1000.0)},
                      ScalarCase{"true", "true", Json(true)},
                      ScalarCase{"False", "False", Json(false)},
                      ScalarCase{"null", "null", Json(nullptr)},
                      ScalarCase{"tilde", "~", Json(nullptr)},
                      ScalarCase{"empty", "", Json(nullptr)},
                      ScalarCase{"quoted_int", "\"8\"", Json("8")},
                      ScalarCase{"single_quoted_bool", "'true'", Json("true")},
                      ScalarCase{"str_tag", "!!str 12", Json("12")},
                      ScalarCase{"yes_is_string", "yes", Json("yes")},
                      ScalarCase{"version_like", "1.2.3", Json("1.2.3")},
                      ScalarCase{"quantity", "512Gi", Json("512Gi")},
                      ScalarCase{"pci_root", "pci0000:10", Json("pci0000:10")},
                      ScalarCase{"huge_int_is_float", "99999999999999999999",
                                 Json(99999999999999999999.0)}),
    topoguard::testing::NoteName());

// Every document of a stream is returned with the line each field starts on.
TEST(YamlStreamTest, SplitsDocumentsAndRecordsLines) {
  const std::string text =
      "# leading comment\n"
      "apiVersion: v1\n"
      "kind: Pod\n"
      "---\n"
      "---\n"
      "kind: List\n"
      "items:\n"
      "- name: a\n"
      "  value: 1\n";
  YamlStream stream = parse_yaml_stream(text, "s.yaml");
  ASSERT_TRUE(stream.errors.empty());
  ASSERT_EQ(stream.documents.size(), 2u);
  EXPECT_EQ(stream.documents[0].first_line, 2);
  EXPECT_EQ(stream.documents[0].lines.line_of("/kind"), 3);
  EXPECT_EQ(stream.documents[1].lines.line_of("/items/0/value"), 9);
  EXPECT_EQ(stream.documents[1].lines.line_of("/items/0/missing/deeper"), 8);
  EXPECT_EQ(text.substr(stream.documents[1].text_begin,
                        stream.documents[1].text_end - stream.documents[1].text_begin),
            "---\nkind: List\nitems:\n- name: a\n  value: 1\n");
}

// A broken document is reported with file and line; the documents around it still parse.
TEST(YamlStreamTest, BrokenDocumentDoesNotHideOthers) {
  YamlStream stream = parse_yaml_stream("a: 1\n---\nb: [1, 2\n---\nc: 3\n", "broken.yaml");
  ASSERT_EQ(stream.errors.size(), 1u);
  EXPECT_EQ(stream.errors[0].code, ErrorCode::kInvalidYaml);
  EXPECT_EQ(stream.errors[0].location.file, "broken.yaml");
  EXPECT_GE(stream.errors[0].location.line, 3);
  ASSERT_EQ(stream.documents.size(), 2u);
  EXPECT_EQ(stream.documents[1].value["c"], 3);
}

// Streams on which yaml-cpp's parser never terminates (found by fuzzing; it allocated until the
// process was killed) are an error at their line, and the documents around them are still read.
TEST(YamlStreamTest, RunawayParserIsAnErrorNotAHang) {
  for (const std::string text : {"- x\n, - y\n", "a:\n  - 'x'\n,   - 'y'\n  - 'z'\n"}) {
    YamlStream stream = parse_yaml_stream("a: 1\n---\n" + text + "---\nc: 3\n", "runaway.yaml");
    ASSERT_EQ(stream.errors.size(), 1u) << text;
    EXPECT_EQ(stream.errors[0].code, ErrorCode::kInvalidYaml);
    EXPECT_EQ(stream.errors[0].location.file, "runaway.yaml");
    EXPECT_GE(stream.errors[0].location.line, 3) << text;
    EXPECT_LE(stream.errors[0].location.line, 6) << text;
    ASSERT_EQ(stream.documents.size(), 2u) << text;
    EXPECT_EQ(stream.documents[1].value["c"], 3);
  }
}

// Duplicate keys are an error naming the key and its line, never a silent overwrite.
TEST(YamlStreamTest, DuplicateKeyIsAnError) {
  YamlStream stream = parse_yaml_stream("a: 1\nb: 2\na: 3\n", "dup.yaml");
  ASSERT_EQ(stream.errors.size(), 1u);
  EXPECT_EQ(stream.errors[0].code, ErrorCode::kDuplicateKey);
  EXPECT_EQ(stream.errors[0].location.line, 3);
  EXPECT_EQ(stream.errors[0].location.field, "/a");
}

// Deep nesting is refused with a clear error instead of exhausting the stack.
TEST(YamlStreamTest, DeepNestingIsRefused) {
  std::string deep(100000, '[');
  YamlStream stream = parse_yaml_stream(deep, "deep.yaml");
  ASSERT_EQ(stream.errors.size(), 1u);
  EXPECT_TRUE(stream.errors[0].code == ErrorCode::kTooDeep ||
              stream.errors[0].code == ErrorCode::kInvalidYaml);
  std::string nested;
  for (int i = 0; i < 300; ++i) {
    nested += std::string(static_cast<std::size_t>(i) * 2, ' ') + "k:\n";
  }
  YamlStream nested_stream = parse_yaml_stream(nested, "nested.yaml");
  ASSERT_EQ(nested_stream.errors.size(), 1u);
  EXPECT_EQ(nested_stream.errors[0].code, ErrorCode::kTooDeep);
}

// Alias bombs ("billion laughs") hit the node budget instead of exhausting memory.
TEST(YamlStreamTest, AliasExpansionIsBounded) {
  std::string text = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  char previous = 'a';
  for (char name = 'b'; name <= 'j'; ++name) {
    text += std::string(1, name) + ": &" + name + " [";
    for (int i = 0; i < 10; ++i) {
      text += std::string(i == 0 ? "" : ", ") + "*" + previous;
    }
    text += "]\n";
    previous = name;
  }
  ParseLimits limits;
  limits.max_nodes = 50'000;
  YamlStream stream = parse_yaml_stream(text, "bomb.yaml", limits);
  ASSERT_EQ(stream.errors.size(), 1u);
  EXPECT_EQ(stream.errors[0].code, ErrorCode::kTooLarge);
  EXPECT_EQ(stream.errors[0].location.file, "bomb.yaml");
}

// Merge keys copy the anchored mapping's keys that are not set locally.
TEST(YamlStreamTest, MergeKeysExpand) {
  YamlStream stream =
      parse_yaml_stream("base: &b {x: 1, y: 2}\nderived:\n  <<: *b\n  y: 3\n", "m.yaml");
  ASSERT_TRUE(stream.errors.empty());
  EXPECT_EQ(stream.documents[0].value["derived"], Json::parse(R"({"y": 3, "x": 1})"));
}

// A mapping entry's line is its key's, even when the value starts on a later line; a sequence
// item's line is its own.
TEST(YamlStreamTest, EntryLineIsTheKeyLine) {
  YamlStream stream = parse_yaml_stream("a:\n\n  - x\n  -\n    y\nb: |\n  text\n", "lines.yaml");
  ASSERT_TRUE(stream.errors.empty());
  const LineIndex& lines = stream.documents[0].lines;
  EXPECT_EQ(lines.line_of("/a"), 1);
  EXPECT_EQ(lines.line_of("/a/0"), 3);
  EXPECT_EQ(lines.line_of("/a/1"), 5);
  EXPECT_EQ(lines.line_of("/b"), 6);
}

// An alias expands to a copy of the anchored value whose lines are the anchored value's lines,
// recorded under the alias's pointer; a mapping entry holding an alias keeps its key's line.
TEST(YamlStreamTest, AliasCopiesCarryTheAnchoredLines) {
  YamlStream stream = parse_yaml_stream(
      "base: &b\n  name: gpu\n  list: [1, 2]\nitems:\n  - *b\nentry: *b\n", "alias.yaml");
  ASSERT_TRUE(stream.errors.empty()) << stream.errors.front().to_string();
  const YamlDocument& document = stream.documents[0];
  EXPECT_EQ(document.value["items"][0], document.value["base"]);
  EXPECT_EQ(document.value["entry"], document.value["base"]);
  EXPECT_EQ(document.lines.line_of("/items/0"), 1);  // the anchored mapping's line
  EXPECT_EQ(document.lines.line_of("/items/0/name"), 2);
  EXPECT_EQ(document.lines.line_of("/items/0/list/1"), 3);
  EXPECT_EQ(document.lines.line_of("/entry"), 6);  // the key's line
  EXPECT_EQ(document.lines.line_of("/entry/name"), 2);
}

// `<<: [*a, *b]` merges in order after the mapping's own keys: own keys win, then earlier
// sources; merged keys keep their source's lines, own keys their own.
TEST(YamlStreamTest, MergeOfAListOfAnchors) {
  YamlStream stream = parse_yaml_stream(
      "a: &a {x: 1, y: 1}\nb: &b\n  y: 2\n  z: 2\nd:\n  <<: [*a, *b]\n  x: 0\n", "merge.yaml");
  ASSERT_TRUE(stream.errors.empty()) << stream.errors.front().to_string();
  const YamlDocument& document = stream.documents[0];
  EXPECT_EQ(document.value["d"], Json::parse(R"({"x": 0, "y": 1, "z": 2})"));
  EXPECT_EQ(document.lines.line_of("/d/x"), 7);
  EXPECT_EQ(document.lines.line_of("/d/y"), 1);
  EXPECT_EQ(document.lines.line_of("/d/z"), 4);
  YamlStream scalar = parse_yaml_stream("d:\n  <<: [{a: 1}, 5]\n", "bad-merge.yaml");
  ASSERT_EQ(scalar.errors.size(), 1u);
  EXPECT_EQ(scalar.errors[0].code, ErrorCode::kInvalidYaml);
  EXPECT_EQ(scalar.errors[0].location.line, 2);
  EXPECT_EQ(scalar.errors[0].location.field, "/d");
}

// An alias bomb built from merges and an anchor that contains its own alias are both bounded:
// an error, never unbounded memory or recursion.
TEST(YamlStreamTest, SelfReferenceAndMergeBombsAreBounded) {
  std::string text = "a: &a {k0: [x, x, x, x, x, x, x, x, x, x]}\n";
  char previous = 'a';
  for (char name = 'b'; name <= 'h'; ++name) {
    text += std::string(1, name) + ": &" + name + " [";
    for (int i = 0; i < 10; ++i) {
      text += std::string(i == 0 ? "" : ", ") + "{<<: *" + previous + "}";
    }
    text += "]\n";
    previous = name;
  }
  ParseLimits limits;
  limits.max_nodes = 10'000;
  YamlStream bomb = parse_yaml_stream(text, "merge-bomb.yaml", limits);
  ASSERT_EQ(bomb.errors.size(), 1u);
  EXPECT_EQ(bomb.errors[0].code, ErrorCode::kTooLarge);
  YamlStream cycle = parse_yaml_stream("a: &a [1, *a]\n", "cycle.yaml");
  ASSERT_EQ(cycle.errors.size(), 1u);
  EXPECT_EQ(cycle.errors[0].code, ErrorCode::kTooDeep);
  EXPECT_EQ(cycle.errors[0].location.line, 1);
}

// Mappings and sequences record where they start in the stream (byte offset, column, style):
// block ones at their first key or '-', flow ones (JSON too) at their bracket; multi-byte
// characters before them count in bytes.
TEST(YamlStreamTest, RecordsMarksOfCollections) {
  const std::string text = "a: 1\n---\nname: \"gr\u00fc\u00df\"\nspec:\n  devices:\n"
                           "    requests:\n    - {name: gpu}\n  json: {\"x\": [1]}\n";
  YamlStream stream = parse_yaml_stream(text, "marks.yaml");
  ASSERT_TRUE(stream.errors.empty());
  ASSERT_EQ(stream.documents.size(), 2u);
  const LineIndex& lines = stream.documents[1].lines;
  auto offset_of = [&](const std::string& needle) { return text.find(needle); };
  const auto devices = lines.mark_of("/spec/devices");
  ASSERT_TRUE(devices.has_value());
  EXPECT_EQ(devices->offset, offset_of("requests:"));
  EXPECT_EQ(devices->column, 4);
  EXPECT_FALSE(devices->flow);
  const auto requests = lines.mark_of("/spec/devices/requests");
  ASSERT_TRUE(requests.has_value());
  EXPECT_EQ(requests->offset, offset_of("- {name"));
  EXPECT_EQ(requests->column, 4);
  const auto item = lines.mark_of("/spec/devices/requests/0");
  ASSERT_TRUE(item.has_value());
  EXPECT_EQ(item->offset, offset_of("{name"));
  EXPECT_TRUE(item->flow);
  const auto json = lines.mark_of("/spec/json");
  ASSERT_TRUE(json.has_value());
  EXPECT_EQ(json->offset, offset_of("{\"x\""));
  EXPECT_EQ(lines.mark_of("/spec/json/x")->offset, offset_of("[1]"));
  EXPECT_FALSE(lines.mark_of("/name").has_value());  // scalars have none
  EXPECT_FALSE(lines.mark_of("/nothing").has_value());
}

// to_yaml output parses back to the same value, including strings that look like other types.
TEST(ToYamlTest, RoundTrips) {
  const Json value = Json::parse(R"({
    "apiVersion": "resource.k8s.io/v1", "count": 2, "flag": true, "nothing": null,
    "strings": ["8", "true", "null", "", "a: b", "- x", "#c", "multi\nline\n", "1.5", "~"],
    "empty": {}, "list": [], "nested": [{"a": [1, 2]}], "x/y": "z", "real": 0.25})");
  YamlStream stream = parse_yaml_stream(to_yaml(value), "round.yaml");
  ASSERT_TRUE(stream.errors.empty()) << to_yaml(value);
  ASSERT_EQ(stream.documents.size(), 1u);
  EXPECT_EQ(stream.documents[0].value, value) << to_yaml(value);
}

}  // namespace
}  // namespace topoguard
