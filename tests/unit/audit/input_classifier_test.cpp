#include "topoguard/audit/input_classifier.h"

#include <gtest/gtest.h>

#include "note_name.h"

namespace topoguard::audit {
namespace {

struct TextCase {
  std::string_view note;
  std::string_view text;
  bool helm;
};

void PrintTo(const TextCase& c, std::ostream* os) { *os << c.note; }

class HelmTemplateActionTest : public ::testing::TestWithParam<TextCase> {};

// Helm's template actions read the chart (its built-in objects, or other templates); other
// `{{ }}` text that tools keep inside YAML strings is not a Helm template.
TEST_P(HelmTemplateActionTest, RecognisesActionsThatReadTheChart) {
  EXPECT_EQ(holds_helm_template_action(GetParam().text), GetParam().helm);
}

INSTANTIATE_TEST_SUITE_P(
    Texts, HelmTemplateActionTest,
    ::testing::Values(
        TextCase{"values", "replicas: {{ .Values.replicas }}\n", true},
        TextCase{"release_with_trim", "name: {{- .Release.Name -}}-gpu\n", true},
        TextCase{"root_variable", "x: {{ $.Chart.Name }}\n", true},
        TextCase{"builtin_inside_if", "{{- if .Capabilities.APIVersions.Has \"x\" }}\n", true},
        TextCase{"include_first", "labels: {{ include \"chart.labels\" . | nindent 4 }}\n", true},
        TextCase{"define_first", "{{- define \"chart.name\" -}}x{{- end }}\n", true},
        TextCase{"tpl_first", "a: {{ tpl .x . }}\n", true},
        TextCase{"prometheus_labels", "summary: '{{ $labels.pod }} {{ $value | humanize }}'\n",
                 false},
        TextCase{"argo_parameters", "args: ['{{inputs.parameters.message}}']\n", false},
        TextCase{"field_named_like_builtin", "a: '{{ $x.Values }}'\n", false},
        TextCase{"longer_identifier", "a: '{{ .ValuesFile }}'\n", false},
        TextCase{"included_word_not_first", "a: '{{ $include }}'\n", false},
        TextCase{"unclosed", "a: '{{ .Values'\n", false},
        TextCase{"no_braces", "apiVersion: v1\nkind: Pod\n", false}),
    topoguard::testing::NoteName());

struct DocumentCase {
  std::string_view note;
  Json document;
  bool json_patch;
  bool kustomize;
  bool names_type;
};

void PrintTo(const DocumentCase& c, std::ostream* os) { *os << c.note; }

class DocumentClassTest : public ::testing::TestWithParam<DocumentCase> {};

TEST_P(DocumentClassTest, ClassifiesDocuments) {
  const DocumentCase& c = GetParam();
  EXPECT_EQ(is_json_patch(c.document), c.json_patch);
  EXPECT_EQ(is_kustomize_object(c.document), c.kustomize);
  EXPECT_EQ(names_api_version_or_kind(c.document), c.names_type);
}

INSTANTIATE_TEST_SUITE_P(
    Documents, DocumentClassTest,
    ::testing::Values(
        DocumentCase{"json_patch",
                     Json::parse(R"([{"op": "add", "path": "/a", "value": 1},
                                     {"op": "remove", "path": "/b"}])"),
                     true, false, false},
        DocumentCase{"empty_array_is_no_patch", Json::array(), false, false, false},
        DocumentCase{"array_with_one_non_operation",
                     Json::parse(R"([{"op": "add", "path": "/a"}, {"name": "x"}])"), false, false,
                     false},
        DocumentCase{"op_not_a_string", Json::parse(R"([{"op": 1, "path": "/a"}])"), false, false,
                     false},
        DocumentCase{"kustomization",
                     Json::parse(R"({"apiVersion": "kustomize.config.k8s.io/v1beta1",
                                     "kind": "Kustomization"})"),
                     false, true, true},
        DocumentCase{"kustomize_component",
                     Json::parse(R"({"apiVersion": "kustomize.config.k8s.io/v1alpha1",
                                     "kind": "Component"})"),
                     false, true, true},
        DocumentCase{"pod", Json::parse(R"({"apiVersion": "v1", "kind": "Pod"})"), false, false,
                     true},
        DocumentCase{"kind_only", Json::parse(R"({"kind": "Pod"})"), false, false, true},
        DocumentCase{"values", Json::parse(R"({"replicas": 3, "image": {"tag": "x"}})"), false,
                     false, false}),
    topoguard::testing::NoteName());

TEST(KustomizationTest, FileNamesAreKustomizes) {
  EXPECT_TRUE(is_kustomization_file_name("kustomization.yaml"));
  EXPECT_TRUE(is_kustomization_file_name("kustomization.yml"));
  EXPECT_TRUE(is_kustomization_file_name("Kustomization"));
  EXPECT_FALSE(is_kustomization_file_name("kustomization.json"));
  EXPECT_FALSE(is_kustomization_file_name("my-kustomization.yaml"));
}

// Every way a kustomization names a patch file; inline patches (text over lines) are no files.
TEST(KustomizationTest, PatchPathsOfEveryField) {
  const Json kustomization = Json::parse(R"({
    "patches": [{"path": "a.yaml", "target": {"kind": "Deployment"}}, {"patch": "- op: add"}],
    "patchesJson6902": [{"path": "b.yaml"}],
    "patchesStrategicMerge": ["c.yaml", "apiVersion: v1\nkind: Pod\n"]
  })");
  EXPECT_EQ(kustomization_patch_paths(kustomization),
            (std::vector<std::string>{"a.yaml", "b.yaml", "c.yaml"}));
  EXPECT_TRUE(kustomization_patch_paths(Json::array()).empty());
}

// A note names where, what and the command that audits what the input builds.
TEST(SkippedInputTest, NoteNamesTheKustomizationsFolder) {
  EXPECT_EQ(skipped_input_text(SkippedInput{"deploy/base/kustomization.yaml", 0,
                                            NotAnObject::kKustomization}),
            "deploy/base/kustomization.yaml: skipped, not a Kubernetes object: a kustomization; "
            "to audit what it builds: kubectl kustomize deploy/base | topoguard audit -");
  EXPECT_EQ(skipped_input_text(SkippedInput{"p.yaml", 3, NotAnObject::kJsonPatch}),
            "p.yaml:3: skipped, not a Kubernetes object: " +
                std::string(not_an_object_description(NotAnObject::kJsonPatch)));
}

}  // namespace
}  // namespace topoguard::audit
