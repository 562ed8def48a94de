#include "topoguard/audit/manifest_reader.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "note_name.h"
#include "temp_dir.h"

namespace topoguard::audit {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

using topoguard::testing::TempDir;

std::string names(const ManifestSet& set) {
  std::string text;
  for (const Manifest& manifest : set.manifests) {
    text += string_member(*find_at(*manifest.object, "/metadata"), "name") + " ";
  }
  return text;
}

std::string pod(const std::string& name) {
  return "apiVersion: v1\nkind: Pod\nmetadata: {name: " + name + "}\n";
}

// Directories are walked recursively in sorted order; only .yaml, .yml and .json are read.
TEST(ManifestReaderTest, WalksDirectoriesRecursivelyInSortedOrder) {
  TempDir dir;
  dir.write("b.yaml", pod("b"));
  dir.write("a/z.yml", pod("az"));
  dir.write("a/c.json", R"({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "ac"}})");
  dir.write("c.txt", pod("txt"));
  dir.write("d.yaml.bak", pod("bak"));
  std::istringstream no_input;
  const ManifestSet set = read_manifests({dir.path()}, no_input);
  EXPECT_TRUE(set.errors.empty());
  EXPECT_EQ(names(set), "ac az b ");
  ASSERT_EQ(set.files.size(), 3u);
  EXPECT_EQ(set.files[0].path, dir.path() + "/a/c.json");
}

// "-" reads standard input; explicit files keep the order given.
TEST(ManifestReaderTest, ReadsStdinAndFilesInGivenOrder) {
  TempDir dir;
  const std::string file = dir.write("x.yaml", pod("file"));
  std::istringstream input(pod("stdin1") + "---\n" + pod("stdin2"));
  const ManifestSet set = read_manifests({"-", file}, input);
  EXPECT_TRUE(set.errors.empty());
  EXPECT_EQ(names(set), "stdin1 stdin2 file ");
  EXPECT_EQ(set.path_of(set.manifests[0]), "-");
}

// An unreadable path is an error naming it; the other paths are still read.
TEST(ManifestReaderTest, MissingPathIsAnErrorOthersStillRead) {
  TempDir dir;
  const std::string file = dir.write("x.yaml", pod("ok"));
  std::istringstream no_input;
  const ManifestSet set = read_manifests({dir.path() + "/missing.yaml", file}, no_input);
  ASSERT_EQ(set.errors.size(), 1u);
  EXPECT_EQ(set.errors[0].code, ErrorCode::kIo);
  EXPECT_EQ(set.errors[0].location.file, dir.path() + "/missing.yaml");
  EXPECT_EQ(names(set), "ok ");
}

// A path that yields no document (a directory without manifests, a file of comments, empty
// stdin) is an error naming it, so a mistyped path cannot pass; an empty List is a manifest.
TEST(ManifestReaderTest, PathWithoutManifestsIsAnError) {
  TempDir dir;
  dir.write("empty/notes.txt", "not a manifest");
  const std::string comments = dir.write("comments.yaml", "# nothing here\n---\n");
  const std::string list = dir.write("list.yaml", "apiVersion: v1\nkind: List\nitems: []\n");
  const std::string file = dir.write("x.yaml", pod("ok"));
  std::istringstream empty_input;
  const ManifestSet set =
      read_manifests({dir.path() + "/empty", comments, "-", list, file}, empty_input);
  ASSERT_EQ(set.errors.size(), 3u);
  EXPECT_EQ(set.errors[0].message, "no manifests found in " + dir.path() + "/empty");
  EXPECT_EQ(set.errors[0].location.file, dir.path() + "/empty");
  EXPECT_EQ(set.errors[1].message, "no manifests found in " + comments);
  EXPECT_EQ(set.errors[2].message, "no manifests found in -");
  EXPECT_EQ(names(set), "ok ");
}

// A file over the size limit is a clear error, not a crash.
TEST(ManifestReaderTest, FileOverLimitIsTooLarge) {
  TempDir dir;
  const std::string file = dir.write("big.yaml", pod(std::string(4096, 'a')));
  std::istringstream input(pod(std::string(4096, 'b')));
  ReadLimits limits;
  limits.max_file_bytes = 1024;
  const ManifestSet set = read_manifests({file, "-"}, input, limits);
  ASSERT_EQ(set.errors.size(), 2u);
  EXPECT_EQ(set.errors[0].code, ErrorCode::kTooLarge);
  EXPECT_EQ(set.errors[0].location.file, file);
  EXPECT_EQ(set.errors[1].code, ErrorCode::kTooLarge);
  EXPECT_EQ(set.errors[1].location.file, "-");
  EXPECT_TRUE(set.manifests.empty());
}

struct ParseCase {
  std::string_view note;
  std::string text;
  std::string names;                // names of the manifests read, in order
  std::vector<int> manifest_lines;  // line of each manifest's /metadata/name
  std::vector<std::pair<ErrorCode, int>> errors;  // code and line of each error
};

void PrintTo(const ParseCase& c, std::ostream* os) { *os << c.note; }

class ParseManifestsTest : public ::testing::TestWithParam<ParseCase> {};

// Every document or List item becomes a manifest with lines in its file; broken documents are
// errors with file and line while the other documents are still read.
TEST_P(ParseManifestsTest, ReadsManifestsAndErrors) {
  const ParseCase& c = GetParam();
  const ManifestSet set = parse_manifests({{"in.yaml", c.text}});
  EXPECT_EQ(names(set), c.names);
  ASSERT_EQ(set.manifests.size(), c.manifest_lines.size());
  for (std::size_t i = 0; i < set.manifests.size(); ++i) {
    EXPECT_EQ(set.line_of(set.manifests[i], "/metadata/name"), c.manifest_lines[i]) << i;
  }
  ASSERT_EQ(set.errors.size(), c.errors.size());
  for (std::size_t i = 0; i < c.errors.size(); ++i) {
    EXPECT_EQ(error_code_name(set.errors[i].code), std::string(error_code_name(c.errors[i].first)))
        << set.errors[i].to_string();
    EXPECT_EQ(set.errors[i].location.file, "in.yaml");
    EXPECT_EQ(set.errors[i].location.line, c.errors[i].second) << set.errors[i].to_string();
  }
}

std::string nested(int depth) { return std::string(static_cast<std::size_t>(depth), '[') +
                                       std::string(static_cast<std::size_t>(depth), ']'); }

INSTANTIATE_TEST_SUITE_P(
    Streams, ParseManifestsTest,
    ::testing::Values(
        ParseCase{"multi_document", pod("a") + "---\n" + pod("b"), "a b ", {3, 7}, {}},
        ParseCase{"list_items_expanded_with_lines", R"(apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Pod
  metadata:
    name: first
- apiVersion: v1
  kind: Pod
  metadata: {name: second}
)",
                  "first second ", {7, 10}, {}},
        ParseCase{"typed_list_expanded", "apiVersion: v1\nkind: PodList\nitems:\n- " +
                                             std::string("{apiVersion: v1, kind: Pod, metadata: "
                                                         "{name: p}}\n"),
                  "p ", {4}, {}},
        ParseCase{"empty_list", "apiVersion: v1\nkind: List\nitems: []\n", "", {}, {}},
        ParseCase{"json_document",
                  "{\n  \"apiVersion\": \"v1\",\n  \"kind\": \"Pod\",\n  \"metadata\": {\n"
                  "    \"name\": \"j\"\n  }\n}\n",
                  "j ", {5}, {}},
        ParseCase{"broken_document_reported_others_read",
                  pod("before") + "---\nkind: Pod\nmetadata: {name: [oops\n---\n" + pod("after"),
                  "before after ", {3, 10},
                  // yaml-cpp notices the unclosed flow sequence at the next "---" (line 7).
                  {{ErrorCode::kInvalidYaml, 7}}},
        ParseCase{"scalar_document_is_wrong_type", pod("a") + "---\njust text\n", "a ", {3},
                  {{ErrorCode::kWrongType, 5}}},
        ParseCase{"list_items_not_array", "apiVersion: v1\nkind: List\nitems: {a: 1}\n", "", {},
                  {{ErrorCode::kWrongType, 3}}},
        ParseCase{"list_item_not_object", "apiVersion: v1\nkind: List\nitems:\n- 7\n- " +
                                              std::string("{kind: Pod, metadata: {name: ok}}\n"),
                  "ok ", {5}, {{ErrorCode::kWrongType, 4}}},
        ParseCase{"deeply_nested_is_too_deep", pod("a") + "---\nx: " + nested(100000) + "\n",
                  "a ", {3}, {{ErrorCode::kTooDeep, 5}}},
        ParseCase{"duplicate_key", "kind: Pod\nkind: Pod\n", "", {},
                  {{ErrorCode::kDuplicateKey, 2}}}),
    topoguard::testing::NoteName());

