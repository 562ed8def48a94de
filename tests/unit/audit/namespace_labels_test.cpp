// --namespace-labels files: Namespace objects (documents, a v1 List) or a map of name to labels,
// each turned into a Namespace holding only name and labels; every error at file, line, field.
#include "topoguard/audit/namespace_labels.h"

#include <gtest/gtest.h>

#include "note_name.h"

namespace topoguard::audit {
namespace {

struct LabelsCase {
  std::string_view note;
  std::string text;
  // name -> labels of the namespaces read, as JSON text, in order
  std::vector<std::pair<std::string, std::string>> namespaces;
  std::string error;  // Error::to_string() of the first error, "" for none
};

void PrintTo(const LabelsCase& c, std::ostream* os) { *os << c.note; }

class NamespaceLabelsTest : public ::testing::TestWithParam<LabelsCase> {};

TEST_P(NamespaceLabelsTest, ReadsNamespacesOrSaysWhereNot) {
  const LabelsCase& c = GetParam();
  const NamespaceLabels labels = parse_namespace_labels(c.text, "ns.yaml");
  if (c.error.empty()) {
    EXPECT_TRUE(labels.errors.empty()) << labels.errors.front().to_string();
  } else {
    ASSERT_FALSE(labels.errors.empty());
    EXPECT_EQ(labels.errors.front().to_string(), c.error);
  }
  ASSERT_EQ(labels.namespaces.size(), c.namespaces.size());
  for (std::size_t i = 0; i < c.namespaces.size(); ++i) {
    const Json& namespace_object = labels.namespaces[i];
    EXPECT_EQ(string_member_view(namespace_object, "apiVersion"), "v1");
    EXPECT_EQ(string_member_view(namespace_object, "kind"), "Namespace");
    EXPECT_EQ(namespace_object["metadata"]["name"], c.namespaces[i].first);
    EXPECT_EQ(namespace_object["metadata"]["labels"], Json::parse(c.namespaces[i].second));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Forms, NamespaceLabelsTest,
    ::testing::Values(
        LabelsCase{"map", "prod-a: {tier: prod}\nsandbox: {}\nbare:\n",
                   {{"prod-a", R"({"tier":"prod"})"}, {"sandbox", "{}"}, {"bare", "{}"}}, ""},
        LabelsCase{"a_namespace_called_kind", "kind: {tier: prod}\n",
                   {{"kind", R"({"tier":"prod"})"}}, ""},
        LabelsCase{"namespace_documents",
                   "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n  labels: {x: y}\n"
                   "spec: {finalizers: [kubernetes]}\n---\n"
                   R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"b"}})"
                   "\n",
                   {{"a", R"({"x":"y"})"}, {"b", "{}"}}, ""},
        LabelsCase{"kubectl_list",
                   "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Namespace\n"
                   "  metadata: {name: a, labels: {kubernetes.io/metadata.name: a}}\n"
                   "metadata: {resourceVersion: \"\"}\n",
                   {{"a", R"({"kubernetes.io/metadata.name":"a"})"}}, ""},
        LabelsCase{"namespace_list_kind",
                   "apiVersion: v1\nkind: NamespaceList\nitems:\n- apiVersion: v1\n"
                   "  kind: Namespace\n  metadata: {name: a}\n",
                   {{"a", "{}"}}, ""},
        LabelsCase{"label_value_not_a_string", "a:\n  tier: prod\n  generation: 5\n",
                   {},
                   "ns.yaml:3: /a/generation: a label value must be a string (quote it), got "
                   "integer [wrong_type]"},
        LabelsCase{"labels_not_a_mapping", "a: [tier]\n", {},
                   "ns.yaml:1: /a: labels must be a mapping of label to value, got array "
                   "[wrong_type]"},
        LabelsCase{"bad_name", "Prod_A: {tier: prod}\nok: {}\n", {{"ok", "{}"}},
                   "ns.yaml:1: /Prod_A: Invalid value: "
                   "\"Prod_A\": a lowercase RFC 1123 label must consist of lower case "
                   "alphanumeric characters or '-', and must start and end with an alphanumeric "
                   "character (e.g. 'my-name',  or '123-abc', regex used for validation is "
                   "'[a-z0-9]([-a-z0-9]*[a-z0-9])?') [invalid_value]"},
        LabelsCase{"another_kind", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n", {},
                   "ns.yaml:2: /kind: must be a Namespace (apiVersion v1), got v1 Pod "
                   "[invalid_value]"},
        LabelsCase{"list_item_of_another_kind",
                   "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Namespace\n"
                   "  metadata: {name: a}\n- apiVersion: apps/v1\n  kind: Deployment\n"
                   "  metadata: {name: d}\n",
                   {{"a", "{}"}},
                   "ns.yaml:8: /items/1/kind: must be a Namespace (apiVersion v1), got apps/v1 "
                   "Deployment [invalid_value]"},
        LabelsCase{"namespace_without_name",
                   "apiVersion: v1\nkind: Namespace\nmetadata: {labels: {a: b}}\n", {},
                   "ns.yaml:3: /metadata/name: a Namespace needs its name [missing_field]"},
        LabelsCase{"namespace_labels_not_strings",
                   "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n  labels:\n"
                   "    on: true\n",
                   {},
                   "ns.yaml:6: /metadata/labels/on: a label value must be a string (quote it), "
                   "got boolean [wrong_type]"},
        LabelsCase{"not_a_mapping", "- a\n- b\n", {},
                   "ns.yaml:1: must be a Namespace, a List of them or a map of namespace name "
                   "to labels, got array [wrong_type]"},
        LabelsCase{"empty", "# nothing here\n", {},
                   "ns.yaml: holds no Namespace: give Namespace objects or a map of namespace "
                   "name to labels [missing_field]"},
        LabelsCase{"broken_yaml", "a: {tier: prod\n", {},
                   "ns.yaml:2: YAML: end of map flow not found [invalid_yaml]"}),
    topoguard::testing::NoteName());

