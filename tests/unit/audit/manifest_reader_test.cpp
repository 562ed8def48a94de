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
                                              std::string("{apiVersion: v1, kind: Pod, metadata: {name: ok}}\n"),
                  "ok ", {5}, {{ErrorCode::kWrongType, 4}}},
        ParseCase{"deeply_nested_is_too_deep", pod("a") + "---\nx: " + nested(100000) + "\n",
                  "a ", {3}, {{ErrorCode::kTooDeep, 5}}},
        ParseCase{"duplicate_key", "kind: Pod\nkind: Pod\n", "", {},
                  {{ErrorCode::kDuplicateKey, 2}}},
        // What is not a Kubernetes object is skipped (see SkipsWhatIsNotAnObject); what names
        // itself one, or sits among them, and misses apiVersion or kind is an error.
        ParseCase{"kind_without_api_version", "kind: Pod\nmetadata: {name: a}\n", "a ", {2},
                  {{ErrorCode::kMissingField, 1}}},
        ParseCase{"api_version_without_kind", pod("a") + "---\napiVersion: v1\nmetadata: {}\n",
                  "a  ", {3, 6}, {{ErrorCode::kMissingField, 5}}},
        ParseCase{"neither_among_objects", pod("a") + "---\nmetadata: {name: b}\nspec: {}\n",
                  "a b ", {3, 5}, {{ErrorCode::kMissingField, 5}}},
        ParseCase{"list_item_without_api_version",
                  "apiVersion: v1\nkind: List\nitems:\n- {kind: Pod, metadata: {name: i}}\n",
                  "i ", {4}, {{ErrorCode::kMissingField, 4}}},
        ParseCase{"array_that_is_no_patch", pod("a") + "---\n- one\n- two\n", "a ", {3},
                  {{ErrorCode::kWrongType, 5}}},
        ParseCase{"yaml_error_without_braces_stays_an_error", "a: [b\n", "", {},
                  {{ErrorCode::kInvalidYaml, 2}}},
        ParseCase{"prometheus_text_is_audited",
                  "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n  annotations: {summary: "
                  "'{{ $labels.pod }} is down'}\n",
                  "a ", {4}, {}}),
    topoguard::testing::NoteName());

struct SkipCase {
  std::string_view note;
  std::string path;
  std::string text;
  std::vector<std::pair<int, NotAnObject>> skipped;  // line (0: the file) and reason
  std::string names;                                 // of the manifests still read
};

void PrintTo(const SkipCase& c, std::ostream* os) { *os << c.note; }

class SkipNotObjectsTest : public ::testing::TestWithParam<SkipCase> {};

