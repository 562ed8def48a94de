#include "topoguard/audit/namespace_labels.h"

#include <utility>

#include "topoguard/k8s/object_name.h"

namespace topoguard::audit {

namespace {

// Builds Namespace objects from one parsed document, each error at its line.
class NamespaceCollector {
 public:
  NamespaceCollector(const std::string& file, const LineIndex& lines, int first_line,
                     NamespaceLabels& out)
      : file_(file), lines_(lines), first_line_(first_line), out_(out) {}

  // A Namespace, a List of them, or the map form.
  void document(const Json& value) {
    if (!value.is_object()) {
      fail(ErrorCode::kWrongType, "",
           std::string("must be a Namespace, a List of them or a map of namespace name to "
                       "labels, got ") +
               json_type_name(value));
      return;
    }
    const Json* kind = member(value, "kind");
    if (kind == nullptr || !kind->is_string()) {
      // A namespace may be called "kind", but its labels are a mapping, never a string.
      map(value, "");
      return;
    }
    const std::string_view kind_name = kind->get_ref<const std::string&>();
    if (kind_name == "List" || kind_name == "NamespaceList") {
      list(value);
    } else {
      object(value, "");
    }
  }

  // name: {label: value}, at `pointer`.
  void map(const Json& value, const std::string& pointer) {
    if (!value.is_object()) {
      fail(ErrorCode::kWrongType, pointer,
           std::string("must map namespace names to labels, got ") + json_type_name(value));
      return;
    }
    for (const auto& [name, labels] : value.items()) {
      add(name, labels, append_pointer(pointer, name), append_pointer(pointer, name));
    }
  }

 private:
  void list(const Json& value) {
    if (string_member_view(value, "apiVersion") != "v1") {
      fail(ErrorCode::kInvalidValue, "/apiVersion", "a List of Namespaces has apiVersion v1");
      return;
    }
    const Json* items = member(value, "items");
    if (items == nullptr || !items->is_array()) {
      fail(items == nullptr ? ErrorCode::kMissingField : ErrorCode::kWrongType, "/items",
           "a List holds its Namespaces in the list `items`");
      return;
    }
    for (std::size_t i = 0; i < items->size(); ++i) {
      const std::string pointer = append_pointer("/items", i);
      if (!(*items)[i].is_object()) {
        fail(ErrorCode::kWrongType, pointer,
             std::string("must be a Namespace, got ") + json_type_name((*items)[i]));
        continue;
      }
      object((*items)[i], pointer);
    }
  }

  // A Namespace object at `pointer`.
  void object(const Json& value, const std::string& pointer) {
    if (string_member_view(value, "apiVersion") != "v1" ||
        string_member_view(value, "kind") != "Namespace") {
      fail(ErrorCode::kInvalidValue, append_pointer(pointer, "kind"),
           "must be a Namespace (apiVersion v1), got " +
               std::string(string_member_view(value, "apiVersion")) + " " +
               std::string(string_member_view(value, "kind")));
      return;
    }
    const Json* metadata = member(value, "metadata");
    const std::string metadata_pointer = append_pointer(pointer, "metadata");
    const Json* name = metadata != nullptr ? member(*metadata, "name") : nullptr;
    if (name == nullptr || !name->is_string() || name->get_ref<const std::string&>().empty()) {
      fail(ErrorCode::kMissingField, append_pointer(metadata_pointer, "name"),
           "a Namespace needs its name");
      return;
    }
    const Json* labels = member(*metadata, "labels");
    add(name->get<std::string>(), labels != nullptr ? *labels : Json(),
        append_pointer(metadata_pointer, "name"), append_pointer(metadata_pointer, "labels"));
  }

  // The Namespace `name` with `labels` (null: none); its name's field at `name_pointer`.
  void add(const std::string& name, const Json& labels, const std::string& name_pointer,
           const std::string& labels_pointer) {
    Json namespace_object = {{"apiVersion", "v1"},
                             {"kind", "Namespace"},
                             {"metadata", {{"name", name}, {"labels", Json::object()}}}};
    if (const std::vector<k8s::NameProblem> problems =
            k8s::invalid_metadata_names(namespace_object);
        !problems.empty()) {
      fail(ErrorCode::kInvalidValue, name_pointer, problems.front().message);
      return;
    }
    if (!labels.is_null() && !labels.is_object()) {
      fail(ErrorCode::kWrongType, labels_pointer,
           std::string("labels must be a mapping of label to value, got ") +
               json_type_name(labels));
      return;
    }
    bool valid = true;
    if (labels.is_object()) {
      for (const auto& [key, value] : labels.items()) {
        if (!value.is_string()) {
          // The API server keeps label values as strings: `tier: 1` must be `tier: "1"`.
          fail(ErrorCode::kWrongType, append_pointer(labels_pointer, key),
               std::string("a label value must be a string (quote it), got ") +
                   json_type_name(value));
          valid = false;
        }
      }
    }
    if (valid) {
      if (labels.is_object()) {
        namespace_object["metadata"]["labels"] = labels;
      }
      out_.namespaces.push_back(std::move(namespace_object));
    }
  }

  void fail(ErrorCode code, const std::string& pointer, std::string message) {
    const int line = pointer.empty() ? first_line_ : lines_.line_of(pointer);
    out_.errors.push_back(
        Error{code, std::move(message), SourceLocation{file_, line > 0 ? line : first_line_,
                                                       pointer}});
  }

  const std::string& file_;
  const LineIndex& lines_;
  int first_line_;
  NamespaceLabels& out_;
};

}  // namespace

NamespaceLabels parse_namespace_labels(std::string_view text, const std::string& file) {
  NamespaceLabels labels;
  YamlStream stream = parse_yaml_stream(text, file);
  labels.errors = std::move(stream.errors);
  for (const YamlDocument& document : stream.documents) {
    NamespaceCollector(file, document.lines, document.first_line, labels)
        .document(document.value);
  }
  if (labels.namespaces.empty() && labels.errors.empty()) {
    labels.errors.push_back(Error{ErrorCode::kMissingField,
                                  "holds no Namespace: give Namespace objects or a map of "
                                  "namespace name to labels",
                                  SourceLocation{file, 0, ""}});
  }
  return labels;
}

NamespaceLabels namespaces_from_map(const Json& map, const std::string& pointer,
                                    const LineIndex& lines, const std::string& file) {
  NamespaceLabels labels;
  NamespaceCollector(file, lines, lines.line_of(pointer), labels).map(map, pointer);
  return labels;
}

NamespaceLabels read_namespace_labels(const std::string& path) {
  Result<std::string> text = read_text_file(path, kMaxNamespaceLabelsFileBytes);
  if (!text) {
    return NamespaceLabels{{}, {text.error()}};
  }
  return parse_namespace_labels(*text, path);
}

}  // namespace topoguard::audit