// A document with more nodes than the limit is a clear error (alias bombs included).
TEST(ParseManifestsLimitsTest, TooManyNodesIsTooLarge) {
  std::string text = "apiVersion: v1\nkind: ConfigMap\ndata:\n";
  for (int i = 0; i < 200; ++i) {
    text += "  k" + std::to_string(i) + ": v\n";
  }
  ReadLimits limits;
  limits.parse.max_nodes = 100;
  const ManifestSet set = parse_manifests({{"big.yaml", text}}, limits);
  ASSERT_EQ(set.errors.size(), 1u);
  EXPECT_EQ(set.errors[0].code, ErrorCode::kTooLarge) << set.errors[0].to_string();
  EXPECT_EQ(set.errors[0].location.file, "big.yaml");
  EXPECT_TRUE(set.manifests.empty());
}

TEST(ParseManifestsLimitsTest, AliasBombIsAnErrorNotACrash) {
  std::string text = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  char previous = 'a';
  for (char name = 'b'; name <= 'j'; ++name) {
    text += std::string(1, name) + ": &" + std::string(1, name) + " [";
    for (int i = 0; i < 10; ++i) {
      text += std::string(i == 0 ? "" : ", ") + "*" + std::string(1, previous);
    }
    text += "]\n";
    previous = name;
  }
  ReadLimits limits;
  limits.parse.max_nodes = 100'000;  // a 10^10-node expansion; a low limit keeps the test quick
  const ManifestSet set = parse_manifests({{"bomb.yaml", text}}, limits);
  ASSERT_EQ(set.errors.size(), 1u);
  EXPECT_EQ(set.errors[0].code, ErrorCode::kTooLarge) << set.errors[0].to_string();
}

}  // namespace
}  // namespace topoguard::audit