// What CI feeds the audit beside its manifests is skipped and listed, never an error.
TEST_P(SkipNotObjectsTest, SkipsWhatIsNotAnObject) {
  const SkipCase& c = GetParam();
  const ManifestSet set = parse_manifests({{c.path, c.text}});
  EXPECT_TRUE(set.errors.empty()) << set.errors.front().to_string();
  EXPECT_EQ(names(set), c.names);
  ASSERT_EQ(set.skipped.size(), c.skipped.size());
  for (std::size_t i = 0; i < c.skipped.size(); ++i) {
    EXPECT_EQ(set.skipped[i].file, c.path);
    EXPECT_EQ(set.skipped[i].line, c.skipped[i].first) << i;
    EXPECT_EQ(not_an_object_name(set.skipped[i].reason),
              not_an_object_name(c.skipped[i].second)) << i;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Inputs, SkipNotObjectsTest,
    ::testing::Values(
        SkipCase{"json_patch_among_objects", "p.yaml",
                 "# a comment\n- op: add\n  path: /spec/replicas\n  value: 2\n---\n" + pod("a"),
                 {{2, NotAnObject::kJsonPatch}}, "a "},
        SkipCase{"json_patch_as_json", "p.json", R"([{"op": "remove", "path": "/a"}])",
                 {{1, NotAnObject::kJsonPatch}}, ""},
        SkipCase{"kustomization_by_name_without_type", "dir/kustomization.yaml",
                 "resources: [a.yaml]\n", {{0, NotAnObject::kKustomization}}, ""},
        SkipCase{"kustomization_by_api_version", "any.yaml",
                 "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n---\n" +
                     pod("a"),
                 {{1, NotAnObject::kKustomization}}, "a "},
        SkipCase{"chart_file", "chart/Chart.yaml", "apiVersion: v2\nname: c\nversion: 1.0.0\n",
                 {{0, NotAnObject::kHelmChart}}, ""},
        SkipCase{"helm_template_that_parses", "t.yaml",
                 "apiVersion: v1\nkind: Pod\nmetadata:\n  name: \"{{ .Release.Name }}\"\n",
                 {{0, NotAnObject::kTemplate}}, ""},
        SkipCase{"template_that_does_not_parse", "t.yaml",
                 "{{- if .Values.on }}\napiVersion: v1\nkind: Pod\n{{- end }}\n",
                 {{0, NotAnObject::kTemplate}}, ""},
        SkipCase{"other_template_that_does_not_parse", "-", "a: {{ b }\n",
                 {{0, NotAnObject::kTemplate}}, ""},
        SkipCase{"values_file", "values.yaml", "replicas: 3\nimage: {tag: x}\n---\nother: 1\n",
                 {{1, NotAnObject::kNoKind}, {4, NotAnObject::kNoKind}}, ""}),
    topoguard::testing::NoteName());

// A file a kustomization of the input names as a patch is skipped whole, whatever it holds (a
// strategic-merge patch looks like an object); its kustomization may sort after it.
TEST(ManifestReaderTest, SkipsPatchesTheKustomizationNames) {
  TempDir dir;
  dir.write("base/deployment-patch.yaml", pod("patch"));
  dir.write("base/json-patch.yaml", "- {op: add, path: /a, value: 1}\n");
  dir.write("base/kustomization.yaml",
            "resources: [pod.yaml]\npatchesStrategicMerge: [deployment-patch.yaml]\n"
            "patches:\n- path: ./json-patch.yaml\n");
  dir.write("base/pod.yaml", pod("real"));
  dir.write("other/deployment-patch.yaml", pod("not-named"));
  std::istringstream no_input;
  const ManifestSet set = read_manifests({dir.path()}, no_input);
  EXPECT_TRUE(set.errors.empty());
  EXPECT_EQ(names(set), "real not-named ");
  ASSERT_EQ(set.skipped.size(), 3u);
  EXPECT_EQ(set.skipped[0].file, dir.path() + "/base/deployment-patch.yaml");
  EXPECT_EQ(set.skipped[0].reason, NotAnObject::kKustomizePatch);
  EXPECT_EQ(set.skipped[1].reason, NotAnObject::kKustomizePatch);
  EXPECT_EQ(set.skipped[2].reason, NotAnObject::kKustomization);
}

// A folder holding Chart.yaml is a Helm chart: one note, nothing read below it; a path holding
// only a chart is no mistyped path.
TEST(ManifestReaderTest, SkipsHelmChartsWhole) {
  TempDir dir;
  dir.write("charts/gpu/Chart.yaml", "apiVersion: v2\nname: gpu\nversion: 0.1.0\n");
  dir.write("charts/gpu/values.yaml", "replicas: 1\n");
  dir.write("charts/gpu/templates/pod.yaml", pod("templated"));
  dir.write("plain/pod.yaml", pod("plain"));
  std::istringstream no_input;
  const ManifestSet set = read_manifests({dir.path(), dir.path() + "/charts/gpu"}, no_input);
  EXPECT_TRUE(set.errors.empty()) << set.errors.front().to_string();
  EXPECT_EQ(names(set), "plain ");
  ASSERT_EQ(set.skipped.size(), 2u);
  EXPECT_EQ(set.skipped[0].file, dir.path() + "/charts/gpu");
  EXPECT_EQ(set.skipped[0].reason, NotAnObject::kHelmChart);
  EXPECT_EQ(set.skipped[1].file, dir.path() + "/charts/gpu");
}

// --exclude: globs on the path below the folder given (`*` crossing `/`) and on the name; an
// excluded folder is not walked; a file given itself is matched as given, and a path left with
// nothing to read is still "no manifests found".
TEST(ManifestReaderTest, ExcludeGlobsOnRelativePathAndName) {
  TempDir dir;
  dir.write("a/keep.yaml", pod("keep"));
  dir.write("a/drop-patch.yaml", pod("by-name"));
  dir.write("b/c/deep.yaml", pod("by-path"));
  dir.write("vendor/x.yaml", pod("by-folder"));
  TempDir other;
  const std::string given = other.write("given.yaml", pod("given"));
  std::istringstream no_input;
  const ManifestSet set =
      read_manifests({ManifestPath{dir.path(), true}, ManifestPath{given, true}}, no_input,
                     ReadOptions{{}, {"*-patch.yaml", "b/*/deep.yaml", "vendor", "given.yaml"}});
  EXPECT_EQ(names(set), "keep ");
  ASSERT_EQ(set.errors.size(), 1u);
  EXPECT_EQ(set.errors[0].to_string(), given + ": no manifests found in " + given + " [io_error]");
}

// Not recursive (kubectl's -f without -R): a folder's own files only.
TEST(ManifestReaderTest, NonRecursiveReadsTheFolderItself) {
  TempDir dir;
  dir.write("top.yaml", pod("top"));
  dir.write("sub/below.yaml", pod("below"));
  std::istringstream no_input;
  EXPECT_EQ(names(read_manifests({ManifestPath{dir.path(), false}}, no_input)), "top ");
  EXPECT_EQ(names(read_manifests({ManifestPath{dir.path(), true}}, no_input)), "below top ");
}

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