// The map form of a document already read (a policy test's `namespaces:`) reports at the lines
// of that document.
TEST(NamespacesFromMapTest, ReportsAtTheDocumentsLines) {
  const YamlStream stream =
      parse_yaml_stream("kind: AlignmentPolicyTest\nnamespaces:\n  ml: {tier: prod}\n  bad: 7\n",
                        "test.yaml");
  ASSERT_EQ(stream.documents.size(), 1u);
  const YamlDocument& document = stream.documents.front();
  const NamespaceLabels labels = namespaces_from_map(document.value["namespaces"], "/namespaces",
                                                     document.lines, "test.yaml");
  ASSERT_EQ(labels.namespaces.size(), 1u);
  EXPECT_EQ(labels.namespaces[0]["metadata"]["labels"]["tier"], "prod");
  ASSERT_EQ(labels.errors.size(), 1u);
  EXPECT_EQ(labels.errors[0].to_string(),
            "test.yaml:4: /namespaces/bad: labels must be a mapping of label to value, got "
            "integer [wrong_type]");
}

// The file is read through the bounded reader: what is not a regular file is an error, not a
// hang.
TEST(ReadNamespaceLabelsTest, RefusesWhatIsNotARegularFile) {
  const NamespaceLabels missing = read_namespace_labels("/nonexistent/namespaces.yaml");
  ASSERT_EQ(missing.errors.size(), 1u);
  EXPECT_EQ(missing.errors[0].code, ErrorCode::kIo);
  const NamespaceLabels device = read_namespace_labels("/dev/zero");
  ASSERT_EQ(device.errors.size(), 1u);
  EXPECT_EQ(device.errors[0].code, ErrorCode::kIo);
}

}  // namespace
}  // namespace topoguard::audit
